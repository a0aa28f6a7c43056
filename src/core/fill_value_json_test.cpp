#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

template <typename T>
T value_of(const FillValue& f) {
  EXPECT_EQ(f.bytes().size(), sizeof(T));
  T v;
  std::memcpy(&v, f.bytes().data(), sizeof(T));
  return v;
}

std::uint32_t bits32(const FillValue& f) { return value_of<std::uint32_t>(f); }

TEST(FillValueV3, IntegersAreExact) {
  EXPECT_EQ(value_of<std::int8_t>(parse_fill_value_v3(-128, DataType::int_(8))), -128);
  EXPECT_EQ(value_of<std::uint8_t>(parse_fill_value_v3(255, DataType::uint_(8))), 255);
  EXPECT_EQ(value_of<std::int16_t>(parse_fill_value_v3(-32768, DataType::int_(16))), -32768);
  EXPECT_EQ(value_of<std::int32_t>(parse_fill_value_v3(2147483647, DataType::int_(32))), 2147483647);
  // 64-bit extremes never go through a double.
  const auto i64 = parse_fill_value_v3(parse_json("-9223372036854775808"), DataType::int_(64));
  EXPECT_EQ(value_of<std::int64_t>(i64), std::numeric_limits<std::int64_t>::min());
  const auto i64max = parse_fill_value_v3(parse_json("9223372036854775807"), DataType::int_(64));
  EXPECT_EQ(value_of<std::int64_t>(i64max), std::numeric_limits<std::int64_t>::max());
  const auto u64 = parse_fill_value_v3(parse_json("18446744073709551615"), DataType::uint_(64));
  EXPECT_EQ(value_of<std::uint64_t>(u64), std::numeric_limits<std::uint64_t>::max());
  const auto odd = parse_fill_value_v3(parse_json("9007199254740993"), DataType::int_(64));  // 2^53 + 1
  EXPECT_EQ(value_of<std::int64_t>(odd), 9007199254740993);
  EXPECT_EQ(fill_value_to_v3_json(odd, DataType::int_(64)).dump(), "9007199254740993");
  EXPECT_EQ(fill_value_to_v3_json(u64, DataType::uint_(64)).dump(), "18446744073709551615");
  EXPECT_EQ(fill_value_to_v3_json(i64, DataType::int_(64)).dump(), "-9223372036854775808");
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::int8_t>(-5), DataType::int_(8)), json(-5));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint16_t>(65535), DataType::uint_(16)), json(65535));
}

