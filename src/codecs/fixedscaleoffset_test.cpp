#include <vector>

#include <gtest/gtest.h>

#include "codecs/filter_test_support.h"
#include "codecs/register.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

const CodecRegistry& registry() {
  static const CodecRegistry r = registry_with(register_fixedscaleoffset_codec);
  return r;
}

std::shared_ptr<const ArrayToArrayCodec> make_v2(nlohmann::json entry, const DataType& dtype) {
  entry["id"] = "fixedscaleoffset";
  return as_array_codec(registry().make_v2(entry, {dtype, 2}));
}

std::shared_ptr<const ArrayToArrayCodec> make_v3(const nlohmann::json& config, const DataType& dtype) {
  return as_array_codec(registry().make_v3({{"name", "numcodecs.fixedscaleoffset"}, {"configuration", config}}, {dtype, 3}));
}

// The reference bytes below come from numcodecs 0.16 with NumPy 2:
//   FixedScaleOffset(offset=..., scale=..., dtype=..., astype=...).encode(x), .decode(that)
const std::vector<float> kFloat32 = {1000.0f, 1000.11f, 1000.25f, 999.95f, 1001.5f, 1000.05f, 1003.25f, 998.0f};
const std::vector<double> kFloat64 = {0.0, 0.5, 1.5, 2.5, -0.5, -1.5, 123.456, -77.125};
const std::vector<std::int32_t> kInt32 = {10, -20, 30000, -30000, 7, 0, 1, 2};

TEST(FixedScaleOffset, Float32ToInt16ComputesInFloat32LikeNumPy) {
  const DataType f4 = parse_dtype_v2("<f4");
  auto codec = make_v2({{"offset", 1000}, {"scale", 10}, {"dtype", "<f4"}, {"astype", "<i2"}}, f4);
  EXPECT_EQ(codec->encoded_spec(spec_of({8}, f4)).dtype, parse_dtype_v2("<i2"));
  expect_numcodecs_bytes(*codec, array_of(kFloat32, {8}, f4), spec_of({8}, f4), "00000100020000000f0000002000ecff",
                         "00007a4466067a44cd0c7a4400007a4400607a4400007a44cdcc7a4400807944");
  // The chunk's shape does not matter: numcodecs works on the flattened chunk.
  expect_numcodecs_bytes(*codec, array_of(kFloat32, {2, 4}, f4), spec_of({2, 4}, f4),
                         "00000100020000000f0000002000ecff",
                         "00007a4466067a44cd0c7a4400007a4400607a4400007a44cdcc7a4400807944");
}

TEST(FixedScaleOffset, FloatParametersAndUnsignedStorage) {
  const DataType f8 = parse_dtype_v2("<f8");
  // Half-way cases round to even (2.5 * 2.5 - ... ), negative results wrap into uint8.
  auto codec = make_v2({{"offset", 0.5}, {"scale", 2.5}, {"dtype", "<f8"}, {"astype", "<u1"}}, f8);
  expect_numcodecs_bytes(*codec, array_of(kFloat64, {8}, f8), spec_of({8}, f8), "ff000205fefb333e",
                         "0000000000a05940000000000000e03fcdccccccccccf43f000000000000044066666666668659409a99999999"
                         "3959406666666666e63440cdcccccccc4c3940");
}

TEST(FixedScaleOffset, V3WithoutAstypeKeepsTheType) {
  const DataType f8 = DataType::float_(64);
  auto codec = make_v3({{"offset", 1}, {"scale", 2}, {"dtype", "<f8"}}, f8);
  EXPECT_EQ(codec->encoded_spec(spec_of({8}, f8)).dtype, f8);
  expect_numcodecs_bytes(*codec, array_of(kFloat64, {8}, f8), spec_of({8}, f8),
                         "00000000000000c0000000000000f0bf000000000000f03f000000000000084000000000000008c000000000000014"
                         "c00000000000a06e4000000000008063c0",
                         "0000000000000000000000000000e03f000000000000f83f0000000000000440000000000000e0bf000000000000f8"
                         "bf0000000000e05e4000000000004053c0");
  // "dtype" may be left out in v3: it is the array's type.
  auto implicit = make_v3({{"offset", 1}, {"scale", 2}}, f8);
  EXPECT_EQ(bytes_of(implicit->encode(array_of(kFloat64, {8}, f8), spec_of({8}, f8))),
            bytes_of(codec->encode(array_of(kFloat64, {8}, f8), spec_of({8}, f8))));
}

