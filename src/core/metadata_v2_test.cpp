#include <functional>

#include <gtest/gtest.h>

#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

const CodecRegistry& registry() { return CodecRegistry::builtin(); }

json base_zarray() {
  return parse_json(R"({
    "zarr_format": 2,
    "shape": [10, 7, 3],
    "chunks": [4, 3, 3],
    "dtype": ">i4",
    "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
    "fill_value": 0,
    "order": "F",
    "filters": null
  })");
}

TEST(MetadataV2, BuildsTheEquivalentCodecChain) {
  const ArrayMetadata m = parse_array_metadata_v2(base_zarray(), json{{"answer", 42}}, registry());
  EXPECT_EQ(m.zarr_format, 2);
  EXPECT_EQ(m.shape, (Shape{10, 7, 3}));
  EXPECT_EQ(m.chunk_shape, (Shape{4, 3, 3}));
  EXPECT_EQ(m.dtype, DataType::int_(32));
  EXPECT_EQ(m.dtype.storage_endian(), Endian::kBig);
  EXPECT_EQ(m.v2_order, 'F');
  EXPECT_EQ(m.attributes, json({{"answer", 42}}));
  // No dimension_separator: "." (SPEC-NOTES rule 25), no "c" prefix.
  EXPECT_EQ(m.chunk_key_encoding, (ChunkKeyEncoding{ChunkKeyEncoding::Kind::kV2, '.'}));
  EXPECT_EQ(m.chunk_key(std::vector<std::uint64_t>{2, 1, 0}), "2.1.0");
  // order F -> transpose [2, 1, 0]; then bytes(big); then the compressor.
  const json chain = m.codecs->to_json();
  ASSERT_EQ(chain.size(), 3u) << chain.dump();
  EXPECT_EQ(chain[0]["name"], "transpose");
  EXPECT_EQ(chain[0]["configuration"]["order"], json::array({2, 1, 0}));
  EXPECT_EQ(chain[1]["name"], "bytes");
  EXPECT_EQ(chain[1]["configuration"]["endian"], "big");
  EXPECT_NE(chain[2]["name"].get<std::string>().find("blosc"), std::string::npos);  // "blosc" or "numcodecs.blosc"
}

// "|O": the first filter, the object codec, says what the elements are and serialises them.
TEST(MetadataV2, ObjectArraysOfStringsAndBytes) {
  json zarray = base_zarray();
  zarray["dtype"] = "|O";
  zarray["fill_value"] = 0;  // zarr-python 2's "empty" for object arrays
  zarray["filters"] = json::array({{{"id", "vlen-utf8"}}});
  const ArrayMetadata m = parse_array_metadata_v2(zarray, std::nullopt, registry());
  EXPECT_EQ(m.dtype, DataType::string());
  const json chain = m.codecs->to_json();
  ASSERT_EQ(chain.size(), 3u) << chain.dump();  // transpose (order F), vlen-utf8, blosc
  EXPECT_EQ(chain[1]["name"], "vlen-utf8");
  EXPECT_EQ(array_metadata_to_v2_json(m)["dtype"], "|O");
  EXPECT_EQ(array_metadata_to_v2_json(m)["fill_value"], "");
  zarray["filters"] = json::array({{{"id", "vlen-bytes"}}, {{"id", "zlib"}, {"level", 1}}});
  EXPECT_EQ(parse_array_metadata_v2(zarray, std::nullopt, registry()).dtype, DataType::var_bytes());
  zarray["filters"] = json::array({{{"id", "json2"}}});
  EXPECT_THROW(parse_array_metadata_v2(zarray, std::nullopt, registry()), UnsupportedError);
  zarray["filters"] = nullptr;
  EXPECT_THROW(parse_array_metadata_v2(zarray, std::nullopt, registry()), InvalidArgumentError);
}

