#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <blosc.h>
#include <gtest/gtest.h>

#include "codecs/compressor_test_support.h"
#include "codecs/register.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

std::vector<std::byte> from_hex(std::string_view hex) {
  std::vector<std::byte> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::byte>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

const CodecRegistry& registry() {
  static const CodecRegistry r = [] {
    CodecRegistry reg;
    register_blosc_codec(reg);
    return reg;
  }();
  return r;
}

std::shared_ptr<const BytesToBytesCodec> make(const nlohmann::json& entry, const DataType& dtype = DataType::int_(32)) {
  return std::dynamic_pointer_cast<const BytesToBytesCodec>(registry().make_v3(entry, {dtype, 3}));
}

std::shared_ptr<const BytesToBytesCodec> make_v2(const nlohmann::json& entry, const DataType& dtype) {
  return std::dynamic_pointer_cast<const BytesToBytesCodec>(registry().make_v2(entry, {dtype, 2}));
}

// The values numcodecs compressed below: int32 (i * 7) % 23 - 5 for i in 0..63, little-endian.
std::vector<std::int32_t> reference_values() {
  std::vector<std::int32_t> v(64);
  for (int i = 0; i < 64; ++i) v[i] = (i * 7) % 23 - 5;
  return v;
}

ByteView bytes_of(const std::vector<std::int32_t>& v) { return {reinterpret_cast<const std::byte*>(v.data()), v.size() * 4}; }

const ChunkSpec kSpec{{64}, DataType::int_(32), FillValue::zero(DataType::int_(32))};

struct Vector {
  const char* cname;
  const char* shuffle;
  std::string hex;
};

// numcodecs 0.16.6 (bundled c-blosc 1.21.7): Blosc(cname, clevel=5, shuffle, blocksize=0).encode(values).
const std::vector<Vector>& numcodecs_vectors() {
  static const std::vector<Vector> vectors = {
    {"blosclz", "noshuffle",
     "02011204000100000001000010010000fbffffff02000000090000001000000000000000070000000e000000feffffff"
     "050000000c000000fcffffff030000000a0000001100000001000000080000000f000000ffffffff060000000d000000"
     "fdffffff040000000b000000fbffffff02000000090000001000000000000000070000000e000000feffffff05000000"
     "0c000000fcffffff030000000a0000001100000001000000080000000f000000ffffffff060000000d000000fdffffff"
     "040000000b000000fbffffff02000000090000001000000000000000070000000e000000feffffff050000000c000000"
     "fcffffff030000000a0000001100000001000000080000000f000000ffffffff"
    },
    {"blosclz", "shuffle",
     "0201110400010000000100004f000000140000003700000036fb02091000070efe050cfc030a1101080fff060dfd040b"
     "e0201601ff00600000ff60020100006006e0070c0000e01216e0753f0100ff"
    },
    {"blosclz", "bitshuffle",
     "0201140400010000000100005000000014000000380000003f2569db92b46d49dae318c7718ce338c6e0073ff0831ff8"
     "c1c596db62cb6db1e50f89249244124922898104924002492081e0c507012081"
    },
    {"lz4", "noshuffle",
     "0201300400010000000100007f0000001400000067000000ff4dfbffffff020000000900000010000000000000000700"
     "00000e000000feffffff050000000c000000fcffffff030000000a0000001100000001000000080000000f000000ffff"
     "ffff060000000d000000fdffffff040000000b0000005c008c5000ffffffff"
    },
    {"lz4", "shuffle",
     "02013104000100000001000077000000140000005f000000fe1ffb02091000070efe050cfc030a1101080fff060dfd04"
     "0bfb02091000070efe050cfc030a1101080fff060dfd040b2e0021ff00010011ff0300000200020a000f1700160f2900"
     "160154000e2e000e12000126000f1700115000000000ff"
    },
    {"lz4", "bitshuffle",
     "02013404000100000001000073000000140000005b000000ff412569db92b46d49dae318c7718ce338c6e0073ff0831f"
     "f8c1c596db62cb6db1e58924924412492289810492400249208181049240024920818104924002492081810492400249"
     "20818104924002492081280098504002492081"
    },
    {"lz4hc", "noshuffle",
     "0201300400010000000100007c0000001400000064000000e2fbffffff020000000900000010000100ff39070000000e"
     "000000feffffff050000000c000000fcffffff030000000a0000001100000001000000080000000f000000ffffffff06"
     "0000000d000000fdffffff040000000b0000005c008c5000ffffffff"
    },
    {"lz4hc", "shuffle",
     "0201310400010000000100004d0000001400000035000000ff08fb02091000070efe050cfc030a1101080fff060dfd04"
     "0b17001621ff00010039ff00000a000f1700160f4000685000000000ff"
    },
    {"lz4hc", "bitshuffle",
     "02013404000100000001000053000000140000003b000000ff212569db92b46d49dae318c7718ce338c6e0073ff0831f"
     "f8c1c596db62cb6db1e5892492441249228981049240024920810800b8504002492081"
    },
    {"zlib", "noshuffle",
     "02017004000100000001000057000000140000003f000000785ed5cc8709c0000c03b074eff5ffa91da9a05734206c30"
     "e4cccc322206f6f8ae63e5b13572e6d22b397250d0b361ca562edc7a2d27ce1ffc7e01c74c3956"
    },
    {"zlib", "shuffle",
     "0201710400010000000100004a0000001400000032000000785efbcdc429c0c0cef78f95e70f3397202307ff7f36debf"
     "2cdcbf8915fecf0006ffc108c1225a98688534d20f005d883956"
    },
    {"zlib", "bitshuffle",
     "02017404000100000001000055000000140000003d000000785e53cdbc3d694baee7adc712c70b7b1e5b1c7bc06effa1"
     "59fec7c1a3d36e279dceddf8b45365928b90a7526723cb2407264f85c6e14603009fb45251"
    },
    {"zstd", "noshuffle",
     "02019004000100000001000060000000140000004800000028b52ffd600000f5010062850c15e069337b0f00000020b6"
     "f7de7b4b29a594524a29537f8e548807ae547d70e6c50b777e5487039e54890bbe24bcb9511902020048e80b341a8012"
    },
    {"zstd", "shuffle",
     "0201910400010000000100004f000000140000003700000028b52ffd6000006d0100e0fb02091000070efe050cfc030a"
     "1101080fff060dfd040bff00ff000005007d0829d00981961bb80ba7d06c02"
    },
    {"zstd", "bitshuffle",
     "0201940400010000000100005a000000140000004200000028b52ffd600000c5010004032569db92b46d49dae318c771"
     "8ce338c6e0073ff0831ff8c1c596db62cb6db1e5892492441249228981049240024920810100d01c55a0"
    },
  };
  return vectors;
}

TEST(BloscCodec, DecodesNumcodecsOutputForEveryCompressorAndShuffle) {
  const auto expected = reference_values();
  const auto codec = make({{"name", "blosc"}, {"configuration", {{"cname", "lz4"}, {"clevel", 1}, {"shuffle", "noshuffle"}}}});
  ASSERT_EQ(numcodecs_vectors().size(), 15u);
  for (const auto& v : numcodecs_vectors()) {
    SCOPED_TRACE(std::string(v.cname) + "/" + v.shuffle);
    const auto encoded = from_hex(v.hex);
    // The codec's own settings do not matter for decoding: the header says everything.
    Buffer decoded = codec->decode(encoded, {256, true}, kSpec);
    ASSERT_EQ(decoded.size(), 256u);
    EXPECT_EQ(std::memcmp(decoded.data(), expected.data(), 256), 0);
    // A ceiling works too.
    EXPECT_EQ(codec->decode(encoded, {1000, false}, kSpec).size(), 256u);
  }
}

TEST(BloscCodec, RoundTripsEveryCompressorAndShuffleWithTheRightHeader) {
  const auto values = reference_values();
  for (const char* cname : {"blosclz", "lz4", "lz4hc", "zlib", "zstd"}) {
    for (const char* shuffle : {"noshuffle", "shuffle", "bitshuffle"}) {
      SCOPED_TRACE(std::string(cname) + "/" + shuffle);
      const auto codec = make({{"name", "blosc"},
                               {"configuration",
                                {{"cname", cname}, {"clevel", 5}, {"shuffle", shuffle}, {"typesize", 4}, {"blocksize", 0}}}});
      Buffer encoded = codec->encode(bytes_of(values), kSpec);
      ASSERT_GE(encoded.size(), 16u);
      const auto* header = reinterpret_cast<const std::uint8_t*>(encoded.data());
      EXPECT_EQ(header[0], 2);  // blosc format version
      EXPECT_EQ(header[3], 4);  // typesize
      const int flags = header[2];
      EXPECT_EQ((flags & BLOSC_DOSHUFFLE) != 0, std::string(shuffle) == "shuffle");
      EXPECT_EQ((flags & BLOSC_DOBITSHUFFLE) != 0, std::string(shuffle) == "bitshuffle");
      Buffer decoded = codec->decode(encoded.view(), {256, true}, kSpec);
      ASSERT_EQ(decoded.size(), 256u);
      EXPECT_EQ(std::memcmp(decoded.data(), values.data(), 256), 0);
    }
  }
}

TEST(BloscCodec, BlosclzOutputMatchesNumcodecsByteForByte) {
  // blosclz lives inside c-blosc itself, so its bytes do not depend on the system's lz4,
  // zlib or zstd versions (those matched numcodecs too when this was written).
  const auto values = reference_values();
  for (const auto& v : numcodecs_vectors()) {
    if (std::string(v.cname) != "blosclz") continue;
    SCOPED_TRACE(v.shuffle);
    const auto codec = make({{"name", "blosc"},
                             {"configuration", {{"cname", "blosclz"}, {"clevel", 5}, {"shuffle", v.shuffle}, {"typesize", 4}}}});
    Buffer encoded = codec->encode(bytes_of(values), kSpec);
    EXPECT_EQ(std::vector<std::byte>(encoded.view().begin(), encoded.view().end()), from_hex(v.hex));
  }
}

TEST(BloscCodec, TypesizeComesFromTheHeaderNotTheMetadata) {
  // int16 values (i * 3 - 20, i < 200) compressed by numcodecs with typesize 4, as in
  // zarrita.js' 1d.contiguous.blosc.i2 fixture.
  const auto encoded = from_hex(
    "0201310490010000900100001301000014000000fb000000ff5eecf2f8fe040a10161c22282e343a40464c52585e646a"
    "70767c82888e949aa0a6acb2b8bec4cad0d6dce2e8eef4fa00060c12181e242a30363c42484e545a60666c72787e848a"
    "90969ca2a8aeb4bac0c6ccd2d8dee4eaf0f6fc02080e141a20262c32383effffffff00000000000500121f0101001716"
    "020100ff58eff5fb01070d13191f252b31373d43494f555b61676d73797f858b91979da3a9afb5bbc1c7cdd3d9dfe5eb"
    "f1f7fd03090f151b21272d33393f454b51575d63696f757b81878d93999fa5abb1b7bdc3c9cfd5dbe1e7edf3f9ff050b"
    "11171d23292f353b41ffffffc300130102000fc70017c0010202020202020202020202"
  );
  ASSERT_EQ(static_cast<int>(encoded[3]), 4);
  const DataType i2 = DataType::int_(16);
  const ChunkSpec spec{{200}, i2, FillValue::zero(i2)};
  const auto codec = make({{"name", "blosc"},
                           {"configuration", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 2}}}},
                          i2);
  Buffer decoded = codec->decode(encoded, {400, true}, spec);
  ASSERT_EQ(decoded.size(), 400u);
  const auto* values = reinterpret_cast<const std::int16_t*>(decoded.data());
  for (int i = 0; i < 200; ++i) ASSERT_EQ(values[i], i * 3 - 20) << i;
}

