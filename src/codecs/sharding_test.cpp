#include "codecs/sharding.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codecs/compressor_test_support.h"
#include "core/settings_env.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::Bytes;
using testing::expect_error;
using testing::from_hex;
using testing::view;

const json kBytesLE = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
const json kCrc = {{"name", "crc32c"}};
const json kDefaultIndex = json::array({kBytesLE, kCrc});

json sharding_json(const Shape& chunk_shape, json codecs, const char* location = "end",
                   json index_codecs = kDefaultIndex) {
  json config = {{"chunk_shape", chunk_shape}, {"codecs", std::move(codecs)}, {"index_codecs", std::move(index_codecs)}};
  if (location != nullptr) config["index_location"] = location;
  return {{"name", "sharding_indexed"}, {"configuration", std::move(config)}};
}

std::shared_ptr<const ShardingCodec> make_codec(const json& entry, const DataType& dtype) {
  auto codec = std::dynamic_pointer_cast<const ShardingCodec>(CodecRegistry::builtin().make_v3(entry, {dtype, 3}));
  EXPECT_NE(codec, nullptr);
  return codec;
}

CodecChain make_chain(const json& codecs, const DataType& dtype) {
  return CodecChain::from_v3_json(codecs, dtype, CodecRegistry::builtin());
}

// An array whose element i is value(i), converted to T.
template <typename T, typename F>
NDBuffer array_of(const Shape& shape, const DataType& dtype, F value) {
  NDBuffer nd = NDBuffer::allocate(shape, dtype);
  auto* p = reinterpret_cast<T*>(nd.data());
  for (std::uint64_t i = 0; i < nd.num_elements(); ++i) p[i] = static_cast<T>(value(i));
  return nd;
}

Bytes bytes_of(const NDBuffer& nd) { return testing::to_vector(nd.buffer()); }
Bytes bytes_of(const Buffer& b) { return testing::to_vector(b); }

void expect_same_array(const NDBuffer& actual, const NDBuffer& expected) {
  EXPECT_EQ(actual.shape(), expected.shape());
  EXPECT_EQ(actual.dtype(), expected.dtype());
  EXPECT_EQ(bytes_of(actual), bytes_of(expected));
}

// Encodes through a whole chain and decodes back; returns the encoded shard.
Buffer expect_chain_round_trip(const json& codecs, const NDBuffer& data, const FillValue& fill) {
  const CodecChain chain = make_chain(codecs, data.dtype());
  const ChunkSpec spec{data.shape(), data.dtype(), fill};
  chain.validate(spec);
  Buffer encoded = chain.encode(data, spec);
  expect_same_array(chain.decode(encoded.view(), spec), data);
  return encoded;
}

// Re-encodes the index of `shard` after `edit` changed its entries (the checksum stays valid).
template <typename Edit>
Bytes with_edited_index(const Bytes& shard, const ShardingCodec& codec, const ShardLayout& layout, Edit edit) {
  const ByteRange range = codec.index_byte_range(layout);
  const auto [begin, end] = range.kind == ByteRange::Kind::kSuffix
                                ? std::pair<std::uint64_t, std::uint64_t>{shard.size() - range.suffix, shard.size()}
                                : std::pair<std::uint64_t, std::uint64_t>{range.start, range.end};
  auto entries = codec.decode_index(ByteView(shard).subspan(begin, end - begin), layout, shard.size());
  edit(entries);
  NDBuffer index = NDBuffer::allocate(layout.index_spec.shape, layout.index_spec.dtype);
  std::memcpy(index.data(), entries.data(), entries.size() * 16);
  const Buffer encoded = codec.index_codecs().encode(index, layout.index_spec);
  Bytes out = shard;
  std::memcpy(out.data() + begin, encoded.data(), encoded.size());
  return out;
}

const DataType kI32 = DataType::int_(32);
const DataType kU16 = DataType::uint_(16);
const DataType kI16 = DataType::int_(16);
const DataType kF64 = DataType::float_(64);
const DataType kU8 = DataType::uint_(8);
const DataType kF32 = DataType::float_(32);

// ---- Round trips ------------------------------------------------------------------------------