TEST(FillValueV3, FloatsAndSpecialValues) {
  const DataType f32 = DataType::float_(32);
  const DataType f64 = DataType::float_(64);
  const DataType f16 = DataType::float_(16);
  const DataType bf16 = DataType::bfloat16();
  EXPECT_EQ(value_of<float>(parse_fill_value_v3(1.5, f32)), 1.5f);
  EXPECT_EQ(value_of<float>(parse_fill_value_v3(0.1, f32)), 0.1f);
  EXPECT_EQ(value_of<float>(parse_fill_value_v3(16777217, f32)), 16777216.0f);  // int: one rounding, to even
  EXPECT_EQ(value_of<double>(parse_fill_value_v3(-2, f64)), -2.0);
  EXPECT_EQ(bits32(parse_fill_value_v3("NaN", f32)), 0x7fc00000u);
  EXPECT_EQ(bits32(parse_fill_value_v3("Infinity", f32)), 0x7f800000u);
  EXPECT_EQ(bits32(parse_fill_value_v3("-Infinity", f32)), 0xff800000u);
  EXPECT_EQ(bits32(parse_fill_value_v3("0x7fc00001", f32)), 0x7fc00001u);
  EXPECT_EQ(bits32(parse_fill_value_v3("0xFF800000", f32)), 0xff800000u);
  EXPECT_EQ(value_of<std::uint64_t>(parse_fill_value_v3("NaN", f64)), 0x7ff8000000000000u);
  EXPECT_EQ(value_of<std::uint64_t>(parse_fill_value_v3("0x3ff0000000000000", f64)), 0x3ff0000000000000u);
  EXPECT_EQ(value_of<std::uint16_t>(parse_fill_value_v3("NaN", f16)), 0x7e00);
  EXPECT_EQ(value_of<std::uint16_t>(parse_fill_value_v3(-1000.5, f16)), 0xe3d1);
  EXPECT_EQ(value_of<std::uint16_t>(parse_fill_value_v3("0x7c01", f16)), 0x7c01);
  EXPECT_EQ(value_of<std::uint16_t>(parse_fill_value_v3("NaN", bf16)), 0x7fc0);
  EXPECT_EQ(value_of<std::uint16_t>(parse_fill_value_v3(1.0, bf16)), 0x3f80);
  // Round half to even for float16: 2049 lies halfway between 2048 and 2050.
  EXPECT_EQ(value_of<std::uint16_t>(parse_fill_value_v3(2049, f16)), 0x6800);  // 2048
  EXPECT_EQ(value_of<std::uint16_t>(parse_fill_value_v3(2051, f16)), 0x6802);  // 2052

  // Serialising: numbers, names, and hex only for NaNs that are not canonical.
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of(1.5f), f32), json(1.5));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of(0.1f), f32), json(static_cast<double>(0.1f)));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of(std::numeric_limits<float>::quiet_NaN()), f32), json("NaN"));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of(std::numeric_limits<double>::infinity()), f64), json("Infinity"));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of(-std::numeric_limits<float>::infinity()), f32), json("-Infinity"));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint32_t>(0x7fc00001u), f32), json("0x7fc00001"));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint32_t>(0xffc00000u), f32), json("0xffc00000"));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint16_t>(0x7e01), f16), json("0x7e01"));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint16_t>(0xe3d1), f16), json(-1000.5));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of(-0.0), f64).dump(), "-0.0");
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint16_t>(0x3f80), bf16), json(1.0));
}

TEST(FillValueV3, ComplexBoolRawDatetimeText) {
  const auto c = parse_fill_value_v3(json::array({1.5, "NaN"}), DataType::complex_(64));
  ASSERT_EQ(c.bytes().size(), 8u);
  float parts[2];
  std::memcpy(parts, c.bytes().data(), 8);
  EXPECT_EQ(parts[0], 1.5f);
  EXPECT_TRUE(std::isnan(parts[1]));
  EXPECT_EQ(fill_value_to_v3_json(c, DataType::complex_(64)), json::parse(R"([1.5, "NaN"])"));
  const auto c128 = parse_fill_value_v3(json::parse(R"(["-Infinity", "0x0000000000000001"])"), DataType::complex_(128));
  EXPECT_EQ(fill_value_to_v3_json(c128, DataType::complex_(128)), json::parse(R"(["-Infinity", 5e-324])"));

  EXPECT_EQ(value_of<std::uint8_t>(parse_fill_value_v3(true, DataType::boolean())), 1);
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint8_t>(0), DataType::boolean()), json(false));

  const auto r = parse_fill_value_v3(json::array({1, 2, 255}), DataType::raw_bits(24));
  EXPECT_EQ(r.bytes().size(), 3u);
  EXPECT_EQ(std::to_integer<int>(r.bytes()[2]), 255);
  EXPECT_EQ(fill_value_to_v3_json(r, DataType::raw_bits(24)), json::array({1, 2, 255}));

  const DataType dt = DataType::datetime("ns");
  EXPECT_EQ(value_of<std::int64_t>(parse_fill_value_v3(5, dt)), 5);
  EXPECT_EQ(value_of<std::int64_t>(parse_fill_value_v3("NaT", dt)), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::int64_t>(-7), dt), json(-7));

  const DataType u5 = DataType::fixed_unicode(5);
  const auto u = parse_fill_value_v3("a\xc3\xa9", u5);  // "aé"
  ASSERT_EQ(u.bytes().size(), 20u);
  EXPECT_EQ(value_of<std::uint32_t>(FillValue::from_bytes(u.bytes().subspan(4, 4))), 0xe9u);
  EXPECT_EQ(fill_value_to_v3_json(u, u5), json("a\xc3\xa9"));
  EXPECT_EQ(fill_value_to_v3_json(parse_fill_value_v3("", u5), u5), json(""));

  const DataType s5 = DataType::fixed_bytes(5);
  const auto s = parse_fill_value_v3("YWI=", s5);  // b"ab", as zarr-python writes it
  EXPECT_EQ(as_chars(s.bytes()), std::string_view("ab\0\0\0", 5));
  EXPECT_EQ(fill_value_to_v3_json(s, s5), json("YWI="));
}

