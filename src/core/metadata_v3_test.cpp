#include <functional>

#include <gtest/gtest.h>

#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

const CodecRegistry& registry() { return CodecRegistry::builtin(); }

json base_array() {
  return parse_json(R"({
    "zarr_format": 3,
    "node_type": "array",
    "shape": [10, 7],
    "data_type": "int32",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 3]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": -1,
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    "attributes": {"units": "m"},
    "storage_transformers": []
  })");
}

TEST(MetadataV3, ParsesAnArray) {
  const ArrayMetadata m = parse_array_metadata_v3(base_array(), registry());
  EXPECT_EQ(m.zarr_format, 3);
  EXPECT_EQ(m.shape, (Shape{10, 7}));
  EXPECT_EQ(m.chunk_shape, (Shape{4, 3}));
  EXPECT_EQ(m.dtype, DataType::int_(32));
  EXPECT_EQ(m.fill_value, FillValue::of<std::int32_t>(-1));
  EXPECT_EQ(m.attributes, json({{"units", "m"}}));
  EXPECT_FALSE(m.dimension_names.has_value());
  ASSERT_TRUE(m.codecs);
  EXPECT_EQ(m.codecs->array_to_bytes()->name(), "bytes");
  EXPECT_EQ(m.chunk_grid_shape(), (Shape{3, 3}));
  EXPECT_EQ(m.num_chunks(), 9u);
  EXPECT_EQ(m.chunk_key(std::vector<std::uint64_t>{2, 1}), "c/2/1");
  EXPECT_THROW(m.chunk_key(std::vector<std::uint64_t>{2}), InvalidArgumentError);
}

TEST(MetadataV3, SerialiseParseRoundTrip) {
  json doc = base_array();
  doc["dimension_names"] = json::array({"x", nullptr});
  doc["chunk_key_encoding"] = parse_json(R"({"name": "v2", "configuration": {"separator": "."}})");
  doc["data_type"] = "float32";
  doc["fill_value"] = "NaN";
  doc["codecs"] = parse_json(R"([{"name": "transpose", "configuration": {"order": [1, 0]}},
                                 {"name": "bytes", "configuration": {"endian": "big"}}, "crc32c"])");
  const ArrayMetadata m = parse_array_metadata_v3(doc, registry());
  EXPECT_EQ(m.chunk_key(std::vector<std::uint64_t>{2, 1}), "2.1");
  ASSERT_TRUE(m.dimension_names);
  EXPECT_EQ(*m.dimension_names, (std::vector<std::optional<std::string>>{"x", std::nullopt}));
  const json written = array_metadata_to_v3_json(m);
  EXPECT_EQ(written["fill_value"], "NaN");
  EXPECT_EQ(written["dimension_names"], json::array({"x", nullptr}));
  EXPECT_EQ(written["storage_transformers"], json::array());
  EXPECT_EQ(written["codecs"].size(), 3u);
  // Through text and back: the same metadata, and the same document.
  const ArrayMetadata again = parse_array_metadata_v3(parse_json(dump_json(written)), registry());
  EXPECT_EQ(again.shape, m.shape);
  EXPECT_EQ(again.chunk_shape, m.chunk_shape);
  EXPECT_EQ(again.dtype, m.dtype);
  EXPECT_EQ(again.fill_value, m.fill_value);
  EXPECT_EQ(again.chunk_key_encoding, m.chunk_key_encoding);
  EXPECT_EQ(again.dimension_names, m.dimension_names);
  EXPECT_EQ(array_metadata_to_v3_json(again), written);
}

