#include <gtest/gtest.h>
#include <zlib.h>

#include "codecs/compressor_test_support.h"
#include "codecs/register.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

// Reference encodings of parts of reference_sample(), made with numcodecs 0.16 / Python 3.11:
// LZMA().encode(sample): xz, CRC-64, preset 6
constexpr std::string_view kXz =
    "fd377a585a000004e6d6b4460200210116000000742fe5a3e00347012d5d003d184abdf76f0cf0a72f374ee7e0d51dfe"
    "8606fbad60d366267f1696b0ed7735505fb31cb9543b626769a1f822c0ee90d9a2103886a7470635d5279c5d06cc993a"
    "e18e34c8333bbeed113c20e239d1eb04429e3124de47fba6fcfa3f8436a31db88d261ead9cf1d940d4480c38f63ff28c"
    "d8847f4de9b3d61a1d34ea734930bd52b655eb6f4f214d1a2813c47cea97c2d46d178fe34fab1785314cae29813bf67e"
    "1e174e1538775d8142685444ade64949cdaaf784f14214bc0a21b07db3c85cbf18dbc090552e352fed44991dc6449eca"
    "9d41ec1d4af147bea7956e085775b389354c54f112ea67dad45d67e8bef8bc348fc3183f2d328f3d3d1213755fe043c8"
    "9b0ff983bf91c51cf688e7d18362e57c29eeb3d8fa6873c8f29dcf177f0bbfd79c22f265e15db35852cc280000000000"
    "26dae6ec1b7e4d910001c902c80600009a720638b1c467fb020000000004595a";
// LZMA(format=2).encode(sample): lzma-alone
constexpr std::string_view kAlone =
    "5d00008000ffffffffffffffff003d184abdf76f0cf0a72f374ee7e0d51dfe8606fbad60d366267f1696b0ed7735505f"
    "b31cb9543b626769a1f822c0ee90d9a2103886a7470635d5279c5d06cc993ae18e34c8333bbeed113c20e239d1eb0442"
    "9e3124de47fba6fcfa3f8436a31db88d261ead9cf1d940d4480c38f63ff28cd8847f4de9b3d61a1d34ea734930bd52b6"
    "55eb6f4f214d1a2813c47cea97c2d46d178fe34fab1785314cae29813bf67e1e174e1538775d8142685444ade64949cd"
    "aaf784f14214bc0a21b07db3c85cbf18dbc090552e352fed44991dc6449eca9d41ec1d4af147bea7956e085775b38935"
    "4c54f112ea67dad45d67e8bef8bc348fc3183f2d328f3d3d1213755fe043c89b0ff983bf91c51cf688e7d18362e57c29"
    "eeb3d8fa6873c8f29dcf177f0bbfd79c22f265e15db35859ae59e0dffc968c20";
// LZMA(format=3, filters=[{"id": lzma.FILTER_DELTA, "dist": 4}, {"id": lzma.FILTER_LZMA2, "preset": 1}]).encode(sample)
constexpr std::string_view kRaw =
    "e00347011b5d003d184aabfb40cd6dc4b252423a2789bf03ad1b1ea9a305341d9843f551b714fa380662e0b0f7bf9957"
    "c536e070b406827d5b2a10efe257d151285032d41bb41f448714feea652aeec4c3798ccf466deb36b6fa58c99d3c7d9e"
    "e65a4c09f34fd78526c3ba899186d50b8b910bb9920f5df56455344afaf5480ceb4d3d1c855f755b4bd0451968cfd149"
    "3dddd2b1dbf5befe5535a2dea520331beddb6583695e76b707c9bac01a1c3b639e39e73b49b9642c6cc06f683a379221"
    "eeab1b64c06157ae73e2815f8ca68a4115361834198d04fc0519d81e5f3b240ed7fa2389249d1c6e2dc523b9101529c3"
    "3fb186306f2012564845e78bd01f400d013ed568f02a821a39bd1a006eec8e26c6e37c1b3ad747b4ee1cf60d68078568"
    "7c0000";
