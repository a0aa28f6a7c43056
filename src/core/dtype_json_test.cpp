#include <gtest/gtest.h>

#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

TEST(DtypeV3, CoreNamesRoundTrip) {
  const std::pair<const char*, DataType> cases[] = {
      {"bool", DataType::boolean()},       {"int8", DataType::int_(8)},          {"int16", DataType::int_(16)},
      {"int32", DataType::int_(32)},       {"int64", DataType::int_(64)},        {"uint8", DataType::uint_(8)},
      {"uint16", DataType::uint_(16)},     {"uint32", DataType::uint_(32)},      {"uint64", DataType::uint_(64)},
      {"float16", DataType::float_(16)},   {"float32", DataType::float_(32)},    {"float64", DataType::float_(64)},
      {"complex64", DataType::complex_(64)}, {"complex128", DataType::complex_(128)},
      {"bfloat16", DataType::bfloat16()},  {"r8", DataType::raw_bits(8)},        {"r24", DataType::raw_bits(24)},
      {"r256", DataType::raw_bits(256)}};
  for (const auto& [name, type] : cases) {
    EXPECT_EQ(parse_dtype_v3(name), type) << name;
    EXPECT_EQ(dtype_to_v3_json(type), json(name)) << name;
    // The object form with no configuration (or an empty one) is the same type.
    EXPECT_EQ(parse_dtype_v3(json{{"name", name}}), type) << name;
    EXPECT_EQ(parse_dtype_v3(json{{"name", name}, {"configuration", json::object()}, {"must_understand", true}}), type);
  }
}

// The zarr-extensions ML types (and tensorstore's float8_e4m3fn): one byte per element.
TEST(DtypeV3, MachineLearningTypes) {
  const std::pair<const char*, DataType> cases[] = {
      {"float8_e3m4", DataType::minifloat(MiniFloat::kE3M4)},
      {"float8_e4m3", DataType::minifloat(MiniFloat::kE4M3)},
      {"float8_e4m3fn", DataType::minifloat(MiniFloat::kE4M3FN)},
      {"float8_e4m3fnuz", DataType::minifloat(MiniFloat::kE4M3FNUZ)},
      {"float8_e4m3b11fnuz", DataType::minifloat(MiniFloat::kE4M3B11FNUZ)},
      {"float8_e5m2", DataType::minifloat(MiniFloat::kE5M2)},
      {"float8_e5m2fnuz", DataType::minifloat(MiniFloat::kE5M2FNUZ)},
      {"float8_e8m0fnu", DataType::minifloat(MiniFloat::kE8M0FNU)},
      {"float6_e2m3fn", DataType::minifloat(MiniFloat::kE2M3FN)},
      {"float6_e3m2fn", DataType::minifloat(MiniFloat::kE3M2FN)},
      {"float4_e2m1fn", DataType::minifloat(MiniFloat::kE2M1FN)},
      {"int2", DataType::sub_byte_int(2)},
      {"int4", DataType::sub_byte_int(4)},
      {"uint2", DataType::sub_byte_uint(2)},
      {"uint4", DataType::sub_byte_uint(4)},
  };
  for (const auto& [name, type] : cases) {
    EXPECT_EQ(parse_dtype_v3(name), type) << name;
    EXPECT_EQ(parse_dtype_v3(json{{"name", name}}), type) << name;
    EXPECT_EQ(dtype_to_v3_json(type), json(name)) << name;
    EXPECT_EQ(type.name(), name);
    EXPECT_EQ(type.size(), 1u) << name;
    EXPECT_EQ(type.swap_unit(), 1u) << name;
    EXPECT_THROW(parse_dtype_v3(json{{"name", name}, {"configuration", {{"bits", 4}}}}), InvalidArgumentError) << name;
    // v2 by name, as tensorstore writes them (NumPy has no type string for them).
    EXPECT_EQ(dtype_to_v2_json(type), json(name)) << name;
    EXPECT_EQ(parse_dtype_v2(name), type) << name;
  }
  EXPECT_EQ(parse_dtype_v2("bfloat16"), DataType::bfloat16());
  EXPECT_EQ(dtype_to_v2_json(DataType::bfloat16()), json("bfloat16"));
  EXPECT_THROW(parse_dtype_v2("<float8_e5m2"), InvalidArgumentError);
  EXPECT_THROW(parse_dtype_v2(json::array({json::array({"a", "int4"})})), UnsupportedError);
  EXPECT_EQ(parse_dtype_v2(json::array({json::array({"a", "float8_e5m2"})})).fields()[0].type,
            DataType::minifloat(MiniFloat::kE5M2));
  EXPECT_EQ(DataType::sub_byte_int(4).value_bits(), 4);
  EXPECT_EQ(DataType::sub_byte_uint(2).value_bits(), 2);
  EXPECT_EQ(DataType::minifloat(MiniFloat::kE3M2FN).value_bits(), 6);
  EXPECT_EQ(DataType::minifloat(MiniFloat::kE5M2).value_bits(), 8);
  EXPECT_TRUE(DataType::minifloat(MiniFloat::kE2M1FN).is_sub_byte());
  EXPECT_FALSE(DataType::minifloat(MiniFloat::kE4M3FN).is_sub_byte());
  EXPECT_FALSE(DataType::int_(8).is_sub_byte());
  EXPECT_NE(DataType::sub_byte_int(4), DataType::sub_byte_uint(4));
  EXPECT_NE(DataType::sub_byte_int(4), DataType::int_(8));
  EXPECT_NE(DataType::minifloat(MiniFloat::kE4M3), DataType::minifloat(MiniFloat::kE4M3FN));
  EXPECT_THROW(DataType::sub_byte_int(3), InvalidArgumentError);
  EXPECT_THROW(DataType::sub_byte_uint(8), InvalidArgumentError);
}