TEST(BloscCodec, V3JsonRecordsEveryValueItPicked) {
  auto codec = make("blosc", DataType::float_(64));
  EXPECT_EQ(codec->to_json(), nlohmann::json::parse(R"({"name":"blosc","configuration":
      {"cname":"zstd","clevel":5,"shuffle":"shuffle","typesize":8,"blocksize":0}})"));
  codec = make({{"name", "blosc"}, {"configuration", {{"cname", "lz4"}, {"clevel", 1}}}}, DataType::uint_(8));
  EXPECT_EQ(codec->to_json()["configuration"]["shuffle"], "bitshuffle");
  EXPECT_EQ(codec->to_json()["configuration"]["typesize"], 1);
  // The numcodecs form of a v3 blosc codec.
  codec = make(nlohmann::json::parse(R"({"name":"blosc","configuration":
      {"cname":"lz4hc","clevel":9,"shuffle":"bitshuffle","typesize":2,"blocksize":4096}})"));
  EXPECT_EQ(*codec->to_v2_json(), nlohmann::json::parse(
      R"({"id":"blosc","cname":"lz4hc","clevel":9,"shuffle":2,"blocksize":4096})"));
}

TEST(BloscCodec, V2AutoshuffleFollowsTheItemsize) {
  const nlohmann::json v2 = nlohmann::json::parse(R"({"id":"blosc","cname":"zstd","clevel":3,"shuffle":-1,"blocksize":0})");
  std::vector<std::uint8_t> bytes(800);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i % 200);
  const ByteView input{reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()};

  auto u1 = make_v2(v2, DataType::uint_(8));
  Buffer a = u1->encode(input, {{800}, DataType::uint_(8), {}});
  EXPECT_EQ(static_cast<int>(a.data()[2]) & (BLOSC_DOSHUFFLE | BLOSC_DOBITSHUFFLE), BLOSC_DOBITSHUFFLE);
  EXPECT_EQ(static_cast<int>(a.data()[3]), 1);

  auto i4 = make_v2(v2, DataType::int_(32));
  Buffer b = i4->encode(input, {{200}, DataType::int_(32), {}});
  EXPECT_EQ(static_cast<int>(b.data()[2]) & (BLOSC_DOSHUFFLE | BLOSC_DOBITSHUFFLE), BLOSC_DOSHUFFLE);
  EXPECT_EQ(static_cast<int>(b.data()[3]), 4);
  Buffer back = i4->decode(b.view(), {800, true}, {{200}, DataType::int_(32), {}});
  EXPECT_EQ(std::memcmp(back.data(), bytes.data(), 800), 0);

  // The v2 form is written back as it was read, -1 included.
  EXPECT_EQ(*i4->to_v2_json(), v2);
}

