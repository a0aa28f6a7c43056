#include "zarrkit/codec_chain.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "codecs/register.h"
#include "core/partial_chunk_codec.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

// ---- Test codecs: they record what the chain hands them ---------------------------------

// A bytes->bytes codec whose output size is not fixed (like a compressor). It stores the
// bytes unchanged and remembers the bound it was given when decoding.
class RecordingCompressor final : public BytesToBytesCodec {
 public:
  std::string_view name() const override { return "test.recording"; }
  nlohmann::json to_json() const override { return codec_json(name(), {}); }
  Buffer encode(ByteView decoded, const ChunkSpec&) const override { return Buffer::copy_of(decoded); }
  Buffer decode(ByteView encoded, SizeBound bound, const ChunkSpec&) const override {
    bounds.push_back(bound);
    return Buffer::copy_of(encoded);
  }
  mutable std::vector<SizeBound> bounds;
};

// A bytes->bytes codec with a fixed overhead: appends "ZKZK".
class PlusFour final : public BytesToBytesCodec {
 public:
  std::string_view name() const override { return "test.plus4"; }
  nlohmann::json to_json() const override { return codec_json(name(), {}); }
  std::optional<std::uint64_t> encoded_size(std::uint64_t n) const override { return n + 4; }
  Buffer encode(ByteView decoded, const ChunkSpec&) const override {
    Buffer out = Buffer::allocate(decoded.size() + 4);
    if (!decoded.empty()) std::memcpy(out.data(), decoded.data(), decoded.size());
    std::memcpy(out.data() + decoded.size(), "ZKZK", 4);
    return out;
  }
  Buffer decode(ByteView encoded, SizeBound bound, const ChunkSpec&) const override {
    bounds.push_back(bound);
    if (encoded.size() < 4 || std::memcmp(encoded.data() + encoded.size() - 4, "ZKZK", 4) != 0) {
      fail_data_loss("test.plus4: missing trailer");
    }
    return Buffer::copy_of(encoded.first(encoded.size() - 4));
  }
  mutable std::vector<SizeBound> bounds;
};

// A bytes->bytes decoder that ignores its bound and produces far more: a bomb.
class Bomb final : public BytesToBytesCodec {
 public:
  std::string_view name() const override { return "test.bomb"; }
  nlohmann::json to_json() const override { return codec_json(name(), {}); }
  Buffer encode(ByteView decoded, const ChunkSpec&) const override { return Buffer::copy_of(decoded); }
  Buffer decode(ByteView, SizeBound bound, const ChunkSpec&) const override { return Buffer::allocate(bound.bytes + 1); }
};

// An array->bytes codec with no fixed encoded size (as sharding): C-order bytes.
class VariableSizeBytes final : public ArrayToBytesCodec {
 public:
  std::string_view name() const override { return "test.variable"; }
  nlohmann::json to_json() const override { return codec_json(name(), {}); }
  Buffer encode(const NDBuffer& chunk, const ChunkSpec&) const override { return chunk.buffer(); }
  NDBuffer decode(ByteView encoded, const ChunkSpec& spec, const BufferPrototype&) const override {
    return NDBuffer(Buffer::copy_of(encoded), spec.shape, spec.dtype);
  }
};

// An array->array codec that changes nothing and counts how often it is asked for the spec
// it encodes to (which is where array->array codecs validate a spec).
class CountingIdentity final : public ArrayToArrayCodec {
 public:
  std::string_view name() const override { return "test.counting"; }
  nlohmann::json to_json() const override { return codec_json(name(), {}); }
  ChunkSpec encoded_spec(const ChunkSpec& decoded) const override {
    ++spec_calls;
    if (decoded.shape.size() != 1) fail_invalid("test.counting takes 1-d chunks");
    return decoded;
  }
  NDBuffer encode(const NDBuffer& decoded, const ChunkSpec&) const override { return decoded; }
  NDBuffer decode(const NDBuffer& encoded, const ChunkSpec&) const override { return encoded; }
  mutable std::atomic<int> spec_calls{0};
};

const CodecRegistry& registry() {
  static const CodecRegistry r = [] {
    CodecRegistry reg;
    register_bytes_codec(reg);
    register_transpose_codec(reg);
    register_blosc_codec(reg);
    reg.add_v3("test.plus4", [](const nlohmann::json&, const CodecContext&) { return std::make_shared<PlusFour>(); });
    return reg;
  }();
  return r;
}

const DataType kI32 = DataType::int_(32);

ChunkSpec spec_of(Shape shape, const DataType& dtype = kI32) { return {std::move(shape), dtype, FillValue::zero(dtype)}; }

NDBuffer counting(const Shape& shape, const DataType& dtype = kI32) {
  NDBuffer nd = NDBuffer::allocate(shape, dtype);
  auto* p = reinterpret_cast<std::uint8_t*>(nd.data());
  for (std::size_t i = 0; i < nd.nbytes(); ++i) p[i] = static_cast<std::uint8_t>(i * 7 + 3);
  return nd;
}

std::shared_ptr<const Codec> make(const char* json) {
  return registry().make_v3(nlohmann::json::parse(json), {kI32, 3});
}