TEST(DtypeV3, ZarrPythonExtensionTypes) {
  const json dt = {{"name", "numpy.datetime64"}, {"configuration", {{"unit", "ns"}, {"scale_factor", 1}}}};
  EXPECT_EQ(parse_dtype_v3(dt), DataType::datetime("ns", 1));
  EXPECT_EQ(dtype_to_v3_json(parse_dtype_v3(dt)), dt);
  const json td = {{"name", "numpy.timedelta64"}, {"configuration", {{"unit", "s"}, {"scale_factor", 10}}}};
  EXPECT_EQ(parse_dtype_v3(td), DataType::timedelta("s", 10));
  EXPECT_EQ(dtype_to_v3_json(parse_dtype_v3(td)), td);
  const json u = {{"name", "fixed_length_utf32"}, {"configuration", {{"length_bytes", 28}}}};
  EXPECT_EQ(parse_dtype_v3(u), DataType::fixed_unicode(7));
  EXPECT_EQ(dtype_to_v3_json(DataType::fixed_unicode(7)), u);
  const json s = {{"name", "null_terminated_bytes"}, {"configuration", {{"length_bytes", 5}}}};
  EXPECT_EQ(parse_dtype_v3(s), DataType::fixed_bytes(5));
  EXPECT_EQ(dtype_to_v3_json(DataType::fixed_bytes(5)), s);
}

TEST(DtypeV3, VariableLengthTypes) {
  EXPECT_EQ(parse_dtype_v3("string"), DataType::string());
  EXPECT_EQ(parse_dtype_v3("variable_length_bytes"), DataType::var_bytes());
  EXPECT_EQ(parse_dtype_v3("bytes"), DataType::var_bytes());  // the zarr-extensions name
  EXPECT_EQ(dtype_to_v3_json(DataType::string()), "string");
  EXPECT_EQ(dtype_to_v3_json(DataType::var_bytes()), "variable_length_bytes");  // as zarr-python writes it
  EXPECT_EQ(dtype_to_v2_json(DataType::string()), "|O");
  EXPECT_EQ(dtype_to_v2_json(DataType::var_bytes()), "|O");
}