TEST(MetadataV3, AcceptsWhatRealWritersProduce) {
  json doc = base_array();
  doc["dimension_names"] = nullptr;  // zarr-python
  doc.erase("storage_transformers");
  doc.erase("attributes");
  doc["codecs"] = json::array({"bytes"});  // short-hand names (v3.1)
  doc["data_type"] = "uint8";
  doc["fill_value"] = 255;
  doc["chunk_grid"] = parse_json(R"({"name": "regular", "configuration": {"chunk_shape": [100, 100]}})");
  doc["chunk_key_encoding"] = "default";
  doc["custom_extension"] = parse_json(R"({"must_understand": false, "anything": [1, 2]})");
  const ArrayMetadata m = parse_array_metadata_v3(doc, registry());
  EXPECT_EQ(m.attributes, json::object());
  EXPECT_FALSE(m.dimension_names);
  EXPECT_EQ(m.chunk_grid_shape(), (Shape{1, 1}));  // chunks may exceed the shape

  // An unknown codec that opts out of must_understand is skipped.
  doc["codecs"] = parse_json(R"(["bytes", {"name": "future-checksum", "must_understand": false}])");
  EXPECT_EQ(parse_array_metadata_v3(doc, registry()).codecs->bytes_to_bytes().size(), 0u);

  // 0-d arrays and zero-length axes.
  json scalar = base_array();
  scalar["shape"] = json::array();
  scalar["chunk_grid"]["configuration"]["chunk_shape"] = json::array();
  const ArrayMetadata s = parse_array_metadata_v3(scalar, registry());
  EXPECT_EQ(s.num_chunks(), 1u);
  EXPECT_EQ(s.chunk_key({}), "c");
  json empty = base_array();
  empty["shape"] = json::array({0, 7});
  EXPECT_EQ(parse_array_metadata_v3(empty, registry()).num_chunks(), 0u);
  // Huge but representable shapes are fine (the array is sparse).
  json huge = base_array();
  huge["shape"] = json::array({std::uint64_t{1} << 40, std::uint64_t{1} << 20});
  EXPECT_EQ(parse_array_metadata_v3(huge, registry()).num_chunks(), (std::uint64_t{1} << 38) * 349526);
}

// One entry of the table of bad documents: an edit of the base document and the error it
// must give.
struct BadCase {
  const char* what;
  std::function<void(json&)> edit;
  ErrorCode code;
};