// ---- Order ------------------------------------------------------------------------------

TEST(CodecChain, FromCodecsChecksTheOrder) {
  const auto transpose = make(R"({"name":"transpose","configuration":{"order":[1,0]}})");
  const auto bytes = make(R"("bytes")");
  const auto blosc = make(R"("blosc")");
  EXPECT_THROW(CodecChain::from_codecs({}), InvalidArgumentError);
  EXPECT_THROW(CodecChain::from_codecs({transpose}), InvalidArgumentError);             // no array->bytes
  EXPECT_THROW(CodecChain::from_codecs({blosc, bytes}), InvalidArgumentError);          // bytes->bytes first
  EXPECT_THROW(CodecChain::from_codecs({bytes, transpose}), InvalidArgumentError);      // array->array last
  EXPECT_THROW(CodecChain::from_codecs({bytes, bytes}), InvalidArgumentError);          // two array->bytes
  EXPECT_THROW(CodecChain::from_codecs({bytes, nullptr}), InvalidArgumentError);
  const auto chain = CodecChain::from_codecs({transpose, transpose, bytes, blosc, blosc});
  EXPECT_EQ(chain.array_to_array().size(), 2u);
  EXPECT_EQ(chain.array_to_bytes()->name(), "bytes");
  EXPECT_EQ(chain.bytes_to_bytes().size(), 2u);
}

TEST(CodecChain, FromV3JsonParsesShortHandsAndWritesObjects) {
  const auto codecs = nlohmann::json::parse(R"([{"name":"transpose","configuration":{"order":[1,0]}},
      "bytes", {"name":"blosc","configuration":{"cname":"lz4","clevel":1,"shuffle":"shuffle","typesize":4,"blocksize":0}}])");
  const auto chain = CodecChain::from_v3_json(codecs, kI32, registry());
  EXPECT_EQ(chain.to_json(), nlohmann::json::parse(R"([{"name":"transpose","configuration":{"order":[1,0]}},
      {"name":"bytes","configuration":{"endian":"little"}},
      {"name":"blosc","configuration":{"cname":"lz4","clevel":1,"shuffle":"shuffle","typesize":4,"blocksize":0}}])"));
  // The dtype reaches the factories: a one-byte type gets no endian.
  EXPECT_EQ(CodecChain::from_v3_json(nlohmann::json::parse(R"(["bytes"])"), DataType::uint_(8), registry()).to_json(),
            nlohmann::json::parse(R"([{"name":"bytes"}])"));
}