TEST(ShardingCodec, RoundTripsOneTwoAndThreeDimensionsWithBothIndexLocations) {
  struct Case {
    Shape shard;
    Shape inner;
    DataType dtype;
  };
  // Grids of inner chunks that are not powers of two (3, 4x3, 2x3x2) exercise the Morton
  // layout; the 2-D case also has inner chunks that span whole rows.
  const std::vector<Case> cases = {
      {{12}, {4}, kI32},
      {{8, 9}, {2, 3}, kU8},
      {{6, 8}, {2, 8}, kF32},
      {{4, 6, 4}, {2, 2, 2}, kF32},
  };
  for (const auto& c : cases) {
    for (const char* location : {"start", "end"}) {
      SCOPED_TRACE(fmt::format("shard [{}] inner [{}] {} index at {}", fmt::join(c.shard, ","),
                               fmt::join(c.inner, ","), c.dtype.name(), location));
      const NDBuffer data = c.dtype == kU8    ? array_of<std::uint8_t>(c.shard, c.dtype, [](auto i) { return i * 7 + 1; })
                            : c.dtype == kI32 ? array_of<std::int32_t>(c.shard, c.dtype, [](auto i) { return i * 1000 + 1; })
                                              : array_of<float>(c.shard, c.dtype, [](auto i) { return i * 0.25 + 1; });
      const json codecs = json::array({sharding_json(c.inner, json::array({kBytesLE}), location)});
      const Buffer shard = expect_chain_round_trip(codecs, data, FillValue::zero(c.dtype));
      // Uncompressed: the inner chunks plus a 16-bytes-per-entry index and its checksum.
      const std::uint64_t n_inner = checked_num_elements(c.shard) / checked_num_elements(c.inner);
      EXPECT_EQ(shard.size(), data.nbytes() + 16 * n_inner + 4);
    }
  }
}

TEST(ShardingCodec, EntriesPointAtEachInnerChunkAndTheLayoutFollowsMortonOrder) {
  // Inner chunk k holds the value k everywhere (nothing is fill: values start at 1).
  const Shape shard_shape{4, 8};
  const auto codec = make_codec(sharding_json({2, 2}, json::array({kBytesLE}), "start"), kI32);
  const ChunkSpec spec{shard_shape, kI32, FillValue::zero(kI32)};
  const NDBuffer data = array_of<std::int32_t>(shard_shape, kI32, [](std::uint64_t i) {
    const std::uint64_t row = i / 8, col = i % 8;
    return (row / 2) * 4 + col / 2 + 1;
  });
  const Buffer shard = codec->encode(data, spec);
  const ShardLayout layout = codec->layout(spec);
  EXPECT_EQ(layout.chunks_per_shard, (Shape{2, 4}));
  EXPECT_EQ(layout.index_size, 8u * 16 + 4);
  const auto entries = codec->decode_index(shard.view().first(layout.index_size), layout, shard.size());
  ASSERT_EQ(entries.size(), 8u);
  const auto morton = morton_order(layout.chunks_per_shard);
  for (std::size_t slot = 0; slot < morton.size(); ++slot) {
    const ShardIndexEntry& entry = entries[morton[slot]];
    // Absolute offsets: the index comes first, then the chunks in Morton order.
    EXPECT_EQ(entry.offset, layout.index_size + slot * 16);
    EXPECT_EQ(entry.nbytes, 16u);
    NDBuffer chunk = codec->decode_inner_chunk(shard.view().subspan(entry.offset, entry.nbytes), layout);
    EXPECT_EQ(chunk.shape(), (Shape{2, 2}));
    EXPECT_EQ(reinterpret_cast<const std::int32_t*>(chunk.data())[3], static_cast<std::int32_t>(morton[slot] + 1));
  }
  const std::uint64_t coords[] = {1, 2};
  EXPECT_EQ(inner_chunk_ordinal(coords, layout), 6u);
  const std::uint64_t outside[] = {2, 0};
  expect_error<InvalidArgumentError>([&] { inner_chunk_ordinal(outside, layout); }, "outside");
}