// LZMA(check=1, preset=1).encode(sample[:200]): xz with CRC-32
constexpr std::string_view kXzCrc32 =
    "fd377a585a0000016922de360200210110000000a8708e86e000c700215d003d184aabf53a16db24113658ddfd79d7fb"
    "73247d1aeec6857c566ad9c4a0644000000000007fb96239000139c801000000c746f9813e300d8b020000000001595a";
// LZMA(format=3, filters=[{"id": lzma.FILTER_LZMA1, "preset": 1, "dict_size": 65536}]).encode(sample[:200])
constexpr std::string_view kRawLzma1 =
    "003d184aabf53a16db24113658ddfd79d7fb73247d1aeec6857c566ad9c4a2a2ba2dfffed12ac0";
// lzma.compress(sample[:100], format=2, preset=0) + lzma.compress(sample[100:200], format=2, preset=0)
constexpr std::string_view kAloneTwo =
    "5d00000400ffffffffffffffff003d184aabf53a16db24113658ddfd79d7fb73247d1aeec6857c566ad66281a2ba2dff"
    "fed12ac05d00000400ffffffffffffffff00319a0b119f1abad246affad6ed1362bd547f755032b6328910fc8115036d"
    "501c12bfff7ea40000";
// LZMA().encode(b"")
constexpr std::string_view kXzEmpty =
    "fd377a585a000004e6d6b446000000001cdf44211fb6f37d010000000004595a";
// LZMA(check=10, preset=0).encode(b"zarrkit"): xz with SHA-256
constexpr std::string_view kXzSha256 =
    "fd377a585a00000ae1fb0ca1020021010c0000008f98419c0100067a6172726b697400003a95b300d12c075c9ecbf874"
    "e8dd606459519c86d6990fcb7b6f77ff02c362af00013707bc80e52e189b4b9a01000000000a595a";
// LZMA(filters=[{"id": lzma.FILTER_X86}, {"id": lzma.FILTER_DELTA, "dist": 2},
//               {"id": lzma.FILTER_LZMA2, "preset": 0, "lc": 1, "lp": 1}]).encode(sample[:64])
constexpr std::string_view kXzFilterChain =
    "fd377a585a000004e6d6b4460302040003010121010c0000634a6ff3e0003f002664003d185b090f442d59222c586808"
    "d50084bf6a330ef5293df886cffbfd0c829a4d38431909600000000026517cc513589de200014640381c79f01fb6f37d"
    "010000000004595a";
// lzma.compress(b"zarrkit", preset=0) twice, with 4 bytes of stream padding between
constexpr std::string_view kXzTwoPadded =
    "fd377a585a000004e6d6b446020021010c0000008f98419c0100067a6172726b69740000c41ddd8a1339313b00011f07"
    "162eb8731fb6f37d010000000004595a00000000fd377a585a000004e6d6b446020021010c0000008f98419c0100067a"
    "6172726b69740000c41ddd8a1339313b00011f07162eb8731fb6f37d010000000004595a";

const nlohmann::json kRawFilters = nlohmann::json::parse(R"([{"id": 3, "dist": 4}, {"id": 33, "preset": 1}])");
const nlohmann::json kRawLzma1Filters =
    nlohmann::json::parse(R"([{"id": 4611686018427387905, "preset": 1, "dict_size": 65536}])");

Bytes sample_prefix(std::size_t n) {
  Bytes sample = reference_sample();
  sample.resize(n);
  return sample;
}

