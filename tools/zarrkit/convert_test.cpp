#include "zarrkit/convert.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "zarrkit/app.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit::cli {
namespace {

using nlohmann::json;

ArrayMetadata v3_array(json codecs, Shape shape = {8, 6}, DataType dtype = DataType::int_(16)) {
  ArraySpec spec;
  spec.shape = shape;
  spec.chunks = Shape(shape.size(), 2);
  spec.dtype = dtype;
  spec.codecs = std::move(codecs);
  return make_array_metadata(spec, CodecRegistry::builtin());
}

ArrayMetadata v2_array(json compressor, char order, DataType dtype, json attributes = json::object()) {
  ArraySpec spec;
  spec.zarr_format = 2;
  spec.shape = {8, 6};
  spec.chunks = {4, 3};
  spec.dtype = dtype;
  spec.v2_compressor = std::move(compressor);
  spec.v2_order = order;
  spec.attributes = std::move(attributes);
  return make_array_metadata(spec, CodecRegistry::builtin());
}

WriteOptions to_format(int format) {
  WriteOptions o;
  o.zarr_format = format;
  return o;
}

// The spec must also be valid: make_array_metadata accepts it.
ArrayMetadata build(const ArraySpec& spec) { return make_array_metadata(spec, CodecRegistry::builtin()); }

const json kBytesLE = json::parse(R"({"name": "bytes", "configuration": {"endian": "little"}})");
const json kBytesBE = json::parse(R"({"name": "bytes", "configuration": {"endian": "big"}})");
const json kTranspose10 = json::parse(R"({"name": "transpose", "configuration": {"order": [1, 0]}})");

TEST(ConvertV3ToV2, BytesAndOneCompressorMap) {
  ArraySpec spec = copy_spec(v3_array(json::array({kBytesLE, {{"name", "gzip"}, {"configuration", {{"level", 4}}}}})),
                             to_format(2));
  EXPECT_EQ(spec.zarr_format, 2);
  EXPECT_EQ(spec.v2_compressor, json::parse(R"({"id": "gzip", "level": 4})"));
  EXPECT_EQ(spec.v2_order, 'C');
  ArrayMetadata m = build(spec);
  EXPECT_EQ(array_metadata_to_v2_json(m)["dtype"], "<i2");
  EXPECT_EQ(m.chunk_shape, (Shape{2, 2}));
}

TEST(ConvertV3ToV2, TransposeAndBigEndianBecomeOrderAndByteOrder) {
  ArraySpec spec = copy_spec(v3_array(json::array({kTranspose10, kBytesBE})), to_format(2));
  EXPECT_EQ(spec.v2_order, 'F');
  EXPECT_TRUE(spec.v2_compressor->is_null());
  ArrayMetadata m = build(spec);
  EXPECT_EQ(array_metadata_to_v2_json(m)["dtype"], ">i2");
  EXPECT_EQ(array_metadata_to_v2_json(m)["order"], "F");
}

TEST(ConvertV3ToV2, Crc32cIsDroppedAndEarlierCodecsBecomeFilters) {
  const json crc = {{"name", "crc32c"}};
  const json zstd = {{"name", "zstd"}, {"configuration", {{"level", 1}}}};
  const json gzip = {{"name", "gzip"}, {"configuration", {{"level", 2}}}};
  ArraySpec only_crc = copy_spec(v3_array(json::array({kBytesLE, crc})), to_format(2));
  EXPECT_TRUE(only_crc.v2_compressor->is_null());
  EXPECT_FALSE(only_crc.v2_filters);
  ArraySpec zstd_crc = copy_spec(v3_array(json::array({kBytesLE, zstd, crc})), to_format(2));
  EXPECT_EQ(*zstd_crc.v2_compressor, json({{"id", "zstd"}, {"level", 1}}));
  ArraySpec two = copy_spec(v3_array(json::array({kBytesLE, gzip, crc, zstd})), to_format(2));
  EXPECT_EQ(*two.v2_compressor, json({{"id", "zstd"}, {"level", 1}}));
  EXPECT_EQ(*two.v2_filters, json::array({{{"id", "gzip"}, {"level", 2}}}));
  EXPECT_EQ(array_metadata_to_v2_json(build(two))["filters"][0]["id"], "gzip");
}

TEST(ConvertV3ToV2, WhatV2CannotExpressIsUnsupported) {
  const json crc = {{"name", "crc32c"}};
  const json zstd = {{"name", "zstd"}, {"configuration", {{"level", 1}}}};
  const json sharding = json::parse(R"({"name": "sharding_indexed", "configuration": {"chunk_shape": [1, 1],
      "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
      "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}})");
  const json odd_transpose = {{"name", "transpose"}, {"configuration", {{"order", {0, 2, 1}}}}};
  // Sharding inside sharding, or codecs around sharding, have no v2 form.
  json nested = sharding;
  nested["configuration"]["codecs"] = json::array({sharding});
  EXPECT_THROW(copy_spec(v3_array(json::array({nested})), to_format(2)), UnsupportedError);
  EXPECT_THROW(copy_spec(v3_array(json::array({sharding, crc})), to_format(2)), UnsupportedError);
  EXPECT_THROW(copy_spec(v3_array(json::array({odd_transpose, kBytesLE}), {2, 3, 4}), to_format(2)), UnsupportedError);
  // A --codec replaces the inexpressible chain; crc32c as the v2 compressor is a usage error.
  WriteOptions o = to_format(2);
  o.codecs = {"zlib:level=2"};
  EXPECT_EQ(copy_spec(v3_array(json::array({kBytesLE, zstd, crc})), o).v2_compressor,
            json::parse(R"({"id": "zlib", "level": 2})"));
  o.codecs = {"crc32c"};
  EXPECT_THROW(copy_spec(v3_array(json::array({kBytesLE})), o), UsageError);
}

TEST(ConvertV2ToV3, OrderByteOrderAndBloscMapToV3Codecs) {
  ArrayMetadata source = v2_array(json::parse(R"({"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0})"),
                                  'F', DataType::float_(32).with_storage_endian(Endian::kBig));
  ArraySpec spec = copy_spec(source, to_format(3));
  EXPECT_EQ(*spec.codecs, json::parse(R"([
      {"name": "transpose", "configuration": {"order": [1, 0]}},
      {"name": "bytes", "configuration": {"endian": "big"}},
      {"name": "blosc", "configuration": {"typesize": 4, "cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "blocksize": 0}}])"));
  EXPECT_EQ(spec.chunks, (Shape{4, 3}));
  build(spec);
  // --order C drops the transpose; --codec replaces the compressor.
  WriteOptions o = to_format(3);
  o.order = "C";
  o.codecs = {"zstd:level=2", "crc32c"};
  EXPECT_EQ(*copy_spec(source, o).codecs, json::parse(R"([
      {"name": "bytes", "configuration": {"endian": "big"}},
      {"name": "zstd", "configuration": {"level": 2}}, {"name": "crc32c"}])"));
}

TEST(Convert, DimensionNamesTravelAsXarrayAttribute) {
  ArraySpec v3 = ArraySpec{};
  v3.shape = {4, 5};
  v3.dtype = DataType::uint_(8);
  v3.dimension_names = std::vector<std::optional<std::string>>{"y", "x"};
  v3.attributes = {{"units", "m"}};
  ArraySpec to_v2 = copy_spec(build(v3), to_format(2));
  EXPECT_FALSE(to_v2.dimension_names);
  EXPECT_EQ(to_v2.attributes, json::parse(R"({"units": "m", "_ARRAY_DIMENSIONS": ["y", "x"]})"));
  ArraySpec back = copy_spec(build(to_v2), to_format(3));
  EXPECT_EQ(back.dimension_names, v3.dimension_names);
  EXPECT_EQ(back.attributes, json::parse(R"({"units": "m"})"));
}

TEST(Convert, FillValuesFollowTheTargetFormat) {
  ArraySpec nan_spec;
  nan_spec.shape = {3};
  nan_spec.dtype = DataType::float_(64);
  nan_spec.fill_value = "NaN";
  EXPECT_EQ(copy_spec(build(nan_spec), to_format(2)).fill_value, json("NaN"));
  ArrayMetadata null_fill = v2_array(nullptr, 'C', DataType::int_(32).with_storage_endian(Endian::kLittle));
  ArraySpec v2_null;
  v2_null.zarr_format = 2;
  v2_null.shape = {3};
  v2_null.dtype = DataType::int_(32);
  v2_null.fill_value = json(nullptr);
  EXPECT_EQ(copy_spec(build(v2_null), to_format(3)).fill_value, json(0));  // v3 needs one: what null reads as
  ArraySpec v2_null_time = v2_null;
  v2_null_time.dtype = DataType::datetime("ns", 1);
  EXPECT_EQ(copy_spec(build(v2_null_time), to_format(3)).fill_value, json(std::numeric_limits<std::int64_t>::min()));  // NaT, as zarr-python writes it
  EXPECT_EQ(copy_spec(build(v2_null), to_format(2)).fill_value, json(nullptr));
  WriteOptions o = to_format(3);
  o.fill_value = "7";
  EXPECT_EQ(copy_spec(null_fill, o).fill_value, json(7));
  o.fill_value = "\"x\"";
  EXPECT_THROW(copy_spec(null_fill, o), UsageError);
}

TEST(Convert, CodecsOfAShardedSourceGoInsideTheShards) {
  if (!CodecRegistry::builtin().has_v3("sharding_indexed")) GTEST_SKIP() << "sharding is not built in yet";
  const json sharding = json::parse(R"({"name": "sharding_indexed", "configuration": {"chunk_shape": [1, 1],
      "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}],
      "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}})");
  WriteOptions o;
  o.codecs = {"zstd:level=5"};
  ArraySpec spec = copy_spec(v3_array(json::array({sharding})), o);
  ASSERT_EQ(spec.codecs->size(), 1u);
  EXPECT_EQ((*spec.codecs)[0]["configuration"]["codecs"],
            json::parse(R"([{"name": "bytes", "configuration": {"endian": "little"}},
                           {"name": "zstd", "configuration": {"level": 5}}])"));
  build(spec);
}

TEST(ConvertV3ToV2, ShardsBecomeTheirInnerChunks) {
  const json sharding = json::parse(R"({"name": "sharding_indexed", "configuration": {"chunk_shape": [1, 2],
      "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 3}}],
      "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}})");
  ArraySpec spec = copy_spec(v3_array(json::array({sharding})), to_format(2));
  EXPECT_EQ(spec.chunks, (Shape{1, 2}));
  EXPECT_EQ(spec.v2_compressor, json::parse(R"({"id": "gzip", "level": 3})"));
  EXPECT_EQ(array_metadata_to_v2_json(build(spec))["dtype"], ">i2");
  WriteOptions o = to_format(2);
  o.chunks = "4,3";  // --chunks still wins
  EXPECT_EQ(copy_spec(v3_array(json::array({sharding})), o).chunks, (Shape{4, 3}));
}

TEST(ShardsOption, WrapsTheCodecsInSharding) {
  WriteOptions o;
  o.chunks = "2,2";
  o.shards = "4,4";
  ArraySpec spec = import_spec(DataType::int_(32), {10, 8}, o);
  EXPECT_EQ(spec.chunks, (Shape{4, 4}));
  // zarr-python's default sharded layout: default codecs inside, index at the end with crc32c.
  EXPECT_EQ(*spec.codecs, json::parse(R"([{"name": "sharding_indexed", "configuration": {
      "chunk_shape": [2, 2],
      "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                 {"name": "zstd", "configuration": {"level": 0, "checksum": false}}],
      "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
      "index_location": "end"}}])"));
  build(spec);
  // cp: the source's chunks go inside by default; a sharded source keeps its inner chunks
  // and inner codecs, with new shards.
  WriteOptions c;
  c.shards = "4,6";
  spec = copy_spec(v3_array(json::array({kBytesLE})), c);
  EXPECT_EQ((*spec.codecs)[0]["configuration"]["chunk_shape"], json::parse("[2, 2]"));
  EXPECT_EQ((*spec.codecs)[0]["configuration"]["codecs"], json::array({kBytesLE}));
  ArrayMetadata sharded = build(spec);
  c.shards = "8,6";
  spec = copy_spec(sharded, c);
  EXPECT_EQ(spec.chunks, (Shape{8, 6}));
  EXPECT_EQ((*spec.codecs)[0]["configuration"]["chunk_shape"], json::parse("[2, 2]"));
  EXPECT_EQ((*spec.codecs)[0]["configuration"]["codecs"], json::array({kBytesLE}));
  build(spec);
}