TEST(DtypeV3, RefusesBadTypes) {
  const std::pair<json, ErrorCode> cases[] = {
      {"int128", ErrorCode::kUnsupported},
      {"float8", ErrorCode::kUnsupported},
      {"float8_e4m3FN", ErrorCode::kUnsupported},
      {"float8_e4m3b11", ErrorCode::kUnsupported},
      {"float4_e2m1", ErrorCode::kUnsupported},
      {"float6", ErrorCode::kUnsupported},
      {"int3", ErrorCode::kUnsupported},
      {"uint1", ErrorCode::kUnsupported},
      {"Int4", ErrorCode::kUnsupported},
      {json{{"name", "int4"}, {"must_understand", false}}, ErrorCode::kInvalidArgument},
      {"Int32", ErrorCode::kUnsupported},
      {json{{"name", "string"}, {"configuration", {{"length", 4}}}}, ErrorCode::kInvalidArgument},
      {"raw_bytes", ErrorCode::kUnsupported},
      {"r0", ErrorCode::kInvalidArgument},
      {"r7", ErrorCode::kInvalidArgument},
      {"r08", ErrorCode::kInvalidArgument},
      {"r99999999999999999999", ErrorCode::kInvalidArgument},
      {"r-8", ErrorCode::kUnsupported},  // not r<digits>: an unknown name
      {"", ErrorCode::kInvalidArgument},
      {42, ErrorCode::kInvalidArgument},
      {nullptr, ErrorCode::kInvalidArgument},
      {json::array({"int32"}), ErrorCode::kInvalidArgument},
      {json{{"name", 3}}, ErrorCode::kInvalidArgument},
      {json{{"configuration", json::object()}}, ErrorCode::kInvalidArgument},
      {json{{"name", "int32"}, {"must_understand", false}}, ErrorCode::kInvalidArgument},
      {json{{"name", "int32"}, {"configuration", {{"endian", "little"}}}}, ErrorCode::kInvalidArgument},
      {json{{"name", "int32"}, {"extra", 1}}, ErrorCode::kInvalidArgument},
      {json{{"name", "int32"}, {"configuration", 5}}, ErrorCode::kInvalidArgument},
      {json{{"name", "numpy.datetime64"}, {"configuration", {{"unit", "fortnight"}, {"scale_factor", 1}}}},
       ErrorCode::kInvalidArgument},
      {json{{"name", "numpy.datetime64"}, {"configuration", {{"unit", "ns"}, {"scale_factor", 0}}}},
       ErrorCode::kInvalidArgument},
      {json{{"name", "numpy.datetime64"}, {"configuration", {{"unit", "ns"}}}}, ErrorCode::kInvalidArgument},
      {json{{"name", "fixed_length_utf32"}, {"configuration", {{"length_bytes", 6}}}}, ErrorCode::kInvalidArgument},
      {json{{"name", "null_terminated_bytes"}, {"configuration", {{"length_bytes", 0}}}}, ErrorCode::kInvalidArgument},
      {json{{"name", "null_terminated_bytes"}, {"configuration", {{"length_bytes", -1}}}}, ErrorCode::kInvalidArgument},
  };
  for (const auto& [input, code] : cases) {
    try {
      parse_dtype_v3(input);
      ADD_FAILURE() << input.dump() << " parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << input.dump() << ": " << e.what();
    }
  }
  // Sub-array fields (v2) have no v3 struct form.
  EXPECT_THROW(dtype_to_v3_json(DataType::structured({{"a", DataType::int_(8), 0, {2}}})), UnsupportedError);
}