class LzmaTest : public ::testing::Test {
 protected:
  LzmaTest() { register_lzma_codec(registry_); }
  std::shared_ptr<const BytesToBytesCodec> v3(const nlohmann::json& config) {
    return as_bytes_codec(registry_.make_v3({{"name", "numcodecs.lzma"}, {"configuration", config}}, CodecContext{}));
  }
  std::shared_ptr<const BytesToBytesCodec> v2(const nlohmann::json& entry) {
    return as_bytes_codec(registry_.make_v2(entry, CodecContext{}));
  }
  Bytes decode(const nlohmann::json& config, std::string_view hex, SizeBound bound) {
    return to_vector(v3(config)->decode(view(from_hex(hex)), bound, ChunkSpec{}));
  }
  void expect_decodes(const nlohmann::json& config, std::string_view hex, const Bytes& expected) {
    EXPECT_EQ(decode(config, hex, exact(expected.size())), expected);
    EXPECT_EQ(decode(config, hex, ceiling(expected.size())), expected);
    EXPECT_EQ(decode(config, hex, ceiling(1 << 20)), expected);
  }
  CodecRegistry registry_;
};

TEST_F(LzmaTest, RoundTripsInEveryFormat) {
  const nlohmann::json configs[] = {
      nlohmann::json::object(),
      {{"preset", 0}},
      {{"preset", 1}, {"check", 0}},
      {{"preset", 1}, {"check", 1}},
      {{"preset", 0}, {"check", 10}},
      {{"format", 2}, {"preset", 1}},
      {{"format", 3}, {"filters", kRawFilters}},
      {{"format", 3}, {"filters", kRawLzma1Filters}},
      {{"format", 1}, {"filters", kRawFilters}},
  };
  for (const auto& config : configs) {
    SCOPED_TRACE(config.dump());
    expect_round_trips(*v3(config));
  }
}

TEST_F(LzmaTest, DecodesNumcodecsOutput) {
  const Bytes sample = reference_sample();
  expect_decodes(nlohmann::json::object(), kXz, sample);
  expect_decodes({{"format", 2}}, kAlone, sample);
  expect_decodes({{"format", 3}, {"filters", kRawFilters}}, kRaw, sample);
  expect_decodes(nlohmann::json::object(), kXzCrc32, sample_prefix(200));
  expect_decodes({{"format", 3}, {"filters", kRawLzma1Filters}}, kRawLzma1, sample_prefix(200));
  expect_decodes(nlohmann::json::object(), kXzEmpty, {});
  expect_decodes(nlohmann::json::object(), kXzSha256, to_bytes("zarrkit"));
  expect_decodes(nlohmann::json::object(), kXzFilterChain, sample_prefix(64));
  // Format 0 detects xz and lzma-alone.
  expect_decodes({{"format", 0}}, kXz, sample);
  expect_decodes({{"format", 0}}, kAlone, sample);
}

TEST_F(LzmaTest, DecodesConcatenatedStreams) {
  expect_decodes(nlohmann::json::object(), kXzTwoPadded, concat(to_bytes("zarrkit"), to_bytes("zarrkit")));
  expect_decodes({{"format", 2}}, kAloneTwo, sample_prefix(200));
  expect_error<DataLossError>([&] { decode({{"format", 2}}, kAloneTwo, ceiling(150)); }, "decoded size exceeds");
  expect_error<DataLossError>([&] { decode(nlohmann::json::object(), kXzTwoPadded, exact(13)); }, "decoded size exceeds");
}

TEST_F(LzmaTest, RejectsTheWrongFormatAndTrailingData) {
  expect_error<DataLossError>([&] { decode({{"format", 2}}, kXz, ceiling(1000)); });
  expect_error<DataLossError>([&] { decode(nlohmann::json::object(), kAlone, ceiling(1000)); }, "container format");
  expect_error<DataLossError>([&] { decode(nlohmann::json::object(), std::string(kXz) + "6a756e6b", exact(840)); });
  expect_error<DataLossError>([&] { decode({{"format", 3}, {"filters", kRawFilters}}, std::string(kRaw) + "00", exact(840)); },
                              "unexpected data after the end");
}

TEST_F(LzmaTest, RejectsTruncatedInput) {
  expect_truncations_rejected(*v3(nlohmann::json::object()), from_hex(kXz), 840);
  expect_truncations_rejected(*v3(nlohmann::json::object()), from_hex(kXzEmpty), 0);
  expect_truncations_rejected(*v3({{"format", 2}}), from_hex(kAlone), 840);
  expect_truncations_rejected(*v3({{"format", 3}, {"filters", kRawFilters}}), from_hex(kRaw), 840);
}