TEST(FixedScaleOffset, IntegerDataWithIntegerParametersWrapsInItsOwnType) {
  const DataType i4 = parse_dtype_v2("<i4");
  auto codec = make_v2({{"offset", 5}, {"scale", 3}, {"dtype", "<i4"}, {"astype", "<i2"}}, i4);
  expect_numcodecs_bytes(*codec, array_of(kInt32, {8}, i4), spec_of({8}, i4), "0f00b5ff815f61a00600f1fff4fff7ff",
                         "0a000000ecffffffda1f000026e0ffff07000000000000000100000002000000");
}

TEST(FixedScaleOffset, IntegerDataWithAFloatScaleComputesInFloat64) {
  const DataType i4 = parse_dtype_v2("<i4");
  auto codec = make_v2({{"offset", 5}, {"scale", 0.5}, {"dtype", "<i4"}, {"astype", "<i2"}}, i4);
  expect_numcodecs_bytes(*codec, array_of(kInt32, {8}, i4), spec_of({8}, i4), "0200f4ff963a66c50100fefffefffeff",
                         "09000000edffffff31750000d18affff07000000010000000100000001000000");
}

// float16 data: NumPy 2 rounds offset and scale to float16 and each operation's result to
// float16 (it computes in float32). The values: +-0, 1, 2.5, -3.5, 0.1, 1000.5, +-65504,
// the smallest subnormal, 3e-5 (subnormal), +-inf, NaN, 1.2345, 123.4.
constexpr const char* kFloat16Hex = "00000080003c004100c3662ed163ff7bfffb0100f701007c00fc007ef03cb657";

TEST(FixedScaleOffset, Float16ComputesInFloat16LikeNumPy) {
  const DataType f2 = parse_dtype_v2("<f2");
  const ChunkSpec spec = spec_of({16}, f2);
  const NDBuffer x = array_of_bytes(from_hex(kFloat16Hex), {16}, f2);
  const struct {
    nlohmann::json config;
    const char* encoded;
    const char* decoded;
  } cases[] = {
      // (x - 1000) * 10 overflows float16 for most values; NaN and infinities store as 0.
      {{{"offset", 1000}, {"scale", 10}, {"astype", "<i2"}},
       "f0d8f0d8f8d808d9d0d8f0d8050000000000f0d8f0d8000000000000f8d8c0dd",
       "00000000663acd4066c20000d163d063d06300000000d063d063d063663ab357"},
      // Decoding float16 data computes in float16 too.
      {{{"offset", 0.1}, {"scale", 2.5}, {"astype", "<f2"}},
       "008000800040004680c80000e368007c00fc00800080007c00fc007e0042d05c",
       "662e662e333b004100c3662ed263007c00fc662e662e007c00fc007e333db557"},
      // Half-way values round to even; out of range values wrap as NumPy's casts do.
      {{{"offset", 0}, {"scale", 1}, {"astype", "|i1"}}, "00000102fc00e8e0200000000000017b",
       "00000000003c004000c4000000ce00d0005000000000000000000000003cb057"},
      {{{"offset", 0.5}, {"scale", 0.5}, {"astype", "|u1"}}, "00000001fe00f4f0100000000000003d",
       "0038003800380041f25f0038a25f825f1050003800380038003800380038a857"},
      {{{"offset", 1}, {"scale", 3}, {"astype", "<i4"}},
       "fdfffffffdffffff0000000004000000f2fffffffdffffffb60b00000000008000000080fdfffffffdffffff00000080000000800000"
       "0080010000006f010000",
       "00000000003cab4055c30000d16300fc00fc0000000000fc00fc00fc553db557"},
      // float32 storage: decoding computes in float32, then rounds to float16.
      {{{"offset", -3.25}, {"scale", 1000}, {"astype", "<f4"}},
       "00204b4500204b4500c0844500c0b34500007ac3006051450000807f0000807f000080ff00204b4500204b450000807f000080ff0000"
       "c07f00208c450000807f",
       "00000000fc3b014100c3662e007c007c00fc00000000007c00fc007ef03c007c"},
      // An offset beyond float16's range becomes infinity (inf - inf is NaN).
      {{{"offset", 100000}, {"scale", 1}},
       "00fc00fc00fc00fc00fc00fc00fc00fc00fc00fc00fc00fe00fc007e00fc00fc",
       "00fe00fe00fe00fe00fe00fe00fe00fe00fe00fe00fe00fe00fe007e00fe00fe"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.config.dump());
    nlohmann::json config = c.config;
    config["dtype"] = "<f2";
    expect_numcodecs_bytes(*make_v2(config, f2), x, spec, c.encoded, c.decoded);
    expect_numcodecs_bytes(*make_v3(c.config, f2), x, spec, c.encoded, c.decoded);  // dtype from the array
  }
}