TEST(CodecChain, FromV3JsonRejectsBadLists) {
  for (const char* bad : {R"({})", R"("bytes")", R"([])", R"(null)", R"(["transpose"])", R"(["blosc","bytes"])",
                          R"([{"name":"bytes","extra":1}])", R"([{"configuration":{}}])", R"([7])",
                          R"([{"name":"bytes","must_understand":"no"}])", R"([{"name":"bytes","configuration":[]}])"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(CodecChain::from_v3_json(nlohmann::json::parse(bad), kI32, registry()), InvalidArgumentError);
  }
}

TEST(CodecChain, UnknownCodecIsUnsupportedUnlessMustUnderstandIsFalse) {
  try {
    CodecChain::from_v3_json(nlohmann::json::parse(R"(["bytes", {"name":"fancy"}])"), kI32, registry());
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported codec 'fancy'"), std::string::npos) << e.what();
  }
  const auto chain = CodecChain::from_v3_json(
      nlohmann::json::parse(R"(["bytes", {"name":"fancy","must_understand":false}])"), kI32, registry());
  EXPECT_TRUE(chain.bytes_to_bytes().empty());
  // "must_understand": true is the default, said out loud.
  EXPECT_THROW(CodecChain::from_v3_json(nlohmann::json::parse(R"(["bytes", {"name":"fancy","must_understand":true}])"),
                                        kI32, registry()),
               UnsupportedError);
  // URL-style names are not guessed at: only names that were registered work.
  EXPECT_THROW(CodecChain::from_v3_json(nlohmann::json::parse(R"(["https://zarr.dev/codecs/bytes"])"), kI32, registry()),
               UnsupportedError);
  // A skipped codec can leave the chain without an array->bytes codec.
  EXPECT_THROW(CodecChain::from_v3_json(nlohmann::json::parse(R"([{"name":"fancy","must_understand":false}])"), kI32,
                                        registry()),
               InvalidArgumentError);
}

TEST(CodecRegistry, V2LookupAndErrors) {
  const CodecContext v2{kI32, 2};
  EXPECT_EQ(registry().make_v2(nlohmann::json::parse(R"({"id":"blosc"})"), v2)->name(), "numcodecs.blosc");
  try {
    registry().make_v2(nlohmann::json::parse(R"({"id":"pickle"})"), v2);
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("pickle"), std::string::npos) << e.what();
  }
  EXPECT_THROW(registry().make_v2(nlohmann::json::parse(R"({"cname":"lz4"})"), v2), InvalidArgumentError);
  EXPECT_THROW(registry().make_v2(nlohmann::json::parse(R"({"id":3})"), v2), InvalidArgumentError);
  EXPECT_THROW(registry().make_v2(nlohmann::json::parse(R"("blosc")"), v2), InvalidArgumentError);
  EXPECT_TRUE(registry().has_v2("blosc"));
  EXPECT_FALSE(registry().has_v2("bytes"));
  EXPECT_TRUE(registry().has_v3("numcodecs.blosc"));
}

TEST(CodecRegistry, BuiltinHasEveryShippedCodec) {
  const auto& builtin = CodecRegistry::builtin();
  EXPECT_EQ(&builtin, &CodecRegistry::builtin());
  for (const char* name : {"bytes", "sharding_indexed", "transpose", "blosc", "gzip", "zstd", "crc32c",
                           "numcodecs.zlib", "numcodecs.lz4", "numcodecs.bz2", "numcodecs.lzma", "numcodecs.blosc"}) {
    EXPECT_TRUE(builtin.has_v3(name)) << name;
  }
  for (const char* id : {"blosc", "gzip", "zlib", "zstd", "lz4", "bz2", "lzma"}) EXPECT_TRUE(builtin.has_v2(id)) << id;
}

// ---- Encoding and decoding --------------------------------------------------------------

TEST(CodecChain, TransposeBytesBigEndianGiveExactBytes) {
  const auto chain = CodecChain::from_v3_json(
      nlohmann::json::parse(R"([{"name":"transpose","configuration":{"order":[1,0]}},
                                {"name":"bytes","configuration":{"endian":"big"}}])"),
      DataType::int_(16), registry());
  const ChunkSpec spec = spec_of({2, 3}, DataType::int_(16));
  NDBuffer chunk = NDBuffer::allocate({2, 3}, DataType::int_(16));
  auto* v = reinterpret_cast<std::int16_t*>(chunk.data());
  for (int i = 0; i < 6; ++i) v[i] = static_cast<std::int16_t>(0x0100 * (i + 1) + i);  // [[a b c] [d e f]]
  Buffer encoded = chain.encode(chunk, spec);
  // Transposed: a d b e c f, each big-endian.
  const std::vector<std::uint8_t> expected = {1, 0, 4, 3, 2, 1, 5, 4, 3, 2, 6, 5};
  ASSERT_EQ(encoded.size(), expected.size());
  EXPECT_EQ(std::memcmp(encoded.data(), expected.data(), expected.size()), 0);
  NDBuffer back = chain.decode(encoded.view(), spec);
  EXPECT_EQ(back.shape(), spec.shape);
  EXPECT_EQ(std::memcmp(back.data(), chunk.data(), chunk.nbytes()), 0);
  EXPECT_EQ(*chain.encoded_size(spec), 12u);
}

TEST(CodecChain, RoundTripThroughEveryStage) {
  const auto chain = CodecChain::from_v3_json(
      nlohmann::json::parse(R"([{"name":"transpose","configuration":{"order":[2,0,1]}},
                                {"name":"transpose","configuration":{"order":[1,0,2]}},
                                {"name":"bytes","configuration":{"endian":"big"}},
                                {"name":"blosc","configuration":{"cname":"zstd","clevel":3,"shuffle":"bitshuffle","typesize":8}},
                                "test.plus4"])"),
      DataType::float_(64), registry());
  const ChunkSpec spec = spec_of({7, 9, 11}, DataType::float_(64));
  const NDBuffer chunk = counting(spec.shape, spec.dtype);
  Buffer encoded = chain.encode(chunk, spec);
  EXPECT_FALSE(chain.encoded_size(spec).has_value());  // blosc's size is not fixed
  NDBuffer back = chain.decode(encoded.view(), spec);
  EXPECT_EQ(back.shape(), spec.shape);
  EXPECT_EQ(std::memcmp(back.data(), chunk.data(), chunk.nbytes()), 0);
  // A chunk that does not match the spec.
  EXPECT_THROW(chain.encode(counting({7, 9, 10}, DataType::float_(64)), spec), InvalidArgumentError);
}

TEST(CodecChain, DecodersGetExactSizesWhereKnownAndCeilingsElsewhere) {
  auto first = std::make_shared<RecordingCompressor>();
  auto fixed = std::make_shared<PlusFour>();
  auto last = std::make_shared<RecordingCompressor>();
  const auto chain = CodecChain::from_codecs({make(R"("bytes")"), first, fixed, last});
  const ChunkSpec spec = spec_of({10, 10});  // 400 bytes
  Buffer encoded = chain.encode(counting(spec.shape), spec);
  EXPECT_EQ(encoded.size(), 404u);
  chain.decode(encoded.view(), spec);
  const std::uint64_t ceiling = 400 + 400 / 8 + (64 << 10);
  ASSERT_EQ(first->bounds.size(), 1u);
  EXPECT_TRUE(first->bounds[0].exact);
  EXPECT_EQ(first->bounds[0].bytes, 400u);
  ASSERT_EQ(fixed->bounds.size(), 1u);
  EXPECT_FALSE(fixed->bounds[0].exact);
  EXPECT_EQ(fixed->bounds[0].bytes, ceiling);
  ASSERT_EQ(last->bounds.size(), 1u);
  EXPECT_FALSE(last->bounds[0].exact);
  EXPECT_EQ(last->bounds[0].bytes, ceiling + 4);
}