TEST(MetadataV2, OneByteTypesAndCOrderNeedNoExtras) {
  json doc = base_zarray();
  doc["dtype"] = "|u1";
  doc["order"] = "C";
  doc["compressor"] = nullptr;
  doc["dimension_separator"] = "/";
  doc["node_type"] = "array";  // real data carries it; ignored
  const ArrayMetadata m = parse_array_metadata_v2(doc, std::nullopt, registry());
  const json chain = m.codecs->to_json();
  ASSERT_EQ(chain.size(), 1u) << chain.dump();
  EXPECT_EQ(chain[0]["name"], "bytes");
  EXPECT_FALSE(chain[0].contains("configuration") && chain[0]["configuration"].contains("endian")) << chain.dump();
  EXPECT_EQ(m.chunk_key(std::vector<std::uint64_t>{2, 1, 0}), "2/1/0");
  EXPECT_EQ(m.attributes, json::object());
  EXPECT_FALSE(m.v2_compressor);
}

TEST(MetadataV2, SerialiseParseRoundTrip) {
  for (const char* dtype : {">i4", "<f8", "|S7", "<U13", "|b1", "<M8[ns]", "|V4"}) {
    json doc = base_zarray();
    doc["dtype"] = dtype;
    doc["fill_value"] = nullptr;
    doc["filters"] = json::array();
    doc["dimension_separator"] = "/";
    const ArrayMetadata m = parse_array_metadata_v2(doc, std::nullopt, registry());
    EXPECT_TRUE(m.fill_value.is_null());
    EXPECT_EQ(array_metadata_to_v2_json(m), doc) << dtype;
    const ArrayMetadata again = parse_array_metadata_v2(parse_json(dump_json(array_metadata_to_v2_json(m))), std::nullopt, registry());
    EXPECT_EQ(again.dtype, m.dtype);
    EXPECT_EQ(again.dtype.storage_endian(), m.dtype.storage_endian());
    EXPECT_EQ(again.fill_value, m.fill_value);
    EXPECT_EQ(again.codecs->to_json(), m.codecs->to_json());
  }
  json doc = base_zarray();
  doc["dtype"] = "<f4";
  doc["fill_value"] = "NaN";
  const json written = array_metadata_to_v2_json(parse_array_metadata_v2(doc, std::nullopt, registry()));
  EXPECT_EQ(written["fill_value"], "NaN");
  EXPECT_EQ(written["dimension_separator"], ".");  // written explicitly
  EXPECT_EQ(written["compressor"], doc["compressor"]);
  EXPECT_EQ(written["filters"], nullptr);
  EXPECT_EQ(written["order"], "F");

  // A v2 array can be described as v3 (the same chain and key encoding).
  const ArrayMetadata v2 = parse_array_metadata_v2(base_zarray(), std::nullopt, registry());
  const ArrayMetadata v3 = parse_array_metadata_v3(array_metadata_to_v3_json(v2), registry());
  EXPECT_EQ(v3.codecs->to_json(), v2.codecs->to_json());
  EXPECT_EQ(v3.chunk_key(std::vector<std::uint64_t>{1, 2, 0}), "1.2.0");
  EXPECT_THROW(array_metadata_to_v2_json(v3), InvalidArgumentError);
}

TEST(MetadataV2, UnknownCodecsAreUnsupportedAndNamed) {
  json doc = base_zarray();
  doc["compressor"] = parse_json(R"({"id": "zfpy", "mode": 4})");
  try {
    parse_array_metadata_v2(doc, std::nullopt, registry());
    FAIL();
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported codec 'zfpy'"), std::string::npos) << e.what();
  }
  doc = base_zarray();
  doc["filters"] = parse_json(R"([{"id": "no-such-filter"}])");
  try {
    parse_array_metadata_v2(doc, std::nullopt, registry());
    FAIL();
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported codec 'no-such-filter'"), std::string::npos) << e.what();
  }
}

struct BadCase {
  const char* what;
  std::function<void(json&)> edit;
  ErrorCode code;
};