TEST_F(LzmaTest, RejectsCorruptInput) {
  // xz checks its headers (CRC-32) and the content (CRC-64): nearly every bit counts.
  const Bytes xz = from_hex(kXz);
  for (std::uint8_t mask : {std::uint8_t{0x01}, std::uint8_t{0x20}}) {
    expect_corruptions_rejected(*v3(nlohmann::json::object()), xz, reference_sample(), 0, xz.size(), mask,
                                /*harmless_flips_allowed=*/true);
  }
  expect_error<DataLossError>([&] { decode(nlohmann::json::object(), "fd377a585a00", ceiling(100)); });
  expect_error<DataLossError>([&] { decode(nlohmann::json::object(), "", exact(0)); });
}

TEST_F(LzmaTest, EnforcesSizeBounds) {
  expect_size_bounds_enforced(*v3({{"preset", 1}}));
  expect_size_bounds_enforced(*v3({{"format", 2}, {"preset", 1}}));
  expect_size_bounds_enforced(*v3({{"format", 3}, {"filters", kRawFilters}}));
}

TEST_F(LzmaTest, BoundsDecoderMemory) {
  // Streams whose headers ask for a 1 GiB dictionary are refused before it is allocated.
  // xz: the LZMA2 dictionary byte of the block header (byte 16), whose CRC-32 follows it.
  Bytes xz = from_hex(kXz);
  ASSERT_EQ(xz[16], std::byte{0x16});  // 8 MiB, preset 6
  xz[16] = std::byte{0x24};            // (2 | 0) << (36 / 2 + 11) = 1 GiB
  const std::uint32_t header_crc = static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(&xz[12]), 8));
  for (std::size_t i = 0; i < 4; ++i) xz[20 + i] = static_cast<std::byte>(header_crc >> (8 * i));
  expect_error<ResourceExhaustedError>([&] { v3(nlohmann::json::object())->decode(view(xz), exact(840), {}); },
                                       "more than the limit");
  // lzma-alone: the dictionary size is bytes 1-4 of the 13-byte header.
  Bytes alone = from_hex(kAlone);
  alone[1] = std::byte{0x00};
  alone[2] = std::byte{0x00};
  alone[3] = std::byte{0x00};
  alone[4] = std::byte{0x40};  // 2^30
  expect_error<ResourceExhaustedError>([&] { v3({{"format", 2}})->decode(view(alone), ceiling(1000), {}); },
                                       "more than the limit");
  // raw: the dictionary comes from the metadata, and is checked the same way.
  auto raw = v3({{"format", 3},
                 {"filters", nlohmann::json::parse(R"([{"id": 33, "preset": 0, "dict_size": 1073741824}])")}});
  expect_error<ResourceExhaustedError>([&] { raw->decode(view(to_bytes("x")), ceiling(100), ChunkSpec{}); },
                                       "more than the limit");
}