TEST(CodecChain, FixedSizeStagesKeepSizesExact) {
  auto fixed = std::make_shared<PlusFour>();
  auto compressor = std::make_shared<RecordingCompressor>();
  const auto chain = CodecChain::from_codecs({make(R"("bytes")"), fixed, compressor});
  const ChunkSpec spec = spec_of({5});
  EXPECT_FALSE(chain.encoded_size(spec).has_value());
  chain.decode(chain.encode(counting(spec.shape), spec).view(), spec);
  EXPECT_TRUE(fixed->bounds.at(0).exact);
  EXPECT_EQ(fixed->bounds.at(0).bytes, 20u);
  EXPECT_TRUE(compressor->bounds.at(0).exact);
  EXPECT_EQ(compressor->bounds.at(0).bytes, 24u);
  EXPECT_EQ(*CodecChain::from_codecs({make(R"("bytes")"), fixed, fixed}).encoded_size(spec), 28u);
}

TEST(CodecChain, VariableSizeArrayToBytesGetsAGenerousCeiling) {
  auto compressor = std::make_shared<RecordingCompressor>();
  const auto chain = CodecChain::from_codecs({std::make_shared<VariableSizeBytes>(), compressor});
  const ChunkSpec spec = spec_of({1000});  // 4000 bytes
  chain.decode(chain.encode(counting(spec.shape), spec).view(), spec);
  ASSERT_EQ(compressor->bounds.size(), 1u);
  EXPECT_FALSE(compressor->bounds[0].exact);
  // At least what the array could take, and what the input could expand to.
  EXPECT_GE(compressor->bounds[0].bytes, 4000u);
  EXPECT_GE(compressor->bounds[0].bytes, 4000u * 64);
  EXPECT_LE(compressor->bounds[0].bytes, 4000u * 64 + (1u << 20) + 4000u + (64u << 10));
}

TEST(CodecChain, DecoderThatIgnoresItsBoundIsDataLoss) {
  const auto chain = CodecChain::from_codecs({make(R"("bytes")"), std::make_shared<Bomb>()});
  const ChunkSpec spec = spec_of({4});
  EXPECT_THROW(chain.decode(chain.encode(counting(spec.shape), spec).view(), spec), DataLossError);
}

TEST(CodecChain, CorruptStoredBytesAreDataLoss) {
  const auto chain = CodecChain::from_v3_json(nlohmann::json::parse(R"(["bytes","blosc"])"), kI32, registry());
  const ChunkSpec spec = spec_of({16});
  Buffer encoded = chain.encode(counting(spec.shape), spec);
  // A blosc header that claims a bigger chunk than the spec allows.
  std::vector<std::byte> lying(encoded.view().begin(), encoded.view().end());
  lying[4] = std::byte{0xff};
  EXPECT_THROW(chain.decode(lying, spec), DataLossError);
  EXPECT_THROW(chain.decode(encoded.view().first(10), spec), DataLossError);
  // bytes alone: the size must be exact.
  const auto plain = CodecChain::from_v3_json(nlohmann::json::parse(R"(["bytes"])"), kI32, registry());
  EXPECT_THROW(plain.decode(encoded.view(), spec), DataLossError);
}