// 1000, 1000.11, 1000.25, 999.95, 6553.5, -1e6, NaN, 2.5e-8 as float32.
constexpr const char* kFloat32Hex = "00007a440a077a4400107a44cdfc794400cccc45002474c90000c07f95bfd632";
// 0.1, 1/3, 65519, 65520, 2^-25, 3 * 2^-26, -7.77, 1e300 as float64.
constexpr const char* kFloat64Hex =
    "9a9999999999b93f555555555555d53f00000000e0fdef400000000000feef40000000000000603e000000000000683e14ae47e17a141fc0"
    "9c7500883ce4377e";

TEST(FixedScaleOffset, Float16Astype) {
  // float32 data stored as float16: rounds in float32, then converts.
  const DataType f4 = parse_dtype_v2("<f4");
  auto from_f4 = make_v2({{"offset", 1000}, {"scale", 10}, {"dtype", "<f4"}, {"astype", "<f2"}}, f4);
  expect_numcodecs_bytes(*from_f4, array_of_bytes(from_hex(kFloat32Hex), {8}, f4),
                         spec_of({8}, f4), "0000003c00400080c77a00fc007ee2f0",
                         "00007a4400007a4400007a4400007a4400c0cc45000080ff0000c07f00000000");
  // int16 data: integer arithmetic wraps in int16, the result converts to float16; decoding
  // divides in float64.
  const DataType i2 = parse_dtype_v2("<i2");
  auto from_i2 = make_v2({{"offset", 5}, {"scale", 3}, {"dtype", "<i2"}, {"astype", "<f2"}}, i2);
  expect_numcodecs_bytes(*from_i2, array_of_bytes(from_hex("0a00ecff3075d08a0700000001000200"), {8}, i2),
                         spec_of({8}, i2), "804bb0d4f875faf5004680cb00ca80c8", "0a00ecffd81f24e00700000001000200");
  // float64 data: values past 65504 (65520 is the tie that goes to infinity) and below the
  // smallest subnormal.
  const DataType f8 = parse_dtype_v2("<f8");
  auto from_f8 = make_v2({{"offset", 0.25}, {"scale", 3.3}, {"dtype", "<f8"}, {"astype", "<f2"}}, f8);
  expect_numcodecs_bytes(
      *from_f8,
      array_of_bytes(from_hex(kFloat64Hex), {8}, f8),
      spec_of({8}, f8), "00800000007c007c00bc00bc80ce007c",
      "000000000000d03f000000000000d03f000000000000f07f000000000000f07f000000000020abbf000000000020abbf0000000000801e"
      "c0000000000000f07f");
}

TEST(FixedScaleOffset, BigEndianAstypeIsLeftToTheBytesCodec) {
  // Elements reach array->array codecs in native order; ">i2" tells the v2 bytes codec how
  // to store them (numcodecs: "0000000100020000000f00000020ffec").
  const DataType f4 = parse_dtype_v2("<f4");
  auto codec = make_v2({{"offset", 1000}, {"scale", 10}, {"dtype", "<f4"}, {"astype", ">i2"}}, f4);
  const ChunkSpec spec = spec_of({8}, f4);
  EXPECT_EQ(codec->encoded_spec(spec).dtype.storage_endian(), Endian::kBig);
  EXPECT_EQ(bytes_of(codec->encode(array_of(kFloat32, {8}, f4), spec)), from_hex("00000100020000000f0000002000ecff"));
}

TEST(FixedScaleOffset, RoundTripsWithinItsPrecision) {
  const DataType f8 = DataType::float_(64);
  auto codec = make_v3({{"offset", -3.25}, {"scale", 1000}, {"dtype", "float64"}, {"astype", "int32"}}, f8);
  std::vector<double> values;
  for (int i = 0; i < 1000; ++i) values.push_back(-3.25 + i * 0.0137);
  const ChunkSpec spec = spec_of({10, 100}, f8);
  NDBuffer decoded = codec->decode(codec->encode(array_of(values, {10, 100}, f8), spec), spec);
  const auto* out = reinterpret_cast<const double*>(decoded.data());
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_NEAR(out[i], values[i], 0.0005 + 1e-9) << i;  // half a step of 1/1000
}