TEST(FillValueV3, RefusesBadValues) {
  const std::pair<json, DataType> bad[] = {
      {nullptr, DataType::int_(32)},
      {1.5, DataType::int_(32)},
      {parse_json("1.0"), DataType::int_(32)},
      {parse_json("1e3"), DataType::int_(32)},
      {"1", DataType::int_(32)},
      {true, DataType::int_(32)},
      {128, DataType::int_(8)},
      {-129, DataType::int_(8)},
      {-1, DataType::uint_(8)},
      {256, DataType::uint_(8)},
      {65536, DataType::uint_(16)},
      {parse_json("2147483648"), DataType::int_(32)},
      {parse_json("4294967296"), DataType::uint_(32)},
      {parse_json("9223372036854775808"), DataType::int_(64)},
      {parse_json("18446744073709551616"), DataType::uint_(64)},
      {parse_json("-1"), DataType::uint_(64)},
      {"nan", DataType::float_(32)},
      {"inf", DataType::float_(32)},
      {"0x7fc0000", DataType::float_(32)},     // 7 digits
      {"0x7fc000000", DataType::float_(32)},   // 9 digits
      {"0x7fc0", DataType::float_(32)},
      {"0x7g000000", DataType::float_(32)},
      {"0x", DataType::float_(16)},
      {json(std::nan("")), DataType::float_(64)},
      {nullptr, DataType::float_(64)},
      {true, DataType::float_(64)},
      {json::array({1.0}), DataType::complex_(64)},
      {json::array({1.0, 2.0, 3.0}), DataType::complex_(64)},
      {1.0, DataType::complex_(64)},
      {json::array({"0x7fc00000", 0}), DataType::complex_(128)},  // hex width of a part is 16
      {0, DataType::boolean()},
      {"true", DataType::boolean()},
      {json::array({1, 2}), DataType::raw_bits(24)},
      {json::array({1, 2, 256}), DataType::raw_bits(24)},
      {json::array({1, 2, -1}), DataType::raw_bits(24)},
      {"AQID", DataType::raw_bits(24)},
      {1.5, DataType::datetime("ns")},
      {"abcdef", DataType::fixed_unicode(5)},
      {5, DataType::fixed_unicode(5)},
      {"YWJjZGVm", DataType::fixed_bytes(5)},  // 6 bytes
      {"not base64!", DataType::fixed_bytes(5)},
  };
  for (const auto& [value, type] : bad) {
    EXPECT_THROW(parse_fill_value_v3(value, type), InvalidArgumentError) << value.dump() << " for " << type.name();
  }
  EXPECT_THROW(parse_fill_value_v3(5, DataType::string()), InvalidArgumentError);
}