TEST(CodecChain, DecodePiecesGivesWhatDecodeIntoWritesWhereTheChainAllowsIt) {
  auto chain_of = [](const char* json) {
    return CodecChain::from_v3_json(nlohmann::json::parse(json), kI32, CodecRegistry::builtin());
  };
  const ChunkSpec spec = spec_of({64, 1000});
  const NDBuffer chunk = counting(spec.shape);
  const char* const big_endian_zstd_crc = R"([{"name":"bytes","configuration":{"endian":"big"}},"zstd","crc32c"])";
  for (const char* json : {R"(["bytes","zstd"])", big_endian_zstd_crc,
                           R"(["bytes",{"name":"blosc","configuration":{"cname":"lz4","typesize":4,"blocksize":16384}}])"}) {
    SCOPED_TRACE(json);
    const CodecChain chain = chain_of(json);
    const Buffer encoded = chain.encode(chunk, spec);
    std::vector<std::byte> whole(chunk.nbytes());
    ASSERT_TRUE(chain.decode_into(encoded.view(), spec, whole));
    const auto reader = chain.decode_pieces(std::make_shared<MemorySource>(encoded.view()), spec);
    ASSERT_NE(reader, nullptr);
    std::vector<std::byte> pieces(chunk.nbytes());
    for (std::size_t at = 0; at < pieces.size(); at += 4000) {
      ASSERT_TRUE(reader->read(MutableByteView(pieces).subspan(at, std::min<std::size_t>(4000, pieces.size() - at))));
    }
    EXPECT_TRUE(reader->finish());
    EXPECT_EQ(pieces, whole);
    EXPECT_EQ(std::memcmp(pieces.data(), chunk.data(), chunk.nbytes()), 0);
  }
  // Elements whose byte order changes are swapped whole, so pieces must hold whole ones.
  const CodecChain swapped = chain_of(big_endian_zstd_crc);
  Buffer encoded = swapped.encode(chunk, spec);
  std::vector<std::byte> out(6);
  EXPECT_FALSE(swapped.decode_pieces(std::make_shared<MemorySource>(encoded.view()), spec)
                   ->read(MutableByteView(out).first(3)));
  // A wrong checksum is decode_into's error, word for word.
  encoded.data()[encoded.size() - 1] ^= std::byte{1};
  std::string whole_error, pieces_error;
  std::vector<std::byte> room(chunk.nbytes());
  try {
    swapped.decode_into(encoded.view(), spec, room);
  } catch (const DataLossError& e) {
    whole_error = e.what();
  }
  try {
    swapped.decode_pieces(std::make_shared<MemorySource>(encoded.view()), spec);
  } catch (const DataLossError& e) {
    pieces_error = e.what();
  }
  EXPECT_FALSE(whole_error.empty());
  EXPECT_EQ(pieces_error, whole_error);
  // Read from a store, a chain that checks a checksum over all the bytes has no reader: the
  // bytes must be in memory first.
  class FromStore final : public ByteSource {
   public:
    explicit FromStore(ByteView bytes) : bytes_(bytes) {}
    std::uint64_t size() const override { return bytes_.size(); }
    std::size_t read(std::uint64_t offset, MutableByteView dest) override {
      const std::size_t n = std::min<std::uint64_t>(dest.size(), bytes_.size() - std::min<std::uint64_t>(offset, bytes_.size()));
      if (n > 0) std::memcpy(dest.data(), bytes_.data() + offset, n);
      return n;
    }

   private:
    ByteView bytes_;
  };
  const Buffer checked = swapped.encode(chunk, spec);
  EXPECT_EQ(swapped.decode_pieces(std::make_shared<FromStore>(checked.view()), spec), nullptr);
  const CodecChain unchecked = chain_of(R"(["bytes","zstd"])");
  const Buffer plain = unchecked.encode(chunk, spec);
  EXPECT_NE(unchecked.decode_pieces(std::make_shared<FromStore>(plain.view()), spec), nullptr);
  // Chains without exactly one compressor that decodes in pieces (followed only by
  // checksums) have no reader.
  for (const char* json : {R"(["bytes"])", R"(["bytes","crc32c"])", R"(["bytes",{"name":"gzip","configuration":{"level":1}}])",
                           R"(["bytes","zstd",{"name":"gzip","configuration":{"level":1}}])",
                           R"(["bytes","crc32c","zstd"])",
                           R"([{"name":"transpose","configuration":{"order":[1,0]}},"bytes","zstd"])"}) {
    SCOPED_TRACE(json);
    const CodecChain chain = chain_of(json);
    EXPECT_EQ(chain.decode_pieces(std::make_shared<MemorySource>(chain.encode(chunk, spec)), spec), nullptr);
  }
}

TEST(CodecChain, ValidateChecksEachCodecAgainstTheSpec) {
  const auto chain = CodecChain::from_v3_json(
      nlohmann::json::parse(R"([{"name":"transpose","configuration":{"order":[1,0]}},"bytes"])"), kI32, registry());
  EXPECT_NO_THROW(chain.validate(spec_of({3, 4})));
  EXPECT_THROW(chain.validate(spec_of({3, 4, 5})), InvalidArgumentError);
  const auto plain = CodecChain::from_v3_json(nlohmann::json::parse(R"(["bytes"])"), DataType::string(), registry());
  EXPECT_THROW(plain.validate({{3}, DataType::string(), FillValue{}}), UnsupportedError);
}

TEST(CodecChain, DefaultConstructedChainFailsCleanly) {
  const CodecChain empty;
  EXPECT_THROW(empty.decode(ByteView{}, spec_of({1})), InvalidArgumentError);
  EXPECT_THROW(empty.encode(counting({1}), spec_of({1})), InvalidArgumentError);
  EXPECT_EQ(empty.to_json(), nlohmann::json::array());
}

// ---- PreparedChain ------------------------------------------------------------------------

nlohmann::json parse(const char* text) { return nlohmann::json::parse(text); }