TEST(FixedScaleOffset, MetadataForms) {
  const DataType f4 = DataType::float_(32);
  const nlohmann::json v2_entry = {{"id", "fixedscaleoffset"}, {"offset", 1000}, {"scale", 10},
                                   {"dtype", "<f4"},           {"astype", "<i2"}};
  auto v2 = make_v2(v2_entry, f4);
  EXPECT_EQ(v2->name(), "numcodecs.fixedscaleoffset");
  EXPECT_EQ(*v2->to_v2_json(), v2_entry);
  auto v3 = make_v3({{"offset", 1000.5}, {"scale", 10}}, f4);
  EXPECT_EQ(v3->to_json(), (nlohmann::json{{"name", "numcodecs.fixedscaleoffset"},
                                           {"configuration", {{"offset", 1000.5}, {"scale", 10}}}}));
  // The v2 form numcodecs needs always names both types.
  EXPECT_EQ(*v3->to_v2_json(), (nlohmann::json{{"id", "fixedscaleoffset"}, {"offset", 1000.5}, {"scale", 10},
                                               {"dtype", "<f4"}, {"astype", "<f4"}}));
}

TEST(FixedScaleOffset, BadConfigurationsAreTypedErrors) {
  const DataType f4 = DataType::float_(32);
  expect_error<InvalidArgumentError>([&] { make_v2({{"scale", 10}, {"dtype", "<f4"}}, f4); }, "needs \"offset\"");
  expect_error<InvalidArgumentError>([&] { make_v2({{"offset", 1}, {"dtype", "<f4"}}, f4); }, "needs \"scale\"");
  expect_error<InvalidArgumentError>([&] { make_v2({{"offset", 1}, {"scale", 10}}, f4); }, "needs \"dtype\"");
  expect_error<InvalidArgumentError>([&] { make_v2({{"offset", "1"}, {"scale", 10}, {"dtype", "<f4"}}, f4); },
                                     "must be a number");
  expect_error<InvalidArgumentError>([&] { make_v2({{"offset", 1}, {"scale", true}, {"dtype", "<f4"}}, f4); },
                                     "must be a number");
  expect_error<InvalidArgumentError>([&] { make_v2({{"offset", 1}, {"scale", 1}, {"dtype", "<q4"}}, f4); },
                                     "not a data type");
  expect_error<InvalidArgumentError>(
      [&] { make_v2({{"offset", 1}, {"scale", 1}, {"dtype", "<f4"}, {"level", 1}}, f4); },
      "unexpected configuration key");
  expect_error<InvalidArgumentError>([&] { make_v3(nlohmann::json::array(), f4); }, "must be an object");
  expect_error<UnsupportedError>([&] { make_v2({{"offset", 1}, {"scale", 1}, {"dtype", "<c8"}}, f4); }, "float types");
  expect_error<UnsupportedError>([&] { make_v2({{"offset", 1}, {"scale", 1}, {"dtype", "|b1"}}, f4); });
  // The configured type must be the chunk's.
  auto codec = make_v2({{"offset", 1}, {"scale", 1}, {"dtype", "<f8"}}, f4);
  expect_error<InvalidArgumentError>([&] { codec->encoded_spec(spec_of({4}, f4)); }, "cannot work on float32");
  // NumPy 2 refuses an integer offset outside the data's type (uint8 - 1000).
  const DataType u1 = DataType::uint_(8);
  auto overflow = make_v2({{"offset", 1000}, {"scale", 1}, {"dtype", "|u1"}}, u1);
  expect_error<InvalidArgumentError>(
      [&] { overflow->encode(array_of(std::vector<std::uint8_t>{1, 2}, {2}, u1), spec_of({2}, u1)); }, "does not fit");
  auto negative = make_v2({{"offset", -1}, {"scale", 1}, {"dtype", "|u1"}}, u1);
  expect_error<InvalidArgumentError>(
      [&] { negative->encode(array_of(std::vector<std::uint8_t>{1, 2}, {2}, u1), spec_of({2}, u1)); }, "does not fit");
  // Input of the wrong shape.
  auto f4_codec = make_v2({{"offset", 1}, {"scale", 1}, {"dtype", "<f4"}}, f4);
  expect_error<InvalidArgumentError>(
      [&] { f4_codec->decode(array_of(std::vector<float>{1, 2}, {2}, f4), spec_of({3}, f4)); }, "shape");
}

}  // namespace
}  // namespace zarrkit