TEST(BloscCodec, V2FormWritesAsTheV3CoreCodecWithEveryValueRecorded) {
  const nlohmann::json v2 = nlohmann::json::parse(R"({"id":"blosc","cname":"zstd","clevel":3,"shuffle":-1,"blocksize":0})");
  // Automatic shuffle: bit shuffle for 1-byte types, byte shuffle otherwise; the type size
  // is the element's where numcodecs recorded none.
  EXPECT_EQ(make_v2(v2, DataType::uint_(8))->to_v3_core_json(DataType::uint_(8)), nlohmann::json::parse(R"(
      {"name":"blosc","configuration":{"cname":"zstd","clevel":3,"shuffle":"bitshuffle","typesize":1,"blocksize":0}})"));
  EXPECT_EQ(make_v2(v2, DataType::int_(32))->to_v3_core_json(DataType::int_(32)), nlohmann::json::parse(R"(
      {"name":"blosc","configuration":{"cname":"zstd","clevel":3,"shuffle":"shuffle","typesize":4,"blocksize":0}})"));
  const nlohmann::json v2_typed =
      nlohmann::json::parse(R"({"id":"blosc","cname":"lz4","clevel":5,"shuffle":0,"blocksize":256,"typesize":2})");
  EXPECT_EQ(make_v2(v2_typed, DataType::int_(32))->to_v3_core_json(DataType::int_(32)), nlohmann::json::parse(R"(
      {"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"noshuffle","typesize":2,"blocksize":256}})"));
  // The v3 codec is already the core one.
  const auto v3 = make(nlohmann::json::parse(R"({"name":"blosc","configuration":{"cname":"lz4","clevel":1,
      "shuffle":"bitshuffle","typesize":4,"blocksize":0}})"));
  EXPECT_EQ(v3->to_v3_core_json(DataType::int_(32)), v3->to_json());
}

TEST(BloscCodec, NumcodecsV3NameUsesNumcodecsKeys) {
  auto codec = make(nlohmann::json::parse(R"({"name":"numcodecs.blosc","configuration":{"cname":"lz4","clevel":3,"shuffle":1}})"));
  EXPECT_EQ(codec->name(), "numcodecs.blosc");
  EXPECT_EQ(codec->to_json(), nlohmann::json::parse(
      R"({"name":"numcodecs.blosc","configuration":{"cname":"lz4","clevel":3,"shuffle":1,"blocksize":0}})"));
  const auto values = reference_values();
  Buffer encoded = codec->encode(bytes_of(values), kSpec);
  EXPECT_EQ(static_cast<int>(encoded.data()[2]) & BLOSC_DOSHUFFLE, BLOSC_DOSHUFFLE);
  // zarr-python writes an empty configuration for numcodecs.blosc(): numcodecs' defaults.
  EXPECT_EQ(make(nlohmann::json::parse(R"({"name":"numcodecs.blosc","configuration":{}})"))->to_json()["configuration"],
            nlohmann::json::parse(R"({"cname":"lz4","clevel":5,"shuffle":1,"blocksize":0})"));
}

TEST(BloscCodec, RejectsBadConfiguration) {
  for (const char* config : {R"({"cname":"lz5"})", R"({"cname":4})", R"({"clevel":10})", R"({"clevel":-1})",
                             R"({"clevel":2.5})", R"({"shuffle":"auto"})", R"({"shuffle":1})", R"({"typesize":0})",
                             R"({"blocksize":-1})", R"({"level":5})", R"({"typesize":18446744073709551615})"}) {
    SCOPED_TRACE(config);
    EXPECT_THROW(make({{"name", "blosc"}, {"configuration", nlohmann::json::parse(config)}}), InvalidArgumentError);
  }
  for (const char* v2 : {R"({"id":"blosc","shuffle":3})", R"({"id":"blosc","shuffle":"shuffle"})",
                         R"({"id":"blosc","cname":"nope"})", R"({"id":"blosc","typesize":0})",
                         R"({"id":"blosc","extra":1})"}) {
    SCOPED_TRACE(v2);
    EXPECT_THROW(make_v2(nlohmann::json::parse(v2), DataType::int_(32)), InvalidArgumentError);
  }
}

TEST(BloscCodec, TruncatedInputIsDataLoss) {
  const auto encoded = from_hex(numcodecs_vectors()[4].hex);  // lz4 / shuffle
  const auto codec = make("blosc");
  for (std::size_t n = 0; n < encoded.size(); ++n) {
    SCOPED_TRACE(n);
    EXPECT_THROW(codec->decode(ByteView(encoded.data(), n), {256, true}, kSpec), DataLossError);
  }
  // Bytes after the end the header gives are ignored.
  auto longer = encoded;
  longer.resize(encoded.size() + 10, std::byte{0x5a});
  EXPECT_EQ(codec->decode(longer, {256, true}, kSpec).size(), 256u);
}

void put_u32(std::vector<std::byte>& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

TEST(BloscCodec, LyingHeadersAreDataLoss) {
  const auto good = from_hex(numcodecs_vectors()[10].hex);  // zlib / shuffle
  const auto codec = make("blosc");

  auto bigger = good;  // claims more decoded bytes than the chunk holds
  put_u32(bigger, 4, 1u << 30);
  EXPECT_THROW(codec->decode(bigger, {256, true}, kSpec), DataLossError);
  EXPECT_THROW(codec->decode(bigger, {1 << 20, false}, kSpec), DataLossError);

  auto smaller = good;  // fewer bytes than expected
  put_u32(smaller, 4, 128);
  EXPECT_THROW(codec->decode(smaller, {256, true}, kSpec), DataLossError);

  auto overlong = good;  // more compressed bytes than are present
  put_u32(overlong, 12, static_cast<std::uint32_t>(good.size() + 1));
  EXPECT_THROW(codec->decode(overlong, {256, true}, kSpec), DataLossError);

  auto huge = good;  // past blosc's own limit
  put_u32(huge, 4, 0xffffffffu);
  EXPECT_THROW(codec->decode(huge, {std::uint64_t{1} << 36, false}, kSpec), DataLossError);

  auto future = good;  // an unknown format version
  future[0] = std::byte{0x7f};
  EXPECT_THROW(codec->decode(future, {256, true}, kSpec), DataLossError);

  auto zero_block = good;  // a block size of zero
  put_u32(zero_block, 8, 0);
  EXPECT_THROW(codec->decode(zero_block, {256, true}, kSpec), DataLossError);
}

TEST(BloscCodec, CorruptPayloadNeverCrashes) {
  // Flip random bytes after the header: the result is the right size or DataLossError.
  std::mt19937 rng(1234);
  const auto codec = make("blosc");
  for (const auto& v : numcodecs_vectors()) {
    const auto good = from_hex(v.hex);
    for (int trial = 0; trial < 200; ++trial) {
      auto bad = good;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        bad[16 + rng() % (bad.size() - 16)] = static_cast<std::byte>(rng() & 0xff);
      }
      try {
        Buffer out = codec->decode(bad, {256, true}, kSpec);
        EXPECT_EQ(out.size(), 256u);
      } catch (const DataLossError&) {
      }
    }
  }
}

TEST(BloscCodec, TypesizesBloscCannotShuffleByStillRoundTrip) {
  // blosc shuffles in units of at most 255 bytes; larger element sizes fall back to 1.
  const DataType s300 = DataType::fixed_bytes(300);
  std::vector<std::uint8_t> data(3000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i % 7);
  const ByteView input{reinterpret_cast<const std::byte*>(data.data()), data.size()};
  const ChunkSpec spec{{10}, s300, FillValue::zero(s300)};
  const auto by_dtype = make("blosc", s300);
  EXPECT_EQ(by_dtype->to_json()["configuration"]["typesize"], 1);
  const auto explicit_size =
      make({{"name", "blosc"}, {"configuration", {{"cname", "lz4"}, {"shuffle", "shuffle"}, {"typesize", 300}}}}, s300);
  for (const auto& codec : {by_dtype, explicit_size}) {
    Buffer encoded = codec->encode(input, spec);
    Buffer decoded = codec->decode(encoded.view(), {3000, true}, spec);
    ASSERT_EQ(decoded.size(), 3000u);
    EXPECT_EQ(std::memcmp(decoded.data(), data.data(), 3000), 0);
  }
}

// int32 values that compress, `n` of them, as bytes.
std::vector<std::byte> smooth_int32s(std::size_t n) {
  std::vector<std::byte> out(n * 4);
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = static_cast<std::int32_t>(1000 + (i / 50) % 300 + (i * 2654435761u >> 29));
    std::memcpy(out.data() + 4 * i, &v, 4);
  }
  return out;
}

nlohmann::json blosc_config(const char* cname, const char* shuffle, int clevel, int blocksize) {
  return {{"name", "blosc"},
          {"configuration",
           {{"cname", cname}, {"clevel", clevel}, {"shuffle", shuffle}, {"typesize", 4}, {"blocksize", blocksize}}}};
}

TEST(BloscCodec, DecodesInPiecesOfAnySize) {
  // Blocks of 64 KiB asked for; sizes with and without a shorter last block; a frame stored
  // as a plain copy (clevel 0).
  for (const nlohmann::json& entry : {blosc_config("lz4", "shuffle", 5, 65536), blosc_config("zstd", "bitshuffle", 3, 65536),
                                      blosc_config("blosclz", "noshuffle", 5, 65536), blosc_config("lz4", "shuffle", 0, 65536)}) {
    const auto codec = make(entry);
    for (const std::size_t n : {std::size_t{1} << 18, (std::size_t{1} << 18) + 3001}) {
      SCOPED_TRACE(entry.dump() + " " + std::to_string(n) + " values");
      const auto data = smooth_int32s(n);
      const Buffer encoded = codec->encode(data, kSpec);
      auto reader = codec->decode_pieces(testing::in_memory(encoded.view()), data.size(), kSpec);
      ASSERT_NE(reader, nullptr);
      std::size_t nbytes = 0, cbytes = 0, blocksize = 0;
      blosc_cbuffer_sizes(encoded.data(), &nbytes, &cbytes, &blocksize);  // blosc may enlarge the blocks asked for
      EXPECT_EQ(reader->granularity(), blocksize);
      for (const std::size_t piece : {std::size_t{1}, std::size_t{4}, std::size_t{1000}, std::size_t{65536},
                                      std::size_t{3 * 65536 + 5}, data.size()}) {
        SCOPED_TRACE(piece);
        ASSERT_TRUE(testing::expect_pieces_agree(*codec, encoded.view(), data.size(), piece));
      }
    }
  }
}

TEST(BloscCodec, PiecesReadFromAStoreHoldAFewBlocksAtATime) {
  const auto codec = make(blosc_config("zstd", "shuffle", 3, 16384));  // blocks of 16 KiB
  const auto data = smooth_int32s(1 << 18);                             // 64 of them
  const Buffer encoded = codec->encode(data, kSpec);
  const auto source = std::make_shared<testing::StreamedSource>(encoded.view());
  auto reader = codec->decode_pieces(source, data.size(), kSpec);
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(testing::read_in_pieces(*reader, data.size(), 65536), data);
  // The header and block offsets once, then the bytes of four blocks (one piece) at a time.
  EXPECT_LE(source->largest_read, 2 * 65536u);
  EXPECT_GE(source->reads, 1 + data.size() / 65536);
}

TEST(BloscCodec, PiecesRefuseWhatDecodeIntoRejects) {
  const auto codec = make(blosc_config("lz4", "shuffle", 5, 16384));
  const auto data = smooth_int32s(100000);
  const Buffer good = codec->encode(data, kSpec);
  // The header's errors are decode_into's.
  for (const bool streamed : {false, true}) {
    auto source = [&](ByteView bytes) -> std::shared_ptr<ByteSource> {
      if (streamed) return std::make_shared<testing::StreamedSource>(bytes);
      return testing::in_memory(bytes);
    };
    testing::expect_error<DataLossError>([&] { codec->decode_pieces(source(good.view().first(10)), data.size(), kSpec); },
                                         "shorter than the 16-byte blosc header");
    testing::expect_error<DataLossError>([&] { codec->decode_pieces(source(good.view()), data.size() + 4, kSpec); },
                                         "decompresses to");
    testing::expect_error<DataLossError>(
        [&] { codec->decode_pieces(source(good.view().first(good.size() - 1)), data.size(), kSpec); },
        "compressed bytes, but only");
  }
  // Reading past the end, or finishing before it, is refused.
  auto reader = codec->decode_pieces(testing::in_memory(good.view()), data.size(), kSpec);
  std::vector<std::byte> out(data.size() + 4);
  EXPECT_FALSE(reader->read(MutableByteView(out)));
  EXPECT_TRUE(reader->read(MutableByteView(out).first(1000)));
  EXPECT_FALSE(reader->finish());
  // Corrupt blocks: whatever decode_into makes of them, pieces agree (or refuse).
  std::mt19937 rng(99);
  for (int trial = 0; trial < 300; ++trial) {
    auto bad = std::vector<std::byte>(good.view().begin(), good.view().end());
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bad[16 + rng() % (bad.size() - 16)] = static_cast<std::byte>(rng() & 0xff);
    testing::expect_pieces_agree(*codec, bad, data.size(), 10000);
  }
  // The block offsets read from a store: out of order, or pointing into another block.
  const std::size_t blocks = (data.size() + 16383) / 16384;
  for (int trial = 0; trial < 200; ++trial) {
    auto bad = std::vector<std::byte>(good.view().begin(), good.view().end());
    bad[16 + rng() % (4 * blocks)] = static_cast<std::byte>(rng() & 0xff);
    testing::expect_pieces_agree(*codec, bad, data.size(), 10000);
  }
  auto swapped = std::vector<std::byte>(good.view().begin(), good.view().end());
  std::swap_ranges(swapped.begin() + 20, swapped.begin() + 24, swapped.begin() + 24);
  EXPECT_EQ(codec->decode_pieces(std::make_shared<testing::StreamedSource>(swapped), data.size(), kSpec), nullptr);
  // Sizes that are not whole items of the header's typesize go to decode_into.
  const auto odd = std::vector<std::byte>(data.begin(), data.begin() + 4001);
  const Buffer odd_encoded = codec->encode(odd, kSpec);
  EXPECT_EQ(codec->decode_pieces(testing::in_memory(odd_encoded.view()), odd.size(), kSpec), nullptr);
}

TEST(BloscCodec, EmptyInputRoundTrips) {
  const auto codec = make("blosc");
  const ChunkSpec empty{{0}, DataType::int_(32), FillValue::zero(DataType::int_(32))};
  Buffer encoded = codec->encode(ByteView{}, empty);
  EXPECT_EQ(encoded.size(), 16u);
  EXPECT_EQ(codec->decode(encoded.view(), {0, true}, empty).size(), 0u);
}

}  // namespace
}  // namespace zarrkit