TEST_F(LzmaTest, RejectsBadConfiguration) {
  expect_error<InvalidArgumentError>([&] { v3({{"format", 4}}); }, "from 0 to 3");
  expect_error<InvalidArgumentError>([&] { v3({{"format", "xz"}}); }, "must be an integer");
  expect_error<InvalidArgumentError>([&] { v3({{"check", 2}}); }, "\"check\" must be");
  expect_error<InvalidArgumentError>([&] { v3({{"format", 2}, {"check", 4}}); }, "needs format 1");
  expect_error<InvalidArgumentError>([&] { v3({{"preset", 10}}); }, "from 0 to 9");
  expect_error<InvalidArgumentError>([&] { v3({{"preset", -1}}); }, "from 0 to 9");
  expect_error<InvalidArgumentError>([&] { v3({{"preset", "9"}}); }, "from 0 to 9");
  expect_error<InvalidArgumentError>([&] { v3({{"format", 3}}); }, "needs \"filters\"");
  expect_error<InvalidArgumentError>([&] { v3({{"preset", 1}, {"filters", kRawFilters}}); }, "not both");
  expect_error<InvalidArgumentError>([&] { v3({{"filters", nlohmann::json::parse("[33]")}}); }, "must be an object");
  expect_error<InvalidArgumentError>([&] { v3({{"filters", nlohmann::json::array()}}); }, "1 to 4 filters");
  expect_error<InvalidArgumentError>([&] { v3({{"filters", nlohmann::json::parse(R"([{"preset": 1}])")}}); },
                                     "numeric \"id\"");
  expect_error<InvalidArgumentError>([&] { v3({{"filters", nlohmann::json::parse(R"([{"id": 33, "lc": 9}])")}}); },
                                     "\"lc\"");
  expect_error<InvalidArgumentError>([&] { v3({{"filters", nlohmann::json::parse(R"([{"id": 33, "colour": 1}])")}}); },
                                     "unexpected option \"colour\"");
  expect_error<InvalidArgumentError>([&] { v3({{"filters", nlohmann::json::parse(R"([{"id": 3, "dist": 0}])")}}); },
                                     "\"dist\"");
  // lc + lp > 4 is valid per option but not for LZMA2, as liblzma says.
  expect_error<InvalidArgumentError>(
      [&] { v3({{"filters", nlohmann::json::parse(R"([{"id": 33, "lc": 3, "lp": 3}])")}}); }, "rejects the filter chain");
  // The delta filter cannot end a chain.
  expect_error<InvalidArgumentError>([&] { v3({{"filters", nlohmann::json::parse(R"([{"id": 3}])")}}); },
                                     "rejects the filter chain");
  expect_error<InvalidArgumentError>([&] { v3({{"format", 2}, {"filters", kRawFilters}}); }, "one LZMA1 filter");
  expect_error<InvalidArgumentError>([&] { v3({{"level", 1}}); }, "unexpected configuration key");
  // A filter zarrkit does not implement.
  expect_error<UnsupportedError>([&] { v3({{"format", 3}, {"filters", nlohmann::json::parse(R"([{"id": 77}])")}}); },
                                 "filter id 77");
  // Format 0 reads, but cannot write.
  expect_error<UnsupportedError>([&] { v3({{"format", 0}})->encode(view(to_bytes("x")), ChunkSpec{}); },
                                 "but not written");
}

TEST_F(LzmaTest, JsonRoundTrip) {
  const nlohmann::json defaults = {{"id", "lzma"}, {"format", 1}, {"check", -1}, {"preset", nullptr}, {"filters", nullptr}};
  EXPECT_EQ(v2({{"id", "lzma"}})->to_v2_json(), defaults);
  EXPECT_EQ(v2(defaults)->to_v2_json(), defaults);
  EXPECT_EQ(v3(nlohmann::json::object())->to_json(),
            nlohmann::json({{"name", "numcodecs.lzma"},
                            {"configuration", {{"format", 1}, {"check", -1}, {"preset", nullptr}, {"filters", nullptr}}}}));
  const nlohmann::json raw = {{"id", "lzma"}, {"format", 3}, {"check", -1}, {"preset", nullptr}, {"filters", kRawFilters}};
  auto codec = v2(raw);
  EXPECT_EQ(codec->to_v2_json(), raw);
  EXPECT_EQ(as_bytes_codec(registry_.make_v3(codec->to_json(), {}))->to_v2_json(), raw);
  const nlohmann::json extreme = {{"id", "lzma"}, {"format", 1}, {"check", 4}, {"preset", 2147483657u}, {"filters", nullptr}};
  EXPECT_EQ(v2(extreme)->to_v2_json(), extreme);
  // A v2 codec and its v3 form write the same bytes.
  const Bytes sample = reference_sample();
  EXPECT_EQ(to_vector(v2(raw)->encode(view(sample), {})), to_vector(as_bytes_codec(registry_.make_v3(codec->to_json(), {}))->encode(view(sample), {})));
}

}  // namespace
}  // namespace zarrkit