TEST(MetadataV2, RefusesBadDocuments) {
  const auto set = [](const char* key, const char* value) {
    return [=](json& d) { d[key] = json::parse(value); };
  };
  const auto erase = [](const char* key) { return [=](json& d) { d.erase(key); }; };
  const BadCase cases[] = {
      {"not an object", [](json& d) { d = "x"; }, ErrorCode::kInvalidArgument},
      {"zarr_format 3", set("zarr_format", "3"), ErrorCode::kInvalidArgument},
      {"zarr_format string", set("zarr_format", R"("2")"), ErrorCode::kInvalidArgument},
      {"zarr_format missing", erase("zarr_format"), ErrorCode::kInvalidArgument},
      {"shape missing", erase("shape"), ErrorCode::kInvalidArgument},
      {"chunks missing", erase("chunks"), ErrorCode::kInvalidArgument},
      {"dtype missing", erase("dtype"), ErrorCode::kInvalidArgument},
      {"compressor missing", erase("compressor"), ErrorCode::kInvalidArgument},
      {"fill_value missing", erase("fill_value"), ErrorCode::kInvalidArgument},
      {"order missing", erase("order"), ErrorCode::kInvalidArgument},
      {"filters missing", erase("filters"), ErrorCode::kInvalidArgument},
      {"chunks zero", set("chunks", "[4, 0, 3]"), ErrorCode::kInvalidArgument},
      {"chunks negative", set("chunks", "[4, -3, 3]"), ErrorCode::kInvalidArgument},
      {"chunks fractional", set("chunks", "[4, 1.5, 3]"), ErrorCode::kInvalidArgument},
      {"chunks wrong rank", set("chunks", "[4, 3]"), ErrorCode::kInvalidArgument},
      {"chunks huge", set("chunks", "[4294967296, 4294967296, 3]"), ErrorCode::kInvalidArgument},
      {"shape negative", set("shape", "[-1, 7, 3]"), ErrorCode::kInvalidArgument},
      {"shape*itemsize overflows", set("shape", "[4611686018427387904, 1, 1]"), ErrorCode::kInvalidArgument},
      {"dtype bad", set("dtype", R"("<i3")"), ErrorCode::kInvalidArgument},
      {"dtype object without an object codec", set("dtype", R"("|O")"), ErrorCode::kInvalidArgument},
      {"dtype no byte order", set("dtype", R"("i4")"), ErrorCode::kInvalidArgument},
      {"compressor not an object", set("compressor", R"("blosc")"), ErrorCode::kInvalidArgument},
      {"compressor without id", set("compressor", R"({"cname": "lz4"})"), ErrorCode::kInvalidArgument},
      {"compressor unknown", set("compressor", R"({"id": "pcodec"})"), ErrorCode::kUnsupported},
      {"fill_value fraction", set("fill_value", "0.5"), ErrorCode::kInvalidArgument},
      {"fill_value out of range", set("fill_value", "4294967296"), ErrorCode::kInvalidArgument},
      {"fill_value bad string", set("fill_value", R"("zero")"), ErrorCode::kInvalidArgument},
      {"order bad", set("order", R"("K")"), ErrorCode::kInvalidArgument},
      {"order lower case", set("order", R"("c")"), ErrorCode::kInvalidArgument},
      {"filters not a list", set("filters", R"({"id": "delta"})"), ErrorCode::kInvalidArgument},
      {"filter without id", set("filters", R"([{"dtype": "<i4"}])"), ErrorCode::kInvalidArgument},
      {"dimension_separator bad", set("dimension_separator", R"("-")"), ErrorCode::kInvalidArgument},
      {"dimension_separator number", set("dimension_separator", "1"), ErrorCode::kInvalidArgument},
  };
  for (const auto& c : cases) {
    json doc = base_zarray();
    c.edit(doc);
    try {
      parse_array_metadata_v2(doc, std::nullopt, registry());
      ADD_FAILURE() << c.what << ": parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), c.code) << c.what << ": " << e.what();
    }
  }
  EXPECT_THROW(parse_array_metadata_v2(base_zarray(), json::array(), registry()), InvalidArgumentError);
}

TEST(GroupMetadataV2, ParsesZgroupAndZattrs) {
  const GroupMetadata g = parse_group_metadata_v2(parse_json(R"({"zarr_format": 2})"), json{{"answer", 42}});
  EXPECT_EQ(g.zarr_format, 2);
  EXPECT_EQ(g.attributes, json({{"answer", 42}}));
  EXPECT_EQ(parse_group_metadata_v2(parse_json(R"({"zarr_format": 2})"), std::nullopt).attributes, json::object());
  EXPECT_THROW(parse_group_metadata_v2(parse_json(R"({"zarr_format": 3})"), std::nullopt), InvalidArgumentError);
  EXPECT_THROW(parse_group_metadata_v2(parse_json(R"({})"), std::nullopt), InvalidArgumentError);
  EXPECT_THROW(parse_group_metadata_v2(parse_json(R"({"zarr_format": 2})"), json("x")), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