// zarr-extensions "struct" (as zarr-python 3.4 writes it) and the legacy "structured".
TEST(DtypeV3, StructFieldsArePackedInOrder) {
  const json point = {{"name", "struct"},
                      {"configuration",
                       {{"fields", json::array({{{"name", "x"}, {"data_type", "float32"}},
                                                {{"name", "y"}, {"data_type", "float32"}}})}}}};
  const json document = {
      {"name", "struct"},
      {"configuration",
       {{"fields",
         json::array({{{"name", "id"}, {"data_type", "int32"}},
                      {{"name", "flags"}, {"data_type", "uint8"}},
                      {{"name", "when"},
                       {"data_type", {{"name", "numpy.datetime64"}, {"configuration", {{"unit", "s"}, {"scale_factor", 1}}}}}},
                      {{"name", "point"}, {"data_type", point}},
                      {{"name", "q"}, {"data_type", "float8_e4m3fn"}}})}}}};
  const DataType t = parse_dtype_v3(document);
  ASSERT_EQ(t.kind(), DataTypeKind::kStructured);
  ASSERT_EQ(t.fields().size(), 5u);
  EXPECT_EQ(t.size(), 4u + 1 + 8 + 8 + 1);
  const std::size_t offsets[] = {0, 4, 5, 13, 21};
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(t.fields()[i].offset, offsets[i]) << i;
  EXPECT_EQ(t.fields()[2].type, DataType::datetime("s", 1));
  EXPECT_EQ(t.fields()[3].type.fields()[1].offset, 4u);
  EXPECT_EQ(t.fields()[4].type, DataType::minifloat(MiniFloat::kE4M3FN));
  EXPECT_EQ(dtype_to_v3_json(t), document);  // written back the same, "struct" and objects
  // The legacy spelling with [name, type] pairs is the same type, written as "struct".
  const json legacy = {{"name", "structured"},
                       {"configuration", {{"fields", json::array({json::array({"x", "float32"}),
                                                                  json::array({"y", "float32"})})}}}};
  EXPECT_EQ(parse_dtype_v3(legacy), parse_dtype_v3(point));
  EXPECT_EQ(dtype_to_v3_json(parse_dtype_v3(legacy)), point);
  // A v2 structured type without sub-arrays has a v3 form too.
  EXPECT_EQ(dtype_to_v3_json(parse_dtype_v2(json::array({json::array({"x", "<f4"}), json::array({"y", "<f4"})}))),
            point);
}

TEST(DtypeV3, RefusesMalformedStructs) {
  auto with_fields = [](json fields) { return json{{"name", "struct"}, {"configuration", {{"fields", fields}}}}; };
  json nested = {{"name", "int8"}};
  for (int i = 0; i < 10; ++i) nested = with_fields(json::array({{{"name", "a"}, {"data_type", nested}}}));
  json many = json::array();  // nine fields of 2^28 - 1 bytes: past 2^31 - 1 in all
  for (int i = 0; i < 9; ++i) many.push_back({{"name", fmt::format("f{}", i)}, {"data_type", "r2147483640"}});
  const json huge = with_fields(many);
  const std::pair<json, ErrorCode> cases[] = {
      {json{{"name", "struct"}}, ErrorCode::kInvalidArgument},
      {with_fields(json::array()), ErrorCode::kInvalidArgument},
      {with_fields(json::object()), ErrorCode::kInvalidArgument},
      {with_fields(json::array({{{"name", "a"}, {"data_type", "int8"}}, {{"name", "a"}, {"data_type", "int16"}}})),
       ErrorCode::kInvalidArgument},
      {with_fields(json::array({{{"name", ""}, {"data_type", "int8"}}})), ErrorCode::kInvalidArgument},
      {with_fields(json::array({{{"name", 3}, {"data_type", "int8"}}})), ErrorCode::kInvalidArgument},
      {with_fields(json::array({{{"name", "a"}}})), ErrorCode::kInvalidArgument},
      {with_fields(json::array({{{"name", "a"}, {"data_type", "int8"}, {"shape", {2}}}})), ErrorCode::kInvalidArgument},
      {with_fields(json::array({json::array({"a", "int8", json::array({2})})})), ErrorCode::kInvalidArgument},
      {with_fields(json::array({{{"name", "a"}, {"data_type", "string"}}})), ErrorCode::kInvalidArgument},
      {with_fields(json::array({{{"name", "a"}, {"data_type", "int4"}}})), ErrorCode::kUnsupported},
      {with_fields(json::array({{{"name", "a"}, {"data_type", "int128"}}})), ErrorCode::kUnsupported},
      {with_fields(json::array({{{"name", "a"}, {"data_type", "r0"}}})), ErrorCode::kInvalidArgument},
      {json{{"name", "struct"}, {"configuration", {{"fields", json::array({{{"name", "a"}, {"data_type", "int8"}}})},
                                                   {"packed", true}}}},
       ErrorCode::kInvalidArgument},
      {nested, ErrorCode::kInvalidArgument},  // deeper than the bound
      {huge, ErrorCode::kInvalidArgument},  // larger than NumPy's largest item
  };
  for (const auto& [input, code] : cases) {
    try {
      parse_dtype_v3(input);
      ADD_FAILURE() << input.dump() << " parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << input.dump() << ": " << e.what();
    }
  }
}