TEST(FillValueV2, ZarrPython2Encodings) {
  EXPECT_TRUE(parse_fill_value_v2(nullptr, DataType::int_(32)).is_null());
  EXPECT_TRUE(parse_fill_value_v2(nullptr, DataType::int_(32)).is_all_zero());
  EXPECT_EQ(fill_value_to_v2_json(FillValue::null(DataType::float_(32)), DataType::float_(32)), json(nullptr));
  EXPECT_EQ(value_of<std::int32_t>(parse_fill_value_v2(-3, DataType::int_(32))), -3);
  EXPECT_EQ(value_of<std::int32_t>(parse_fill_value_v2(7.0, DataType::int_(32))), 7);  // lenient
  EXPECT_THROW(parse_fill_value_v2(7.5, DataType::int_(32)), InvalidArgumentError);
  EXPECT_EQ(bits32(parse_fill_value_v2("NaN", DataType::float_(32))), 0x7fc00000u);
  EXPECT_EQ(value_of<double>(parse_fill_value_v2("-Infinity", DataType::float_(64))), -INFINITY);
  EXPECT_THROW(parse_fill_value_v2("0x7fc00000", DataType::float_(32)), InvalidArgumentError);  // v3 only
  EXPECT_EQ(fill_value_to_v2_json(FillValue::of<std::uint32_t>(0x7fc00001u), DataType::float_(32)), json("NaN"));
  EXPECT_EQ(fill_value_to_v2_json(FillValue::of(-INFINITY), DataType::float_(32)), json("-Infinity"));
  EXPECT_EQ(fill_value_to_v2_json(FillValue::of(2.5), DataType::float_(64)), json(2.5));
  EXPECT_EQ(value_of<std::uint8_t>(parse_fill_value_v2(false, DataType::boolean())), 0);
  EXPECT_EQ(value_of<std::uint8_t>(parse_fill_value_v2(1, DataType::boolean())), 1);
  // complex: [re, im]
  const auto c = parse_fill_value_v2(json::array({1.0, 2.0}), DataType::complex_(64));
  EXPECT_EQ(fill_value_to_v2_json(c, DataType::complex_(64)), json::array({1.0, 2.0}));
  // S: Base64, NUL padded; U: the string itself; V and structured: Base64 of the element.
  const auto s = parse_fill_value_v2("YWI=", DataType::fixed_bytes(5));
  EXPECT_EQ(as_chars(s.bytes()), std::string_view("ab\0\0\0", 5));
  EXPECT_EQ(fill_value_to_v2_json(s, DataType::fixed_bytes(5)), json("YWI="));
  EXPECT_EQ(parse_fill_value_v2("", DataType::fixed_bytes(7)), FillValue::zero(DataType::fixed_bytes(7)));
  const auto u = parse_fill_value_v2("ab", DataType::fixed_unicode(5));
  EXPECT_EQ(fill_value_to_v2_json(u, DataType::fixed_unicode(5)), json("ab"));
  EXPECT_EQ(parse_fill_value_v2("", DataType::fixed_unicode(7)), FillValue::zero(DataType::fixed_unicode(7)));
  const auto v = parse_fill_value_v2("YWJjZA==", DataType::raw_bits(32));
  EXPECT_EQ(as_chars(v.bytes()), "abcd");
  EXPECT_EQ(fill_value_to_v2_json(v, DataType::raw_bits(32)), json("YWJjZA=="));
  EXPECT_THROW(parse_fill_value_v2("YWI=", DataType::raw_bits(32)), InvalidArgumentError);  // V needs all 4 bytes
  const DataType st = parse_dtype_v2(json::parse(R"([["a", "<i2"], ["b", "|u1"]])"));
  const auto sv = parse_fill_value_v2("AQID", st);
  EXPECT_EQ(fill_value_to_v2_json(sv, st), json("AQID"));
  EXPECT_EQ(parse_fill_value_v2(0, st), FillValue::zero(st));
  // datetimes: int64, NaT as the minimum
  EXPECT_EQ(value_of<std::int64_t>(parse_fill_value_v2(parse_json("-9223372036854775808"), DataType::datetime("ns"))),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(fill_value_to_v2_json(FillValue::of<std::int64_t>(5), DataType::datetime("ns")), json(5));
}

// string: the text; variable-length bytes: Base64 (zarr-python), or a byte list in v3. v2
// object arrays from zarr-python 2 say 0 or null for the empty element.
TEST(FillValue, VariableLengthTypes) {
  const DataType str = DataType::string();
  const DataType bin = DataType::var_bytes();
  EXPECT_EQ(as_chars(parse_fill_value_v3("héllo", str).bytes()), "héllo");
  EXPECT_EQ(fill_value_to_v3_json(parse_fill_value_v3("héllo", str), str), json("héllo"));
  EXPECT_EQ(parse_fill_value_v3("", str).bytes().size(), 0u);
  EXPECT_EQ(as_chars(parse_fill_value_v3("AP8=", bin).bytes()), std::string_view("\0\xff", 2));
  EXPECT_EQ(fill_value_to_v3_json(parse_fill_value_v3(json::array({0, 255}), bin), bin), json("AP8="));
  EXPECT_EQ(parse_fill_value_v2(0, str).bytes().size(), 0u);
  EXPECT_TRUE(parse_fill_value_v2(nullptr, str).is_null());
  EXPECT_EQ(fill_value_to_v2_json(parse_fill_value_v2("zz", str), str), json("zz"));
  EXPECT_THROW(parse_fill_value_v3(0, str), InvalidArgumentError);
  EXPECT_THROW(parse_fill_value_v3(nullptr, str), InvalidArgumentError);
  EXPECT_THROW(parse_fill_value_v3("not base64!", bin), InvalidArgumentError);
  EXPECT_THROW(parse_fill_value_v3(json::array({256}), bin), InvalidArgumentError);
}

std::uint8_t byte_of(const FillValue& f) { return value_of<std::uint8_t>(f); }

TEST(FillValueV3, MiniFloats) {
  const DataType e4m3fn = DataType::minifloat(MiniFloat::kE4M3FN);
  const DataType e5m2 = DataType::minifloat(MiniFloat::kE5M2);
  const DataType e4m3 = DataType::minifloat(MiniFloat::kE4M3);
  const DataType fnuz = DataType::minifloat(MiniFloat::kE4M3FNUZ);
  const DataType e8m0 = DataType::minifloat(MiniFloat::kE8M0FNU);
  const DataType e2m1 = DataType::minifloat(MiniFloat::kE2M1FN);
  const DataType e3m2 = DataType::minifloat(MiniFloat::kE3M2FN);
  EXPECT_EQ(byte_of(parse_fill_value_v3(1.5, e4m3fn)), 0x3c);
  EXPECT_EQ(byte_of(parse_fill_value_v3(-448, e4m3fn)), 0xfe);
  EXPECT_EQ(byte_of(parse_fill_value_v3(2, e4m3fn)), 0x40);  // a JSON integer
  EXPECT_EQ(byte_of(parse_fill_value_v3(0.0, e4m3fn)), 0x00);
  EXPECT_EQ(byte_of(parse_fill_value_v3(-6, e2m1)), 0x0f);
  EXPECT_EQ(byte_of(parse_fill_value_v3(28, e3m2)), 0x1f);
  EXPECT_EQ(byte_of(parse_fill_value_v3(1, e8m0)), 0x7f);
  // "NaN" is the pattern the extension page names; "Infinity" where the format has one.
  EXPECT_EQ(byte_of(parse_fill_value_v3("NaN", e4m3fn)), 0x7f);
  EXPECT_EQ(byte_of(parse_fill_value_v3("NaN", e4m3)), 0x7c);
  EXPECT_EQ(byte_of(parse_fill_value_v3("NaN", e5m2)), 0x7e);
  EXPECT_EQ(byte_of(parse_fill_value_v3("NaN", fnuz)), 0x80);
  EXPECT_EQ(byte_of(parse_fill_value_v3("NaN", e8m0)), 0xff);
  EXPECT_EQ(byte_of(parse_fill_value_v3("Infinity", e5m2)), 0x7c);
  EXPECT_EQ(byte_of(parse_fill_value_v3("-Infinity", e4m3)), 0xf8);
  EXPECT_EQ(byte_of(parse_fill_value_v3("0xff", e4m3fn)), 0xff);
  EXPECT_EQ(byte_of(parse_fill_value_v3("0x0F", e2m1)), 0x0f);
  // Back to JSON: numbers, the names, and hex for a NaN other than the named one.
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint8_t>(0x3c), e4m3fn), json(1.5));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint8_t>(0x7f), e4m3fn), json("NaN"));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint8_t>(0xff), e4m3fn), json("0xff"));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint8_t>(0x7d), e5m2), json("0x7d"));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint8_t>(0xfc), e5m2), json("-Infinity"));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint8_t>(0x0f), e2m1), json(-6.0));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint8_t>(0x80), e4m3fn).dump(), "-0.0");
}