TEST(MetadataV3, RefusesBadDocuments) {
  const auto set = [](const char* key, const char* value) {
    return [=](json& d) { d[key] = json::parse(value); };
  };
  const auto erase = [](const char* key) { return [=](json& d) { d.erase(key); }; };
  const BadCase cases[] = {
      {"not an object", [](json& d) { d = json::array(); }, ErrorCode::kInvalidArgument},
      {"zarr_format as a string", set("zarr_format", R"("3")"), ErrorCode::kInvalidArgument},
      {"zarr_format 3.0", set("zarr_format", "3.0"), ErrorCode::kInvalidArgument},
      {"zarr_format 2", set("zarr_format", "2"), ErrorCode::kInvalidArgument},
      {"zarr_format missing", erase("zarr_format"), ErrorCode::kInvalidArgument},
      {"node_type group", set("node_type", R"("group")"), ErrorCode::kInvalidArgument},
      {"node_type other", set("node_type", R"("Array")"), ErrorCode::kInvalidArgument},
      {"node_type missing", erase("node_type"), ErrorCode::kInvalidArgument},
      {"shape missing", erase("shape"), ErrorCode::kInvalidArgument},
      {"shape negative", set("shape", "[10, -7]"), ErrorCode::kInvalidArgument},
      {"shape fractional", set("shape", "[10, 7.5]"), ErrorCode::kInvalidArgument},
      {"shape float integral", set("shape", "[10, 7.0]"), ErrorCode::kInvalidArgument},
      {"shape string", set("shape", R"("10,7")"), ErrorCode::kInvalidArgument},
      {"shape entry string", set("shape", R"([10, "7"])"), ErrorCode::kInvalidArgument},
      {"shape too many dims", set("shape", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]"),
       ErrorCode::kResourceExhausted},
      {"shape*itemsize overflows", set("shape", "[4611686018427387904, 2]"), ErrorCode::kInvalidArgument},
      {"shape beyond uint64", set("shape", "[18446744073709551616, 7]"), ErrorCode::kInvalidArgument},
      {"data_type missing", erase("data_type"), ErrorCode::kInvalidArgument},
      {"data_type unknown", set("data_type", R"("int128")"), ErrorCode::kUnsupported},
      {"data_type must_understand false", set("data_type", R"({"name": "int32", "must_understand": false})"),
       ErrorCode::kInvalidArgument},
      {"data_type string with a numeric fill value", set("data_type", R"("string")"), ErrorCode::kInvalidArgument},
      {"chunk_grid missing", erase("chunk_grid"), ErrorCode::kInvalidArgument},
      {"chunk_grid zero dim", set("chunk_grid", R"({"name": "regular", "configuration": {"chunk_shape": [0, 3]}})"),
       ErrorCode::kInvalidArgument},
      {"chunk_grid negative", set("chunk_grid", R"({"name": "regular", "configuration": {"chunk_shape": [-4, 3]}})"),
       ErrorCode::kInvalidArgument},
      {"chunk_grid fractional", set("chunk_grid", R"({"name": "regular", "configuration": {"chunk_shape": [4.5, 3]}})"),
       ErrorCode::kInvalidArgument},
      {"chunk_grid huge", set("chunk_grid", R"({"name": "regular", "configuration": {"chunk_shape": [4294967296, 4294967296]}})"),
       ErrorCode::kInvalidArgument},
      {"chunk_grid beyond the chunk limit", set("chunk_grid", R"({"name": "regular", "configuration": {"chunk_shape": [1048576, 1048576]}})"),
       ErrorCode::kResourceExhausted},
      {"chunk_grid wrong rank", set("chunk_grid", R"({"name": "regular", "configuration": {"chunk_shape": [4]}})"),
       ErrorCode::kInvalidArgument},
      {"chunk_grid no configuration", set("chunk_grid", R"("regular")"), ErrorCode::kInvalidArgument},
      {"chunk_grid extra key", set("chunk_grid", R"({"name": "regular", "configuration": {"chunk_shape": [4, 3], "x": 1}})"),
       ErrorCode::kInvalidArgument},
      {"chunk_grid unknown", set("chunk_grid", R"({"name": "irregular", "configuration": {"chunk_shape": [4, 3]}})"),
       ErrorCode::kUnsupported},
      {"chunk_grid must_understand false",
       set("chunk_grid", R"({"name": "regular", "must_understand": false, "configuration": {"chunk_shape": [4, 3]}})"),
       ErrorCode::kInvalidArgument},
      {"chunk_key_encoding missing", erase("chunk_key_encoding"), ErrorCode::kInvalidArgument},
      {"chunk_key_encoding bad separator", set("chunk_key_encoding", R"({"name": "default", "configuration": {"separator": "_"}})"),
       ErrorCode::kInvalidArgument},
      {"chunk_key_encoding unknown", set("chunk_key_encoding", R"({"name": "flat"})"), ErrorCode::kUnsupported},
      {"chunk_key_encoding must_understand false",
       set("chunk_key_encoding", R"({"name": "default", "must_understand": false})"), ErrorCode::kInvalidArgument},
      {"fill_value missing", erase("fill_value"), ErrorCode::kInvalidArgument},
      {"fill_value null", set("fill_value", "null"), ErrorCode::kInvalidArgument},
      {"fill_value fraction for int", set("fill_value", "1.5"), ErrorCode::kInvalidArgument},
      {"fill_value out of range", set("fill_value", "2147483648"), ErrorCode::kInvalidArgument},
      {"fill_value NaN for int", set("fill_value", R"("NaN")"), ErrorCode::kInvalidArgument},
      {"codecs missing", erase("codecs"), ErrorCode::kInvalidArgument},
      {"codecs empty", set("codecs", "[]"), ErrorCode::kInvalidArgument},
      {"codecs not a list", set("codecs", R"({"name": "bytes"})"), ErrorCode::kInvalidArgument},
      {"codecs unknown", set("codecs", R"(["bytes", "zfpy"])"), ErrorCode::kUnsupported},
      {"codecs no array->bytes", set("codecs", R"(["crc32c"])"), ErrorCode::kInvalidArgument},
      {"codecs two array->bytes", set("codecs", R"(["bytes", "bytes"])"), ErrorCode::kInvalidArgument},
      {"codecs bad endian", set("codecs", R"([{"name": "bytes", "configuration": {"endian": "middle"}}])"),
       ErrorCode::kInvalidArgument},
      {"codecs transpose of the wrong rank",
       set("codecs", R"([{"name": "transpose", "configuration": {"order": [0]}}, "bytes"])"), ErrorCode::kInvalidArgument},
      {"attributes not an object", set("attributes", "[1]"), ErrorCode::kInvalidArgument},
      {"dimension_names too short", set("dimension_names", R"(["x"])"), ErrorCode::kInvalidArgument},
      {"dimension_names too long", set("dimension_names", R"(["x", "y", "z"])"), ErrorCode::kInvalidArgument},
      {"dimension_names bad entry", set("dimension_names", R"(["x", 1])"), ErrorCode::kInvalidArgument},
      {"dimension_names not a list", set("dimension_names", R"("xy")"), ErrorCode::kInvalidArgument},
      {"storage_transformers unknown", set("storage_transformers", R"([{"name": "chunk-manifest-json"}])"),
       ErrorCode::kUnsupported},
      {"storage_transformers not a list", set("storage_transformers", R"({})"), ErrorCode::kInvalidArgument},
      {"unknown field", set("chunk_memory_layout", R"("C")"), ErrorCode::kUnsupported},
      {"unknown field, object", set("extension", R"({"name": "x"})"), ErrorCode::kUnsupported},
      {"unknown field, must_understand true", set("extension", R"({"must_understand": true})"), ErrorCode::kUnsupported},
      {"unknown field, must_understand not a bool", set("extension", R"({"must_understand": "false"})"),
       ErrorCode::kUnsupported},
  };
  for (const auto& c : cases) {
    json doc = base_array();
    c.edit(doc);
    try {
      parse_array_metadata_v3(doc, registry());
      ADD_FAILURE() << c.what << ": parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), c.code) << c.what << ": " << e.what();
    }
  }
}