TEST(PreparedChain, TransposeAndBigEndianBytes) {
  const auto chain = CodecChain::from_v3_json(parse(R"([{"name":"transpose","configuration":{"order":[1,0]}},
                                                        {"name":"bytes","configuration":{"endian":"big"}},
                                                        "crc32c"])"),
                                              kI32, CodecRegistry::builtin());
  const ChunkSpec spec = spec_of({3, 5});
  const auto prepared = chain.prepare(spec);
  EXPECT_EQ(prepared->spec().shape, (Shape{3, 5}));
  EXPECT_EQ(prepared->chunk_bytes(), 60u);
  EXPECT_EQ(std::vector<std::int64_t>(prepared->strides().begin(), prepared->strides().end()),
            (std::vector<std::int64_t>{20, 4}));
  EXPECT_EQ(prepared->array_to_array_spec(0).shape, (Shape{3, 5}));
  EXPECT_EQ(prepared->array_to_bytes_spec().shape, (Shape{5, 3}));  // transposed
  ASSERT_EQ(prepared->bytes_to_bytes_bounds().size(), 1u);
  ASSERT_TRUE(prepared->bytes_to_bytes_bounds()[0].bound);
  EXPECT_TRUE(prepared->bytes_to_bytes_bounds()[0].bound->exact);  // crc32c decodes to the 60 bytes
  EXPECT_EQ(prepared->bytes_to_bytes_bounds()[0].bound->bytes, 60u);
  EXPECT_EQ(prepared->encoded_size(), std::optional<std::uint64_t>(64));
  EXPECT_FALSE(prepared->stores_raw_bytes());
  EXPECT_FALSE(prepared->decodes_into());  // the transpose makes a new array
  // The same bytes as the chain's own functions, both ways.
  const NDBuffer chunk = counting(spec.shape);
  const Buffer encoded = prepared->encode(chunk);
  const Buffer expected = chain.encode(chunk, spec);
  ASSERT_EQ(encoded.size(), expected.size());
  EXPECT_EQ(std::memcmp(encoded.data(), expected.data(), encoded.size()), 0);
  const NDBuffer back = prepared->decode(encoded.view());
  EXPECT_EQ(back.shape(), spec.shape);
  EXPECT_EQ(std::memcmp(back.data(), chunk.data(), chunk.nbytes()), 0);
  MutableByteView nowhere;
  EXPECT_FALSE(prepared->decode_into(encoded.view(), nowhere));
}

TEST(PreparedChain, RawBytesDecodeInPlace) {
  const auto chain = CodecChain::from_v3_json(parse(R"([{"name":"bytes","configuration":{"endian":"little"}}])"), kI32,
                                              CodecRegistry::builtin());
  const auto prepared = chain.prepare(spec_of({4, 4}));
  EXPECT_TRUE(prepared->stores_raw_bytes());
  EXPECT_TRUE(prepared->decodes_into());
  EXPECT_EQ(prepared->encoded_size(), std::optional<std::uint64_t>(64));
  EXPECT_TRUE(prepared->bytes_to_bytes_bounds().empty());
  const NDBuffer chunk = counting({4, 4});
  Buffer out = Buffer::allocate(64);
  ASSERT_TRUE(prepared->decode_into(chunk.buffer().view(), out.mutable_view()));
  EXPECT_EQ(std::memcmp(out.data(), chunk.data(), 64), 0);
  // The room must be the chunk's size exactly.
  Buffer small = Buffer::allocate(60);
  EXPECT_THROW(prepared->decode_into(chunk.buffer().view(), small.mutable_view()), InternalError);
  // Big-endian storage is not raw, but still decodes in place.
  const auto big = CodecChain::from_v3_json(parse(R"([{"name":"bytes","configuration":{"endian":"big"}}])"), kI32,
                                            CodecRegistry::builtin())
                       .prepare(spec_of({4, 4}));
  EXPECT_FALSE(big->stores_raw_bytes());
  EXPECT_TRUE(big->decodes_into());
}

TEST(PreparedChain, BoundsThroughCompressorsAreTheOnesDecodersGet) {
  auto first = std::make_shared<RecordingCompressor>();
  auto fixed = std::make_shared<PlusFour>();
  auto last = std::make_shared<RecordingCompressor>();
  const auto chain = CodecChain::from_codecs({make(R"("bytes")"), first, fixed, last});
  const ChunkSpec spec = spec_of({10, 10});  // 400 bytes
  const auto prepared = chain.prepare(spec);
  const std::uint64_t ceiling = 400 + 400 / 8 + (64 << 10);
  const auto bounds = prepared->bytes_to_bytes_bounds();
  ASSERT_EQ(bounds.size(), 3u);
  for (const DecodeBound& b : bounds) {
    ASSERT_TRUE(b.bound);
    EXPECT_FALSE(b.estimated);
  }
  EXPECT_TRUE(bounds[0].bound->exact);
  EXPECT_EQ(bounds[0].bound->bytes, 400u);
  EXPECT_FALSE(bounds[1].bound->exact);
  EXPECT_EQ(bounds[1].bound->bytes, ceiling);
  EXPECT_FALSE(bounds[2].bound->exact);
  EXPECT_EQ(bounds[2].bound->bytes, ceiling + 4);
  // Known bounds do not depend on the input.
  EXPECT_EQ(bounds[2].for_input(std::uint64_t{1} << 30).bytes, ceiling + 4);
  EXPECT_FALSE(prepared->encoded_size());
  EXPECT_FALSE(prepared->decodes_into());  // two compressors in a row
  // Decoding hands each decoder exactly the bound the prepared chain reports.
  prepared->decode(prepared->encode(counting(spec.shape)).view());
  ASSERT_EQ(first->bounds.size(), 1u);
  EXPECT_EQ(first->bounds[0].bytes, bounds[0].bound->bytes);
  EXPECT_EQ(first->bounds[0].exact, bounds[0].bound->exact);
  ASSERT_EQ(last->bounds.size(), 1u);
  EXPECT_EQ(last->bounds[0].bytes, bounds[2].bound->bytes);
}