TEST(DtypeV2, TypeStringsRoundTripWithByteOrder) {
  struct Case {
    const char* text;
    DataType type;
    std::optional<Endian> endian;
  };
  const Case cases[] = {
      {"|b1", DataType::boolean(), std::nullopt},
      {"|i1", DataType::int_(8), std::nullopt},
      {"<i2", DataType::int_(16), Endian::kLittle},
      {">i4", DataType::int_(32), Endian::kBig},
      {"<i8", DataType::int_(64), Endian::kLittle},
      {"|u1", DataType::uint_(8), std::nullopt},
      {">u2", DataType::uint_(16), Endian::kBig},
      {"<u8", DataType::uint_(64), Endian::kLittle},
      {"<f2", DataType::float_(16), Endian::kLittle},
      {">f4", DataType::float_(32), Endian::kBig},
      {"<f8", DataType::float_(64), Endian::kLittle},
      {"<c8", DataType::complex_(64), Endian::kLittle},
      {">c16", DataType::complex_(128), Endian::kBig},
      {"|S7", DataType::fixed_bytes(7), std::nullopt},
      {"<U13", DataType::fixed_unicode(13), Endian::kLittle},
      {">U13", DataType::fixed_unicode(13), Endian::kBig},
      {"|V8", DataType::raw_bits(64), std::nullopt},
      {"<M8[ns]", DataType::datetime("ns"), Endian::kLittle},
      {">m8[10s]", DataType::timedelta("s", 10), Endian::kBig},
      {"<M8", DataType::datetime("generic"), Endian::kLittle},
      {"<M8[D]", DataType::datetime("D"), Endian::kLittle},
      {"<M8[3generic]", DataType::datetime("generic", 3), Endian::kLittle},  // as zarr-python writes it
      {">m8[2generic]", DataType::timedelta("generic", 2), Endian::kBig},
  };
  for (const auto& c : cases) {
    const DataType t = parse_dtype_v2(c.text);
    EXPECT_EQ(t, c.type) << c.text;
    EXPECT_EQ(t.storage_endian(), c.endian) << c.text;
    EXPECT_EQ(dtype_to_v2_json(t), json(c.text)) << c.text;
  }
  // One-byte types take any order mark; NumPy normalises them to '|'.
  EXPECT_EQ(dtype_to_v2_json(parse_dtype_v2("<u1")), json("|u1"));
  EXPECT_EQ(parse_dtype_v2(">b1"), DataType::boolean());
  // "[generic]" is the plain generic unit, written as NumPy writes it.
  EXPECT_EQ(parse_dtype_v2("<m8[generic]"), DataType::timedelta("generic"));
  EXPECT_EQ(dtype_to_v2_json(parse_dtype_v2("<m8[generic]")), json("<m8"));
  // A type with no recorded order is written little-endian.
  EXPECT_EQ(dtype_to_v2_json(DataType::float_(32)), json("<f4"));
}