TEST(MetadataV3, ErrorsNameTheField) {
  json doc = base_array();
  doc["chunk_memory_layout"] = "C";
  try {
    parse_array_metadata_v3(doc, registry());
    FAIL();
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("chunk_memory_layout"), std::string::npos) << e.what();
  }
  doc = base_array();
  doc["codecs"] = json::array({"bytes", "zfpy"});
  try {
    parse_array_metadata_v3(doc, registry());
    FAIL();
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("zfpy"), std::string::npos) << e.what();
  }
}

TEST(MetadataV3, MetadataLimitsApply) {
  MetadataLimits limits;
  limits.max_ndim = 1;
  EXPECT_THROW(parse_array_metadata_v3(base_array(), registry(), limits), ResourceExhaustedError);
  limits = MetadataLimits{};
  limits.max_chunk_bytes = 47;  // a 4x3 int32 chunk is 48 bytes
  EXPECT_THROW(parse_array_metadata_v3(base_array(), registry(), limits), ResourceExhaustedError);
  limits.max_chunk_bytes = 48;
  EXPECT_NO_THROW(parse_array_metadata_v3(base_array(), registry(), limits));
}

TEST(GroupMetadataV3, ParsesAndRoundTrips) {
  const GroupMetadata g = parse_group_metadata_v3(parse_json(R"({"zarr_format": 3, "node_type": "group",
      "attributes": {"answer": 42}, "consolidated_metadata": null})"));
  EXPECT_EQ(g.zarr_format, 3);
  EXPECT_EQ(g.attributes, json({{"answer", 42}}));
  EXPECT_FALSE(g.consolidated);
  EXPECT_EQ(group_metadata_to_v3_json(g), parse_json(R"({"zarr_format": 3, "node_type": "group", "attributes": {"answer": 42}})"));

  const json consolidated = parse_json(R"({"kind": "inline", "must_understand": false,
      "metadata": {"a": {"zarr_format": 3, "node_type": "group"}}})");
  const GroupMetadata c = parse_group_metadata_v3({{"zarr_format", 3}, {"node_type", "group"}, {"consolidated_metadata", consolidated}});
  ASSERT_TRUE(c.consolidated);
  EXPECT_EQ(*c.consolidated, consolidated);
  EXPECT_EQ(c.attributes, json::object());
  EXPECT_EQ(group_metadata_to_v3_json(c)["consolidated_metadata"], consolidated);
  EXPECT_EQ(parse_group_metadata_v3(group_metadata_to_v3_json(c)).consolidated, c.consolidated);
}

TEST(GroupMetadataV3, RefusesBadDocuments) {
  const std::pair<const char*, ErrorCode> cases[] = {
      {R"({"zarr_format": 3, "node_type": "array"})", ErrorCode::kInvalidArgument},
      {R"({"zarr_format": "3", "node_type": "group"})", ErrorCode::kInvalidArgument},
      {R"({"node_type": "group"})", ErrorCode::kInvalidArgument},
      {R"({"zarr_format": 3})", ErrorCode::kInvalidArgument},
      {R"({"zarr_format": 3, "node_type": "group", "attributes": "x"})", ErrorCode::kInvalidArgument},
      {R"({"zarr_format": 3, "node_type": "group", "unknown": 1})", ErrorCode::kUnsupported},
      {R"({"zarr_format": 3, "node_type": "group", "consolidated_metadata": {"kind": "remote"}})", ErrorCode::kUnsupported},
      {R"({"zarr_format": 3, "node_type": "group", "consolidated_metadata": {"kind": "inline", "metadata": 5}})",
       ErrorCode::kInvalidArgument},
      {"[]", ErrorCode::kInvalidArgument},
  };
  for (const auto& [text, code] : cases) {
    try {
      parse_group_metadata_v3(parse_json(text));
      ADD_FAILURE() << text << ": parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << text << ": " << e.what();
    }
  }
  // Opting out is honoured for unknown fields.
  EXPECT_NO_THROW(parse_group_metadata_v3(parse_json(
      R"({"zarr_format": 3, "node_type": "group", "x": {"must_understand": false}, "consolidated_metadata": {"kind": "remote", "must_understand": false}})")));
}

}  // namespace
}  // namespace zarrkit