TEST(ShardsOption, MistakesAreUsageErrors) {
  WriteOptions o;
  o.shards = "4,4";
  EXPECT_THROW(import_spec(DataType::int_(32), {10, 8}, o), UsageError);  // no --chunks
  o.chunks = "3,2";
  EXPECT_THROW(import_spec(DataType::int_(32), {10, 8}, o), UsageError);  // 4 is not a multiple of 3
  o.chunks = "2,2";
  o.shards = "4,x";
  EXPECT_THROW(import_spec(DataType::int_(32), {10, 8}, o), UsageError);
  o.shards = "4,4";
  o.zarr_format = 2;
  EXPECT_THROW(import_spec(DataType::int_(32), {10, 8}, o), UsageError);
}

TEST(ImportSpec, DefaultsAndOptions) {
  WriteOptions o;
  ArraySpec spec = import_spec(DataType::float_(32), {10, 4}, o);
  EXPECT_EQ(spec.zarr_format, 3);
  EXPECT_FALSE(spec.codecs);  // zarr-python's default: bytes + zstd
  o.order = "F";
  o.separator = ".";
  o.chunks = "5,2";
  o.dimension_names = "t,c";
  spec = import_spec(DataType::float_(32), {10, 4}, o);
  EXPECT_EQ(*spec.codecs, json::parse(R"([{"name": "transpose", "configuration": {"order": [1, 0]}},
      {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 0}}])"));
  EXPECT_EQ(spec.chunks, (Shape{5, 2}));
  EXPECT_EQ(spec.chunk_key_encoding, (ChunkKeyEncoding{ChunkKeyEncoding::Kind::kDefault, '.'}));
  build(spec);
  o = WriteOptions{};
  o.zarr_format = 2;
  o.codecs = {"none"};
  o.dimension_names = "t,c";
  spec = import_spec(DataType::int_(64), {10, 4}, o);
  EXPECT_TRUE(spec.v2_compressor->is_null());
  EXPECT_EQ(spec.attributes["_ARRAY_DIMENSIONS"], json::parse(R"(["t", "c"])"));
  build(spec);
}

}  // namespace
}  // namespace zarrkit::cli