TEST(ShardingCodec, MortonOrderMatchesZarrPython) {
  // zarr.core.indexing._morton_order(shape), as C-order ordinals (zarr-python 3.1.6).
  EXPECT_EQ(morton_order({2, 4}), (std::vector<std::uint64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(morton_order({3, 1, 2}), (std::vector<std::uint64_t>{0, 2, 1, 3, 4, 5}));
  EXPECT_EQ(morton_order({3, 5}), (std::vector<std::uint64_t>{0, 5, 1, 6, 10, 11, 2, 7, 3, 8, 12, 13, 4, 9, 14}));
  EXPECT_EQ(morton_order({4}), (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(morton_order({}), (std::vector<std::uint64_t>{0}));
}

TEST(ShardingCodec, InnerCodecsRoundTrip) {
  const Shape shard_shape{6, 8, 4};
  const NDBuffer data = array_of<std::int32_t>(shard_shape, kI32, [](auto i) { return (i % 37) * 3 - 50; });
  const json gzip = {{"name", "gzip"}, {"configuration", {{"level", 5}}}};
  const json zstd = {{"name", "zstd"}, {"configuration", {{"level", 3}}}};
  const json transpose = {{"name", "transpose"}, {"configuration", {{"order", {2, 0, 1}}}}};
  const json blosc = {{"name", "blosc"},
                      {"configuration", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 4}}}};
  for (const json& inner : {json::array({kBytesLE, gzip}), json::array({kBytesLE, zstd}),
                            json::array({transpose, kBytesLE, blosc})}) {
    for (const char* location : {"start", "end"}) {
      SCOPED_TRACE(inner.dump() + " " + location);
      expect_chain_round_trip(json::array({sharding_json({3, 4, 2}, inner, location)}), data, FillValue::zero(kI32));
    }
  }
}

TEST(ShardingCodec, BytesToBytesCodecsAfterShardingRoundTrip) {
  // The spec allows them (tensorstore refuses them); the chain's size bounds must cope.
  const NDBuffer data = array_of<std::int16_t>({16, 4}, kI16, [](auto i) { return i; });
  const json codecs = json::array({sharding_json({4, 4}, json::array({kBytesLE})), kCrc,
                                   {{"name", "zstd"}, {"configuration", {{"level", 1}}}}});
  expect_chain_round_trip(codecs, data, FillValue::zero(kI16));
}

TEST(ShardingCodec, NestedShardingRoundTripsAndDepthIsLimited) {
  const NDBuffer data = array_of<std::uint16_t>({8, 8}, kU16, [](auto i) { return i % 5 == 0 ? 0 : i; });
  json inner = json::array({kBytesLE});
  inner = json::array({sharding_json({2, 2}, inner, "start")});
  inner = json::array({sharding_json({4, 2}, inner, "end")});
  expect_chain_round_trip(json::array({sharding_json({4, 4}, inner, "start")}), data, FillValue::zero(kU16));

  // kMaxShardingDepth levels are fine; one more is refused while parsing.
  auto nested = [](int levels) {
    json codecs = json::array({kBytesLE});
    for (int i = 0; i < levels; ++i) codecs = json::array({sharding_json({1}, codecs)});
    return codecs;
  };
  const CodecChain deepest = make_chain(nested(kMaxShardingDepth), kU16);
  const NDBuffer one = array_of<std::uint16_t>({1}, kU16, [](auto) { return 9; });
  const ChunkSpec one_spec{{1}, kU16, FillValue::zero(kU16)};
  expect_same_array(deepest.decode(deepest.encode(one, one_spec).view(), one_spec), one);
  expect_error<ResourceExhaustedError>([&] { make_chain(nested(kMaxShardingDepth + 1), kU16); }, "nested");
}

// ---- Empty inner chunks and empty shards ---------------------------------------------------------

TEST(ShardingCodec, InnerChunksOfFillValueAreNotStored) {
  for (const char* location : {"start", "end"}) {
    SCOPED_TRACE(location);
    const auto codec = make_codec(sharding_json({2, 3}, json::array({kBytesLE}), location), kI32);
    const FillValue fill = FillValue::of<std::int32_t>(-1);
    const ChunkSpec spec{{4, 6}, kI32, fill};
    // Only the inner chunk at (1, 0) (rows 2-3, columns 0-2) holds data.
    const NDBuffer data = array_of<std::int32_t>({4, 6}, kI32, [](std::uint64_t i) {
      return (i / 6 >= 2 && i % 6 < 3) ? static_cast<std::int64_t>(i) : -1;
    });
    const Buffer shard = codec->encode(data, spec);
    const ShardLayout layout = codec->layout(spec);
    EXPECT_EQ(shard.size(), 24u + layout.index_size);
    const Bytes raw = bytes_of(shard);
    const ByteView index = std::string_view(location) == "start" ? ByteView(raw).first(layout.index_size)
                                                                 : ByteView(raw).last(layout.index_size);
    const auto entries = codec->decode_index(index, layout, raw.size());
    for (std::size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(entries[i].is_empty(), i != 2) << i;
    EXPECT_FALSE(index_is_empty(entries));
    expect_same_array(codec->decode(view(raw), spec, BufferPrototype::host()), data);
  }
}

TEST(ShardingCodec, AllEmptyShardIsTheBareIndexAndDecodesToTheFillValue) {
  for (const char* location : {"start", "end"}) {
    SCOPED_TRACE(location);
    const auto codec = make_codec(sharding_json({2}, json::array({kBytesLE, kCrc}), location), kF64);
    const FillValue fill = FillValue::of(std::numeric_limits<double>::quiet_NaN());
    const ChunkSpec spec{{6}, kF64, fill};
    const NDBuffer data = NDBuffer::filled({6}, kF64, fill);
    const Buffer shard = codec->encode(data, spec);
    const ShardLayout layout = codec->layout(spec);
    ASSERT_EQ(shard.size(), layout.index_size);
    const auto entries = codec->decode_index(shard.view(), layout, shard.size());
    EXPECT_TRUE(index_is_empty(entries));
    expect_same_array(codec->decode(shard.view(), spec, BufferPrototype::host()), data);
    // What the engine relies on to delete the key instead (see sharding.h).
    EXPECT_TRUE(all_equal_fill(data.buffer().view(), kF64, fill));
  }
}

// ---- Configuration and validation ------------------------------------------------------------------

TEST(ShardingCodec, JsonRoundTripsAndIndexLocationDefaultsToEnd) {
  const json entry = sharding_json({2, 2}, json::array({kBytesLE}), nullptr);
  const auto codec = make_codec(entry, kI32);
  EXPECT_EQ(codec->index_location(), ShardIndexLocation::kEnd);
  json expected = entry;
  expected["configuration"]["index_location"] = "end";
  EXPECT_EQ(codec->to_json(), expected);
  EXPECT_EQ(codec->chunk_shape(), (Shape{2, 2}));
  // The short-hand names of v3.1 work inside the nested lists too.
  const json shorthand = {{"name", "sharding_indexed"},
                          {"configuration",
                           {{"chunk_shape", {2}}, {"codecs", {"bytes"}}, {"index_codecs", {kBytesLE, "crc32c"}}}}};
  EXPECT_NE(make_codec(shorthand, kU8), nullptr);
}

TEST(ShardingCodec, ReportsItsInnerChunksAndRebuildsWithAnotherInnerChain) {
  const auto codec = make_codec(sharding_json({2, 3}, json::array({kBytesLE}), "start"), kI32);
  const ArrayToBytesCodec& generic = *codec;
  ASSERT_NE(generic.inner_chunk_shape(), nullptr);
  EXPECT_EQ(*generic.inner_chunk_shape(), (Shape{2, 3}));
  ASSERT_NE(generic.inner_chain(), nullptr);
  EXPECT_EQ(generic.inner_chain()->to_json(), json::array({kBytesLE}));
  // Same shape, index and location; the new inner chain.
  const CodecChain zstd = make_chain(json::array({kBytesLE, {{"name", "zstd"}, {"configuration", {{"level", 2}}}}}), kI32);
  const auto rebuilt = generic.with_inner_chain(zstd);
  json expected = codec->to_json();
  expected["configuration"]["codecs"] = zstd.to_json();
  EXPECT_EQ(rebuilt->to_json(), expected);
  // Codecs without inner chunks say so.
  const auto bytes = std::dynamic_pointer_cast<const ArrayToBytesCodec>(CodecRegistry::builtin().make_v3(kBytesLE, {kI32, 3}));
  EXPECT_EQ(bytes->inner_chunk_shape(), nullptr);
  EXPECT_EQ(bytes->inner_chain(), nullptr);
  EXPECT_THROW(bytes->with_inner_chain(zstd), UnsupportedError);
}

TEST(ShardingCodec, IndexByteRange) {
  const ChunkSpec spec{{8}, kI32, FillValue::zero(kI32)};
  for (const char* location : {"start", "end"}) {
    const auto codec = make_codec(sharding_json({2}, json::array({kBytesLE}), location), kI32);
    const ShardLayout layout = codec->layout(spec);
    EXPECT_EQ(layout.index_size, 4u * 16 + 4);
    const ByteRange range = codec->index_byte_range(layout);
    if (std::string_view(location) == "start") {
      EXPECT_EQ(range.kind, ByteRange::Kind::kRange);
      EXPECT_EQ(range.start, 0u);
      EXPECT_EQ(range.end, 68u);
    } else {
      EXPECT_EQ(range.kind, ByteRange::Kind::kSuffix);
      EXPECT_EQ(range.suffix, 68u);
    }
  }
  // Without the checksum the index is exactly 16 bytes per inner chunk.
  const auto plain = make_codec(sharding_json({2}, json::array({kBytesLE}), "end", json::array({kBytesLE})), kI32);
  EXPECT_EQ(plain->layout(spec).index_size, 64u);
}

TEST(ShardingCodec, RejectsBadConfiguration) {
  const json bytes = json::array({kBytesLE});
  const json gzip = {{"name", "gzip"}, {"configuration", {{"level", 1}}}};
  expect_error<InvalidArgumentError>(
      [&] { make_codec(sharding_json({2}, bytes, "end", json::array({kBytesLE, gzip})), kI32); },
      "fixed encoded size");
  expect_error<InvalidArgumentError>([&] { make_codec(sharding_json({2}, bytes, "middle"), kI32); }, "index_location");
  expect_error<InvalidArgumentError>([&] { make_codec(sharding_json({0, 2}, bytes), kI32); }, "positive");
  json negative = sharding_json({2}, bytes);
  negative["configuration"]["chunk_shape"] = {-1};
  expect_error<InvalidArgumentError>([&] { make_codec(negative, kI32); }, "positive");
  json extra = sharding_json({2}, bytes);
  extra["configuration"]["extra"] = 1;
  expect_error<InvalidArgumentError>([&] { make_codec(extra, kI32); }, "unexpected configuration key");
  for (const char* key : {"chunk_shape", "codecs", "index_codecs"}) {
    json missing = sharding_json({2}, bytes);
    missing["configuration"].erase(key);
    expect_error<InvalidArgumentError>([&] { make_codec(missing, kI32); }, key);
  }
  // The inner chain must itself be valid (exactly one array->bytes codec).
  expect_error<InvalidArgumentError>([&] { make_codec(sharding_json({2}, json::array({kCrc})), kI32); }, "codecs");
  expect_error<UnsupportedError>(
      [&] { make_codec(sharding_json({2}, json::array({kBytesLE, {{"name", "nope"}}})), kI32); }, "nope");
}

TEST(ShardingCodec, InnerChunkShapeMustMatchAndDivideTheShard) {
  const auto codec = make_codec(sharding_json({4, 3}, json::array({kBytesLE})), kI32);
  const FillValue zero = FillValue::zero(kI32);
  expect_error<InvalidArgumentError>([&] { codec->validate({{8, 8}, kI32, zero}); }, "does not divide");
  expect_error<InvalidArgumentError>([&] { codec->validate({{8}, kI32, zero}); }, "dimensions");
  EXPECT_NO_THROW(codec->validate({{8, 9}, kI32, zero}));
  // decode and encode validate too, before reading anything.
  const Bytes junk(100);
  expect_error<InvalidArgumentError>(
      [&] { codec->decode(view(junk), {{8, 8}, kI32, zero}, BufferPrototype::host()); }, "does not divide");
  const NDBuffer data = NDBuffer::filled({6, 6}, kI32, zero);
  expect_error<InvalidArgumentError>([&] { codec->encode(data, {{6, 6}, kI32, zero}); }, "does not divide");
  // The whole chain validates through the codec.
  const CodecChain chain = make_chain(json::array({sharding_json({4, 3}, json::array({kBytesLE}))}), kI32);
  expect_error<InvalidArgumentError>([&] { chain.validate({{6, 6}, kI32, zero}); }, "does not divide");
}

// ---- Bad shards --------------------------------------------------------------------------------

class BadShards : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    codec_ = make_codec(sharding_json({2, 2}, json::array({kBytesLE}), GetParam()), kI32);
    layout_ = codec_->layout(spec_);
    data_ = array_of<std::int32_t>(spec_.shape, kI32, [](auto i) { return i + 1; });
    shard_ = bytes_of(codec_->encode(data_, spec_));
  }
  bool at_start() const { return std::string_view(GetParam()) == "start"; }
  void expect_data_loss(const Bytes& shard, std::string_view fragment) {
    expect_error<DataLossError>([&] { codec_->decode(view(shard), spec_, BufferPrototype::host()); }, fragment);
  }

  const ChunkSpec spec_{{4, 4}, kI32, FillValue::zero(kI32)};
  std::shared_ptr<const ShardingCodec> codec_;
  ShardLayout layout_;
  NDBuffer data_;
  Bytes shard_;  // 4 inner chunks of 16 bytes + a 68-byte index
};

TEST_P(BadShards, TheValidShardDecodes) {
  ASSERT_EQ(shard_.size(), 64u + 68);
  expect_same_array(codec_->decode(view(shard_), spec_, BufferPrototype::host()), data_);
}

TEST_P(BadShards, ShardShorterThanItsIndex) {
  for (std::size_t size : {0, 1, 67}) {
    expect_data_loss(Bytes(shard_.begin(), shard_.begin() + size), "shorter than its 68-byte index");
  }
  expect_error<DataLossError>([&] { codec_->decode_index(ByteView(shard_).first(60), layout_, std::nullopt); },
                              "must be 68 bytes");
}

TEST_P(BadShards, ChecksumMismatchInTheIndex) {
  Bytes bad = shard_;
  const std::size_t index_begin = at_start() ? 0 : shard_.size() - 68;
  bad[index_begin + 5] ^= std::byte{0x10};
  expect_data_loss(bad, "shard index: crc32c");
  Bytes bad_crc = shard_;
  bad_crc[index_begin + 67] ^= std::byte{0x01};
  expect_data_loss(bad_crc, "checksum mismatch");
}

TEST_P(BadShards, EntryPastTheEndOfTheShard) {
  expect_data_loss(with_edited_index(shard_, *codec_, layout_, [](auto& e) { e[3].nbytes = 1000; }),
                   "past the end of the 132-byte shard");
  expect_data_loss(with_edited_index(shard_, *codec_, layout_, [](auto& e) { e[1].offset = 5000; }),
                   "past the end");
}

TEST_P(BadShards, EntryThatOverflows) {
  expect_data_loss(with_edited_index(shard_, *codec_, layout_,
                                     [](auto& e) {
                                       e[0].offset = ~std::uint64_t{0} - 8;
                                       e[0].nbytes = 16;
                                     }),
                   "overflows");
}

TEST_P(BadShards, OnlyOneFieldIsTheEmptyMarker) {
  expect_data_loss(with_edited_index(shard_, *codec_, layout_, [](auto& e) { e[2].offset = kShardEntryEmpty; }),
                   "only one field");
  expect_data_loss(with_edited_index(shard_, *codec_, layout_, [](auto& e) { e[2].nbytes = kShardEntryEmpty; }),
                   "only one field");
}

TEST_P(BadShards, EntryOverlappingTheIndex) {
  if (at_start()) {
    // Offsets count from the start of the shard: the first 68 bytes are the index.
    const Bytes bad = with_edited_index(shard_, *codec_, layout_, [](auto& e) { e[0].offset = 60; });
    expect_data_loss(bad, "overlap the index");
    // Caught from the index alone too, for partial reads that do not know the shard size.
    expect_error<DataLossError>(
        [&] { codec_->decode_index(ByteView(bad).first(68), layout_, std::nullopt); }, "overlap the index");
  } else {
    // The data ends where the index begins, at byte 64.
    expect_data_loss(with_edited_index(shard_, *codec_, layout_, [](auto& e) { e[0].offset = 60; }),
                     "overlap the index");
  }
}

TEST_P(BadShards, InnerChunkOfTheWrongSize) {
  // An entry that is in range but too short for the inner bytes codec.
  expect_data_loss(with_edited_index(shard_, *codec_, layout_, [](auto& e) { e[1].nbytes = 12; }),
                   "inner chunk (0,1) of the shard: bytes codec");
}

TEST_P(BadShards, EmptyEntriesReadAsTheFillValue) {
  const Bytes edited = with_edited_index(shard_, *codec_, layout_, [](auto& e) { e[3] = ShardIndexEntry{}; });
  const NDBuffer out = codec_->decode(view(edited), spec_, BufferPrototype::host());
  const auto* p = reinterpret_cast<const std::int32_t*>(out.data());
  EXPECT_EQ(p[0], 1);
  EXPECT_EQ(p[2 * 4 + 2], 0);  // inside inner chunk (1,1)
  EXPECT_EQ(p[3 * 4 + 3], 0);
}

INSTANTIATE_TEST_SUITE_P(BothLocations, BadShards, ::testing::Values("start", "end"));

// Invariant 1 of RELIABILITY.md: whatever the bytes, a value or a typed error. The index has
// no checksum here, so corrupted entries reach the entry checks instead of failing the CRC.
TEST(ShardingCodec, CorruptAndTruncatedShardsGiveAValueOrATypedError) {
  const json gzip = {{"name", "gzip"}, {"configuration", {{"level", 1}}}};
  const ChunkSpec spec{{6, 4}, kI32, FillValue::zero(kI32)};
  const NDBuffer data = array_of<std::int32_t>(spec.shape, kI32, [](auto i) { return i % 7 == 0 ? 0 : i; });
  std::mt19937 random(7);
  for (const char* location : {"start", "end"}) {
    const auto codec =
        make_codec(sharding_json({2, 2}, json::array({kBytesLE, gzip}), location, json::array({kBytesLE})), kI32);
    const Bytes shard = bytes_of(codec->encode(data, spec));
    auto decode = [&](const Bytes& bytes) {
      try {
        codec->decode(view(bytes), spec, BufferPrototype::host());
      } catch (const Error&) {
      }  // anything else escapes and fails the test
    };
    for (std::size_t size = 0; size < shard.size(); ++size) decode(Bytes(shard.begin(), shard.begin() + size));
    for (int trial = 0; trial < 2000; ++trial) {
      Bytes bad = shard;
      const int flips = 1 + static_cast<int>(random() % 3);
      for (int f = 0; f < flips; ++f) bad[random() % bad.size()] = static_cast<std::byte>(random() & 0xFF);
      decode(bad);
    }
  }
}

// ---- Shards written by zarr-python 3 -------------------------------------------------------------------

struct ZarrPythonShard {
  const char* array;   // what the generator called it
  const char* key;     // the shard's key in that array
  const char* codec;   // the "sharding_indexed" entry of its zarr.json
  const char* hex;     // the shard file
};

// Written by zarr-python 3.1.6 (numcodecs 0.16.6, numpy 2.4.6) with
//   zarr.create_array(store=path, shape=data.shape, dtype=data.dtype, shards=..., chunks=...,
//                     fill_value=..., compressors=..., filters=..., serializer=...); a[...] = data
// (see expected_shard() for the data of each array).
const ZarrPythonShard kZarrPythonShards[] = {
#include "codecs/sharding_test_vectors.inc"
};

// The array each shard above decodes to, its spec, and whether zarr-python's bytes are
// reproducible (no compressor in the inner chain: gzip, zstd and blosc output depends on
// the library version, and gzip headers carry a time stamp).
struct Expected {
  ChunkSpec spec;
  NDBuffer values;
  bool byte_exact = false;
};

Expected expected_shard(std::string_view array, std::string_view key) {
  if (array == "2d_end_bytes" || array == "2d_start_bytes" || array == "2d_gzip_start" || array == "2d_zstd") {
    // int32 [8,8], shards [8,8]: arange(64) + 1 with [0:4, 2:6] = 0 (fill 0).
    NDBuffer v = array_of<std::int32_t>({8, 8}, kI32, [](std::uint64_t i) {
      return (i / 8 < 4 && i % 8 >= 2 && i % 8 < 6) ? 0 : i + 1;
    });
    const bool exact = array == "2d_end_bytes" || array == "2d_start_bytes";
    return {{{8, 8}, kI32, FillValue::zero(kI32)}, std::move(v), exact};
  }
  if (array == "3d_crc_inner" || array == "3d_transpose_blosc") {
    // uint16 [6,2,4]: arange * 3 + 7 with [2:4, :, 0:2] = 5 (fill 5).
    NDBuffer v = array_of<std::uint16_t>({6, 2, 4}, kU16, [](std::uint64_t i) {
      return (i / 8 >= 2 && i / 8 < 4 && i % 4 < 2) ? 5 : i * 3 + 7;
    });
    return {{{6, 2, 4}, kU16, FillValue::of<std::uint16_t>(5)}, std::move(v), array == "3d_crc_inner"};
  }
  if (array == "1d_edge") {
    // float64 [10], shards [6], chunks [2]: arange(10) * 0.5 - 1, fill NaN. Shard c/1 covers
    // elements 6..11, so its last inner chunk lies past the array: fill, not stored.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::uint64_t first = key == "c/0" ? 0 : 6;
    NDBuffer v = array_of<double>({6}, kF64, [&](std::uint64_t i) { return first + i < 10 ? (first + i) * 0.5 - 1 : nan; });
    return {{{6}, kF64, FillValue::of(nan)}, std::move(v), true};
  }
  // 2d_nested: int16 [8,8], one shard: arange(64) with [4:8, 0:2] = 0, sharding [4,4] of
  // sharding [2,2] of bytes.
  NDBuffer v = array_of<std::int16_t>({8, 8}, kI16, [](std::uint64_t i) { return (i / 8 >= 4 && i % 8 < 2) ? 0 : i; });
  return {{{8, 8}, kI16, FillValue::zero(kI16)}, std::move(v), true};
}

TEST(ShardingCodec, DecodesAndReproducesZarrPythonShards) {
  int byte_exact = 0;
  for (const auto& vector : kZarrPythonShards) {
    SCOPED_TRACE(std::string(vector.array) + " " + vector.key);
    Expected expected = expected_shard(vector.array, vector.key);
    const json entry = json::parse(vector.codec);
    const auto codec = make_codec(entry, expected.spec.dtype);
    const Bytes stored = from_hex(vector.hex);
    expect_same_array(codec->decode(view(stored), expected.spec, BufferPrototype::host()), expected.values);
    if (expected.byte_exact) {
      EXPECT_EQ(bytes_of(codec->encode(expected.values, expected.spec)), stored);
      EXPECT_EQ(codec->to_json(), entry);  // the metadata zarr-python wrote, as written
      ++byte_exact;
    }
  }
  EXPECT_EQ(byte_exact, 6);
}

// ---- zarr-java's shards with the index at the start and at the end ---------------------------------

fs::path corpus_root() {
  if (auto env = environment_variable("ZARRKIT_CORPUS")) return *env;
  return fs::path(ZARRKIT_SOURCE_DIR) / ".." / "shared" / "corpus";
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Bytes read_file(const fs::path& path) { return testing::to_bytes(read_text(path)); }

TEST(ShardingCodec, DecodesZarrJavaShardsWithTheIndexAtStartAndEnd) {
  const fs::path root = corpus_root() / "zarr-java" / "testdata" / "sharding_index_location";
  if (!fs::is_directory(root)) GTEST_SKIP() << "interop corpus not found at " << root << " (set ZARRKIT_CORPUS)";
  // int32 [16,16,16] = arange(4096), shards [16,8,8] (keys c/0/j/k), inner chunks [8,4,8]
  // with transpose, bytes and blosc(lz4); 4 inner chunks and a 68-byte index per shard.
  const ChunkSpec spec{{16, 8, 8}, kI32, FillValue::zero(kI32)};
  for (const char* location : {"start", "end"}) {
    SCOPED_TRACE(location);
    const json metadata = json::parse(read_text(root / location / "zarr.json"));
    const auto codec = make_codec(metadata.at("codecs").at(0), kI32);
    EXPECT_EQ(codec->index_location(), std::string_view(location) == "start" ? ShardIndexLocation::kStart
                                                                             : ShardIndexLocation::kEnd);
    const ShardLayout layout = codec->layout(spec);
    EXPECT_EQ(layout.index_size, 68u);
    for (std::uint64_t j = 0; j < 2; ++j) {
      for (std::uint64_t k = 0; k < 2; ++k) {
        const Bytes shard = read_file(root / location / "c" / "0" / std::to_string(j) / std::to_string(k));
        ASSERT_EQ(shard.size(), 4228u);
        const NDBuffer expected = array_of<std::int32_t>(spec.shape, kI32, [&](std::uint64_t i) {
          const std::uint64_t z = i / 64, y = (i / 8) % 8 + 8 * j, x = i % 8 + 8 * k;
          return z * 256 + y * 16 + x;
        });
        expect_same_array(codec->decode(view(shard), spec, BufferPrototype::host()), expected);
        // Our own encoding of the same values decodes back the same.
        const Buffer ours = codec->encode(expected, spec);
        expect_same_array(codec->decode(ours.view(), spec, BufferPrototype::host()), expected);
      }
    }
  }
}

}  // namespace
}  // namespace zarrkit