TEST(DtypeV2, StructuredListsArePacked) {
  const json list = json::parse(R"([["a", "<i4"], ["b", "<f8", [2, 3]], ["c", "|u1"], ["d", [["x", "<i2"], ["y", "|b1"]]]])");
  const DataType t = parse_dtype_v2(list);
  ASSERT_EQ(t.kind(), DataTypeKind::kStructured);
  ASSERT_EQ(t.fields().size(), 4u);
  EXPECT_EQ(t.fields()[0].offset, 0u);
  EXPECT_EQ(t.fields()[1].offset, 4u);
  EXPECT_EQ(t.fields()[1].shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(t.fields()[2].offset, 52u);
  EXPECT_EQ(t.fields()[3].offset, 53u);
  EXPECT_EQ(t.fields()[3].type.size(), 3u);
  EXPECT_EQ(t.size(), 56u);
  EXPECT_EQ(t.storage_endian(), Endian::kLittle);
  EXPECT_EQ(dtype_to_v2_json(t), list);

  const DataType big = parse_dtype_v2(json::parse(R"([["a", ">i4"], ["b", "|S3"]])"));
  EXPECT_EQ(big.storage_endian(), Endian::kBig);
  EXPECT_FALSE(parse_dtype_v2(json::parse(R"([["a", "|u1"]])")).storage_endian().has_value());
}

TEST(DtypeV2, RefusesBadTypes) {
  const std::pair<json, ErrorCode> cases[] = {
      {"i4", ErrorCode::kInvalidArgument},      // no byte order
      {"=i4", ErrorCode::kInvalidArgument},
      {"|i4", ErrorCode::kInvalidArgument},     // multi-byte needs < or >
      {"<i3", ErrorCode::kInvalidArgument},
      {"<i16", ErrorCode::kInvalidArgument},
      {"<f16", ErrorCode::kInvalidArgument},
      {"<c4", ErrorCode::kInvalidArgument},
      {"|b2", ErrorCode::kInvalidArgument},
      {"|S0", ErrorCode::kInvalidArgument},
      {"|S", ErrorCode::kInvalidArgument},
      {"|S-1", ErrorCode::kInvalidArgument},
      {"|S99999999999999999999", ErrorCode::kInvalidArgument},
      {"<U0", ErrorCode::kInvalidArgument},
      {"<x4", ErrorCode::kInvalidArgument},
      {"<M4[ns]", ErrorCode::kInvalidArgument},
      {"<M8[fortnight]", ErrorCode::kInvalidArgument},
      {"<M8[0s]", ErrorCode::kInvalidArgument},
      {"<M8[ns", ErrorCode::kInvalidArgument},
      {"<M8[]", ErrorCode::kInvalidArgument},
      {"|O", ErrorCode::kUnsupported},
      {"", ErrorCode::kInvalidArgument},
      {4, ErrorCode::kInvalidArgument},
      {json::array(), ErrorCode::kInvalidArgument},
      {json::parse(R"([["a"]])"), ErrorCode::kInvalidArgument},
      {json::parse(R"([["a", "<i4"], ["a", "<i4"]])"), ErrorCode::kInvalidArgument},
      {json::parse(R"([["", "<i4"]])"), ErrorCode::kInvalidArgument},
      {json::parse(R"([["a", "<i4", [0]]])"), ErrorCode::kInvalidArgument},
      {json::parse(R"([["a", "<i4", [4294967296, 4294967296]]])"), ErrorCode::kInvalidArgument},
      {json::parse(R"([["a", "<i4"], ["b", ">i4"]])"), ErrorCode::kUnsupported},
      {json::parse(R"([[1, "<i4"]])"), ErrorCode::kInvalidArgument},
  };
  for (const auto& [input, code] : cases) {
    try {
      parse_dtype_v2(input);
      ADD_FAILURE() << input.dump() << " parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << input.dump() << ": " << e.what();
    }
  }
  // Nesting is bounded.
  json deep = "<i4";
  for (int i = 0; i < 20; ++i) deep = json::array({json::array({"f", deep})});
  EXPECT_THROW(parse_dtype_v2(deep), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