// tensorstore's zarr (v2) driver writes float4_e2m1fn fill values as Base64 of the byte.
TEST(FillValueV2, Float4IsBase64AsTensorstoreWritesIt) {
  const DataType e2m1 = DataType::minifloat(MiniFloat::kE2M1FN);
  EXPECT_EQ(fill_value_to_v2_json(FillValue::of<std::uint8_t>(0x02), e2m1), json("Ag=="));
  EXPECT_EQ(byte_of(parse_fill_value_v2("Ag==", e2m1)), 0x02);
  EXPECT_EQ(byte_of(parse_fill_value_v2(-6, e2m1)), 0x0f);
  EXPECT_THROW(parse_fill_value_v2("/w==", e2m1), InvalidArgumentError);  // 0xff: not a 4-bit pattern
  EXPECT_THROW(parse_fill_value_v2("AAA=", e2m1), InvalidArgumentError);  // two bytes
  EXPECT_EQ(fill_value_to_v2_json(FillValue::of<std::uint8_t>(0x3c), DataType::minifloat(MiniFloat::kE4M3FN)),
            json(1.5));
}

TEST(FillValueV3, SubByteIntegers) {
  const DataType i4 = DataType::sub_byte_int(4);
  const DataType u4 = DataType::sub_byte_uint(4);
  const DataType i2 = DataType::sub_byte_int(2);
  const DataType u2 = DataType::sub_byte_uint(2);
  // The value in the low bits, the high bits clear (as ml_dtypes holds them).
  EXPECT_EQ(byte_of(parse_fill_value_v3(-8, i4)), 0x08);
  EXPECT_EQ(byte_of(parse_fill_value_v3(-1, i4)), 0x0f);
  EXPECT_EQ(byte_of(parse_fill_value_v3(7, i4)), 0x07);
  EXPECT_EQ(byte_of(parse_fill_value_v3(15, u4)), 0x0f);
  EXPECT_EQ(byte_of(parse_fill_value_v3(-2, i2)), 0x02);
  EXPECT_EQ(byte_of(parse_fill_value_v3(3, u2)), 0x03);
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint8_t>(0x08), i4), json(-8));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint8_t>(0x0f), i4), json(-1));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint8_t>(0x0f), u4), json(15));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint8_t>(0x03), i2), json(-1));
  EXPECT_EQ(fill_value_to_v3_json(FillValue::of<std::uint8_t>(0x01), i2), json(1));
}