TEST(PreparedChain, ACompressorThenAChecksumDecodesIntoTheCallersMemory) {
  const auto chain = CodecChain::from_v3_json(
      parse(R"(["bytes", {"name":"zstd","configuration":{"level":1,"checksum":false}}, "crc32c"])"), kI32,
      CodecRegistry::builtin());
  const ChunkSpec spec = spec_of({100});
  const auto prepared = chain.prepare(spec);
  EXPECT_TRUE(prepared->decodes_into());
  const auto bounds = prepared->bytes_to_bytes_bounds();
  ASSERT_EQ(bounds.size(), 2u);
  EXPECT_TRUE(bounds[0].bound->exact);  // zstd decodes to the chunk's 400 bytes exactly
  EXPECT_EQ(bounds[0].bound->bytes, 400u);
  EXPECT_FALSE(bounds[1].bound->exact);  // crc32c's input is zstd's output: a ceiling
  const NDBuffer chunk = counting(spec.shape);
  const Buffer encoded = prepared->encode(chunk);
  Buffer out = Buffer::allocate(400);
  ASSERT_TRUE(prepared->decode_into(encoded.view(), out.mutable_view()));
  EXPECT_EQ(std::memcmp(out.data(), chunk.data(), 400), 0);
  // In pieces, from the same bytes.
  const auto pieces = prepared->decode_pieces(std::make_shared<MemorySource>(encoded.view()));
  ASSERT_TRUE(pieces);
  Buffer piece_out = Buffer::allocate(400);
  ASSERT_TRUE(pieces->read(piece_out.mutable_view().first(160)));
  ASSERT_TRUE(pieces->read(piece_out.mutable_view().subspan(160)));
  EXPECT_TRUE(pieces->finish());
  EXPECT_EQ(std::memcmp(piece_out.data(), chunk.data(), 400), 0);
}

TEST(PreparedChain, ShardingEstimatesAndNests) {
  const auto chain = CodecChain::from_v3_json(parse(R"([
      {"name":"sharding_indexed","configuration":{"chunk_shape":[4,4],"index_location":"start",
        "index_codecs":["bytes","crc32c"],
        "codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[2,2],
          "index_codecs":["bytes","crc32c"],"codecs":["bytes"]}}]}},
      {"name":"zstd","configuration":{"level":1,"checksum":false}}])"),
                                              kI32, CodecRegistry::builtin());
  const ChunkSpec spec = spec_of({8, 8});  // 256 bytes of elements
  const auto prepared = chain.prepare(spec);
  EXPECT_EQ(prepared->chunk_bytes(), 256u);
  EXPECT_FALSE(prepared->encoded_size());  // inner chunks may be left out
  EXPECT_FALSE(prepared->stores_raw_bytes());
  ASSERT_EQ(prepared->bytes_to_bytes_bounds().size(), 1u);
  const DecodeBound& zstd = prepared->bytes_to_bytes_bounds()[0];
  ASSERT_TRUE(zstd.bound);
  EXPECT_TRUE(zstd.estimated);
  EXPECT_FALSE(zstd.bound->exact);
  EXPECT_EQ(zstd.bound->bytes, 256u + 256u / 8 + (64u << 10));
  // An estimate also allows what the input could expand to (64 times, and 1 MiB).
  EXPECT_EQ(zstd.for_input(1 << 20).bytes, (std::uint64_t{1} << 20) * 64 + (1 << 20));
  EXPECT_EQ(zstd.for_input(10).bytes, 10u * 64 + (1u << 20));
  EXPECT_FALSE(zstd.for_input(10).exact);
  // Both levels round-trip through the prepared chain.
  const NDBuffer chunk = counting(spec.shape);
  const NDBuffer back = prepared->decode(prepared->encode(chunk).view());
  EXPECT_EQ(std::memcmp(back.data(), chunk.data(), 256), 0);
}

TEST(PreparedChain, OnlyShardingAloneReadsInPart) {
  const char* nested = R"({"name":"sharding_indexed","configuration":{"chunk_shape":[4,4],
      "index_codecs":["bytes","crc32c"],
      "codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[2,2],
        "index_codecs":["bytes","crc32c"],"codecs":["bytes","crc32c"]}}]}})";
  const auto alone = CodecChain::from_v3_json(nlohmann::json::array({parse(nested)}), kI32, CodecRegistry::builtin())
                         .prepare(spec_of({8, 8}));
  const PartialChunkCodec* outer = alone->partial();
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->chunk_shape(), (Shape{8, 8}));
  // The inner chain is prepared for the inner chunk, and reads in part too (nested).
  const PreparedChain& inner = *outer->inner_chain();
  EXPECT_EQ(inner.spec().shape, (Shape{4, 4}));
  EXPECT_EQ(inner.chunk_bytes(), 64u);
  ASSERT_NE(inner.partial(), nullptr);
  const PreparedChain& innermost = *inner.partial()->inner_chain();
  EXPECT_EQ(innermost.spec().shape, (Shape{2, 2}));
  EXPECT_EQ(innermost.partial(), nullptr);  // bytes + crc32c
  EXPECT_EQ(innermost.encoded_size(), std::optional<std::uint64_t>(20));
  // Codecs around sharding: whole chunks only.
  auto around = nlohmann::json::array({parse(nested), "crc32c"});
  EXPECT_EQ(CodecChain::from_v3_json(around, kI32, CodecRegistry::builtin()).prepare(spec_of({8, 8}))->partial(),
            nullptr);
  around = nlohmann::json::array({parse(R"({"name":"transpose","configuration":{"order":[1,0]}})"), parse(nested)});
  EXPECT_EQ(CodecChain::from_v3_json(around, kI32, CodecRegistry::builtin()).prepare(spec_of({8, 8}))->partial(),
            nullptr);
  EXPECT_EQ(CodecChain::from_v3_json(parse(R"(["bytes"])"), kI32, CodecRegistry::builtin()).prepare(spec_of({8}))->partial(),
            nullptr);
}

TEST(PreparedChain, InvalidSpecsAreRejectedWhenPrepared) {
  const auto transpose = CodecChain::from_v3_json(
      parse(R"([{"name":"transpose","configuration":{"order":[1,0]}},"bytes"])"), kI32, CodecRegistry::builtin());
  EXPECT_THROW(transpose.prepare(spec_of({3, 4, 5})), InvalidArgumentError);
  const auto sharding = CodecChain::from_v3_json(
      parse(R"([{"name":"sharding_indexed","configuration":{"chunk_shape":[3],
                 "index_codecs":["bytes"],"codecs":["bytes"]}}])"),
      kI32, CodecRegistry::builtin());
  EXPECT_THROW(sharding.prepare(spec_of({8})), InvalidArgumentError);  // 3 does not divide 8
  EXPECT_NO_THROW(sharding.prepare(spec_of({9})));
  const auto strings = CodecChain::from_v3_json(parse(R"(["bytes"])"), DataType::string(), CodecRegistry::builtin());
  EXPECT_THROW(strings.prepare({{3}, DataType::string(), FillValue{}}), UnsupportedError);
  EXPECT_THROW(CodecChain().prepare(spec_of({1})), InvalidArgumentError);
}

TEST(PreparedChain, ValidatesOnceAndNotPerChunk) {
  auto counter = std::make_shared<CountingIdentity>();
  const auto chain = CodecChain::from_codecs({counter, make(R"("bytes")")});
  const ChunkSpec spec = spec_of({6});
  const auto prepared = chain.prepare(spec);
  const int after_prepare = counter->spec_calls;
  EXPECT_GE(after_prepare, 1);
  const Buffer encoded = prepared->encode(counting(spec.shape));
  for (int i = 0; i < 5; ++i) prepared->decode(encoded.view());
  EXPECT_EQ(counter->spec_calls, after_prepare);
  // The chain's own functions work it out at every call.
  chain.decode(encoded.view(), spec);
  EXPECT_GT(counter->spec_calls, after_prepare);
  EXPECT_THROW(chain.prepare(spec_of({2, 3})), InvalidArgumentError);
}

TEST(PreparedChain, ArrayMetadataPreparesItsChainOnceForEveryThread) {
  ArrayMetadata m;
  m.shape = {10, 10};
  m.chunk_shape = {4, 5};
  m.dtype = kI32;
  m.fill_value = FillValue::zero(kI32);
  m.codecs = std::make_shared<const CodecChain>(
      CodecChain::from_v3_json(parse(R"(["bytes"])"), kI32, CodecRegistry::builtin()));
  std::vector<const PreparedChain*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < seen.size(); ++t) threads.emplace_back([&, t] { seen[t] = &m.prepared_chain(); });
  for (auto& thread : threads) thread.join();
  for (const PreparedChain* p : seen) EXPECT_EQ(p, seen[0]);
  EXPECT_EQ(seen[0]->spec().shape, (Shape{4, 5}));
  EXPECT_EQ(seen[0]->chunk_bytes(), 80u);
  // A copy prepares its own, for its own fields.
  ArrayMetadata copy = m;
  copy.chunk_shape = {2, 2};
  EXPECT_NE(&copy.prepared_chain(), seen[0]);
  EXPECT_EQ(copy.prepared_chain().chunk_bytes(), 16u);
  // Changing a field after the chain was prepared is a programming error, caught.
  m.chunk_shape = {5, 5};
  EXPECT_THROW(m.prepared_chain(), InternalError);
  // Metadata that cannot be prepared fails each time it is asked.
  ArrayMetadata bad = copy;
  bad.chunk_shape = {2, 2, 2};
  bad.codecs = std::make_shared<const CodecChain>(CodecChain::from_v3_json(
      parse(R"([{"name":"transpose","configuration":{"order":[1,0]}},"bytes"])"), kI32, CodecRegistry::builtin()));
  EXPECT_THROW(bad.prepared_chain(), InvalidArgumentError);
  EXPECT_THROW(bad.prepared_chain(), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