TEST(FillValueV3, RefusesMalformedMachineLearningFills) {
  const DataType e4m3fn = DataType::minifloat(MiniFloat::kE4M3FN);
  const DataType e2m1 = DataType::minifloat(MiniFloat::kE2M1FN);
  const DataType e3m2 = DataType::minifloat(MiniFloat::kE3M2FN);
  const DataType e8m0 = DataType::minifloat(MiniFloat::kE8M0FNU);
  const DataType fnuz = DataType::minifloat(MiniFloat::kE5M2FNUZ);
  const DataType i4 = DataType::sub_byte_int(4);
  const DataType u2 = DataType::sub_byte_uint(2);
  const std::pair<json, DataType> cases[] = {
      {1000, e4m3fn},           {"Infinity", e4m3fn},  {"-Infinity", fnuz},   {"NaN", e2m1},
      {"Infinity", e3m2},       {7, e2m1},             {"0x10", e2m1},        {"0x40", e3m2},
      {"0x7", e4m3fn},          {"0x0100", e4m3fn},    {"0xzz", e4m3fn},      {"nan", e4m3fn},
      {"1.5", e4m3fn},          {nullptr, e4m3fn},     {true, e4m3fn},        {json::array({1}), e4m3fn},
      {0, e8m0},                {-2, e8m0},            {8, i4},               {-9, i4},
      {4, u2},                  {-1, u2},              {1.5, i4},             {"1", i4},
      {nullptr, i4},            {1e3, i4},             {1e300, e4m3fn},       {-1e300, e3m2},
  };
  for (const auto& [value, type] : cases) {
    try {
      parse_fill_value_v3(value, type);
      ADD_FAILURE() << value.dump() << " parsed as " << type.name();
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(type.name()), std::string::npos) << e.what();
    }
  }
}

TEST(FillValueV3, StructHasAFillValuePerField) {
  const DataType point = parse_dtype_v3(json::parse(
      R"({"name": "struct", "configuration": {"fields": [{"name": "x", "data_type": "float32"},
          {"name": "y", "data_type": "int16"}]}})"));
  const DataType record = parse_dtype_v3(json{
      {"name", "struct"},
      {"configuration", {{"fields", json::array({{{"name", "p"}, {"data_type", dtype_to_v3_json(point)}},
                                                 {{"name", "flag"}, {"data_type", "bool"}}})}}}});
  const json fill = json::parse(R"({"p": {"x": "NaN", "y": -2}, "flag": true})");
  const FillValue f = parse_fill_value_v3(fill, record);
  ASSERT_EQ(f.bytes().size(), 7u);
  EXPECT_EQ(bits32(FillValue::from_bytes(f.bytes().first(4))), 0x7fc00000u);
  EXPECT_EQ(value_of<std::int16_t>(FillValue::from_bytes(f.bytes().subspan(4, 2))), -2);
  EXPECT_EQ(std::to_integer<int>(f.bytes()[6]), 1);
  EXPECT_EQ(fill_value_to_v3_json(f, record), fill);
  // v2 (and the legacy "structured" v3 arrays): Base64 of the packed record.
  EXPECT_EQ(parse_fill_value_v3(fill_value_to_v2_json(f, record), record), f);
  const std::pair<json, const char*> bad[] = {
      {json::parse(R"({"p": {"x": 1.0}, "flag": true})"), "no fill value for field \"y\""},
      {json::parse(R"({"p": {"x": 1.0, "y": 2}})"), "no fill value for field \"flag\""},
      {json::parse(R"({"p": {"x": 1.0, "y": 2}, "flag": true, "extra": 0})"), "\"extra\" is not a field"},
      {json::parse(R"({"p": {"x": 1.0, "y": 70000}, "flag": true})"), "out of range"},
      {json::parse(R"({"p": [1.0, 2], "flag": true})"), "expected an object"},
      {json::array({1, 2}), "expected an object"},
      {"AAAA", "decodes to 3 bytes, expected 7"},
      {nullptr, "null is not allowed"},
  };
  for (const auto& [value, why] : bad) {
    try {
      parse_fill_value_v3(value, record);
      ADD_FAILURE() << value.dump() << " parsed";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

TEST(FillValue, SerialiseParseRoundTripsEveryKind) {
  const std::pair<DataType, json> cases[] = {
      {DataType::boolean(), true},
      {DataType::int_(16), -300},
      {DataType::uint_(64), parse_json("18446744073709551615")},
      {DataType::float_(16), 0.5},
      {DataType::float_(32), "0x7f800001"},
      {DataType::float_(64), 1e-300},
      {DataType::bfloat16(), "-Infinity"},
      {DataType::complex_(128), json::array({"NaN", -0.25})},
      {DataType::raw_bits(16), json::array({0, 9})},
      {DataType::timedelta("s", 10), 42},
      {DataType::fixed_unicode(3), "xyz"},
      {DataType::fixed_bytes(3), "AAEC"},
      {DataType::minifloat(MiniFloat::kE5M2FNUZ), -0.75},
      {DataType::minifloat(MiniFloat::kE3M4), "0x79"},
      {DataType::sub_byte_int(2), -2},
  };
  for (const auto& [type, value] : cases) {
    const FillValue f = parse_fill_value_v3(value, type);
    EXPECT_EQ(fill_value_to_v3_json(f, type), value) << type.name();
    EXPECT_EQ(parse_fill_value_v3(fill_value_to_v3_json(f, type), type), f) << type.name();
    // v2 keeps everything except NaN payloads of the core float types.
    const json v2 = fill_value_to_v2_json(f, type);
    if (value != "0x7f800001") {
      EXPECT_EQ(parse_fill_value_v2(v2, type), f) << type.name();
    }
  }
  // A v2 null fill has no v3 spelling; it is written as the zero it reads as.
  EXPECT_EQ(fill_value_to_v3_json(FillValue::null(DataType::float_(32)), DataType::float_(32)), json(0.0));
  EXPECT_THROW(fill_value_to_v3_json(FillValue::of<std::uint8_t>(1), DataType::int_(32)), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
