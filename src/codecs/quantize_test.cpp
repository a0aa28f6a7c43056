#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codecs/filter_test_support.h"
#include "codecs/register.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

const CodecRegistry& registry() {
  static const CodecRegistry r = registry_with(register_quantize_codec);
  return r;
}

std::shared_ptr<const ArrayToArrayCodec> make_v2(nlohmann::json entry, const DataType& dtype) {
  entry["id"] = "quantize";
  return as_array_codec(registry().make_v2(entry, {dtype, 2}));
}

std::shared_ptr<const ArrayToArrayCodec> make_v3(const nlohmann::json& config, const DataType& dtype) {
  return as_array_codec(registry().make_v3({{"name", "numcodecs.quantize"}, {"configuration", config}}, {dtype, 3}));
}

std::vector<double> linspace01() {
  std::vector<double> v;
  for (int i = 0; i < 10; ++i) v.push_back(i == 9 ? 1.0 : i / 9.0);
  return v;
}

// numcodecs 0.16: Quantize(digits=d, dtype='<f8').encode(np.linspace(0, 1, 10))
TEST(Quantize, Float64MatchesNumcodecsForEachDigitCount) {
  const DataType f8 = parse_dtype_v2("<f8");
  const ChunkSpec spec = spec_of({10}, f8);
  const NDBuffer x = array_of(linspace01(), {10}, f8);
  const std::string kZeros(160, '0');  // digits=-1 rounds everything here to 0
  const struct {
    int digits;
    const char* hex;
  } cases[] = {
      {1, "0000000000000000000000000000c03f000000000000d03f000000000000d43f000000000000dc3f000000000000e23f0000000000"
          "00e63f000000000000e83f000000000000ec3f000000000000f03f"},
      {2, "0000000000000000000000000000bc3f000000000000cc3f000000000080d53f000000000080dc3f0000000000c0e13f0000000000"
          "40e53f000000000000e93f000000000080ec3f000000000000f03f"},
      {3, "0000000000000000000000000080bc3f000000000080cc3f000000000050d53f000000000070dc3f0000000000c8e13f0000000000"
          "58e53f0000000000e0e83f000000000070ec3f000000000000f03f"},
      {0, "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000f03f0000000000"
          "00f03f000000000000f03f000000000000f03f000000000000f03f"},
      {-1, kZeros.c_str()},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.digits);
    auto codec = make_v2({{"digits", c.digits}, {"dtype", "<f8"}}, f8);
    // Decoding only converts the type back: the quantized values come out.
    expect_numcodecs_bytes(*codec, x, spec, c.hex, c.hex);
  }
}

TEST(Quantize, Float32ComputesInFloat32) {
  const DataType f4 = parse_dtype_v2("<f4");
  const std::vector<float> x = {0.1f, 0.2f, 1.0f / 3, -2.71828f, 1000.123f, -0.0f, 5e-5f, 3.14159f};
  auto codec = make_v2({{"digits", 2}, {"dtype", "<f4"}}, f4);
  const char* hex = "0000d03d0000503e0000ac3e00002ec000087a44000000800000000000004940";
  expect_numcodecs_bytes(*codec, array_of(x, {8}, f4), spec_of({8}, f4), hex, hex);
}

TEST(Quantize, NarrowerAstypeStoresFloat32) {
  const DataType f8 = parse_dtype_v2("<f8");
  auto codec = make_v2({{"digits", 3}, {"dtype", "<f8"}, {"astype", "<f4"}}, f8);
  EXPECT_EQ(codec->encoded_spec(spec_of({10}, f8)).dtype, parse_dtype_v2("<f4"));
  expect_numcodecs_bytes(*codec, array_of(linspace01(), {10}, f8), spec_of({10}, f8),
                         "000000000000e43d0000643e0080aa3e0080e33e00400e3f00c02a3f0000473f0080633f0000803f",
                         "0000000000000000000000000080bc3f000000000080cc3f000000000050d53f000000000070dc3f0000000000c8e1"
                         "3f000000000058e53f0000000000e0e83f000000000070ec3f000000000000f03f");
}

constexpr const char* kFloat16Hex = "00000080003c004100c3662ed163ff7bfffb0100f701007c00fc007ef03cb657";
// 1000, 1000.11, 1000.25, 999.95, 6553.5, -1e6, NaN, 2.5e-8 as float32.
constexpr const char* kFloat32Hex = "00007a440a077a4400107a44cdfc794400cccc45002474c90000c07f95bfd632";
// 0.1, 1/3, 65519, 65520, 2^-25, 3 * 2^-26, -7.77, 1e300 as float64.
constexpr const char* kFloat64Hex =
    "9a9999999999b93f555555555555d53f00000000e0fdef400000000000feef40000000000000603e000000000000683e14ae47e17a141fc0"
    "9c7500883ce4377e";

// float16 data: NumPy 2 rounds the scale 2^b to float16 (b >= 16 overflows to infinity, b
// < -25 underflows to 0: NaN everywhere) and each operation's result to float16. The values:
// +-0, 1, 2.5, -3.5, 0.1, 1000.5, +-65504, the smallest subnormal, 3e-5 (subnormal), +-inf,
// NaN, 1.2345, 123.4.
TEST(Quantize, Float16ComputesInFloat16) {
  const DataType f2 = parse_dtype_v2("<f2");
  const ChunkSpec spec = spec_of({16}, f2);
  const NDBuffer x = array_of_bytes(from_hex(kFloat16Hex), {16}, f2);
  const char* kAllNaN = "00fe00fe00fe00fe00fe00fe00fe00fe00fe00fe00fe00fe00fe007e00fe00fe";
  const struct {
    int digits;
    const char* hex;
  } cases[] = {
      {-1, "000000800000000000800000d063ff7bfffb00000000007c00fc007e00008057"},
      {0, "00000080003c004000c40000d063ff7bfffb00000000007c00fc007e003cb057"},
      {1, "00000080003c004100c30030d163007c00fc00000000007c00fc007e003db657"},
      {2, "00000080003c004100c3802e007c007c00fc00000000007c00fc007ef03cb657"},
      {3, "00000080003c004100c3602e007c007c00fc00000000007c00fc007ef03c007c"},
      {4, "00000080003c004100c3662e007c007c00fc00000000007c00fc007ef03c007c"},
      {5, kAllNaN},
      {-8, kAllNaN},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.digits);
    expect_numcodecs_bytes(*make_v2({{"digits", c.digits}, {"dtype", "<f2"}}, f2), x, spec, c.hex, c.hex);
    expect_numcodecs_bytes(*make_v3({{"digits", c.digits}}, f2), x, spec, c.hex, c.hex);
  }
  auto wider = make_v2({{"digits", 2}, {"dtype", "<f2"}, {"astype", "<f4"}}, f2);
  expect_numcodecs_bytes(*wider, x, spec,
                         "00000000000000800000803f00002040000060c00000d03d0000807f0000807f000080ff00000000000000000000"
                         "807f000080ff0000c07f00009e3f00c0f642",
                         "00000080003c004100c3802e007c007c00fc00000000007c00fc007ef03cb657");
}

TEST(Quantize, Float16Astype) {
  const DataType f4 = parse_dtype_v2("<f4");
  auto from_f4 = make_v2({{"digits", 2}, {"dtype", "<f4"}, {"astype", "<f2"}}, f4);
  expect_numcodecs_bytes(*from_f4, array_of_bytes(from_hex(kFloat32Hex), {8}, f4),
                         spec_of({8}, f4), "d063d063d063d063666e00fc007e0000",
                         "00007a4400007a4400007a4400007a4400c0cc45000080ff0000c07f00000000");
  const DataType f8 = parse_dtype_v2("<f8");
  auto from_f8 = make_v2({{"digits", 3}, {"dtype", "<f8"}, {"astype", "<f2"}}, f8);
  expect_numcodecs_bytes(
      *from_f8,
      array_of_bytes(from_hex(kFloat64Hex), {8}, f8),
      spec_of({8}, f8), "602e5435ff7b007c00000000c5c7007c",
      "000000000080b93f000000000050d53f0000000000fcef40000000000000f07f000000000000000000000000000000000000000000141f"
      "c0000000000000f07f");
}

TEST(Quantize, KeepsTheRequestedPrecision) {
  const DataType f8 = DataType::float_(64);
  auto codec = make_v3({{"digits", 4}}, f8);  // v3: "dtype" defaults to the array's type
  std::vector<double> values;
  for (int i = 0; i < 500; ++i) values.push_back(std::sin(i * 0.1) * 50);
  const ChunkSpec spec = spec_of({5, 100}, f8);
  NDBuffer encoded = codec->encode(array_of(values, {5, 100}, f8), spec);
  NDBuffer decoded = codec->decode(encoded, spec);
  EXPECT_EQ(bytes_of(decoded), bytes_of(encoded));
  const auto* out = reinterpret_cast<const double*>(decoded.data());
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_NEAR(out[i], values[i], 1e-4) << i;
}

TEST(Quantize, MetadataForms) {
  const DataType f4 = DataType::float_(32);
  const nlohmann::json entry = {{"id", "quantize"}, {"digits", 2}, {"dtype", "<f4"}, {"astype", "<f4"}};
  EXPECT_EQ(*make_v2(entry, f4)->to_v2_json(), entry);
  auto v3 = make_v3({{"digits", 2}}, f4);
  EXPECT_EQ(v3->name(), "numcodecs.quantize");
  EXPECT_EQ(v3->to_json(), (nlohmann::json{{"name", "numcodecs.quantize"}, {"configuration", {{"digits", 2}}}}));
  EXPECT_EQ(*v3->to_v2_json(), entry);
}

TEST(Quantize, BadConfigurationsAreTypedErrors) {
  const DataType f4 = DataType::float_(32);
  expect_error<InvalidArgumentError>([&] { make_v2({{"dtype", "<f4"}}, f4); }, "needs \"digits\"");
  expect_error<InvalidArgumentError>([&] { make_v2({{"digits", 2}}, f4); }, "needs \"dtype\"");
  expect_error<InvalidArgumentError>([&] { make_v2({{"digits", 1.5}, {"dtype", "<f4"}}, f4); }, "integer");
  expect_error<InvalidArgumentError>([&] { make_v2({{"digits", "2"}, {"dtype", "<f4"}}, f4); }, "integer");
  expect_error<InvalidArgumentError>([&] { make_v2({{"digits", 400}, {"dtype", "<f4"}}, f4); }, "out of range");
  expect_error<InvalidArgumentError>([&] { make_v2({{"digits", -400}, {"dtype", "<f4"}}, f4); }, "out of range");
  expect_error<InvalidArgumentError>([&] { make_v2({{"digits", 2}, {"dtype", "<i4"}}, f4); }, "floating point");
  expect_error<InvalidArgumentError>([&] { make_v2({{"digits", 2}, {"dtype", "<f4"}, {"astype", "<i2"}}, f4); },
                                     "floating point");
  expect_error<InvalidArgumentError>([&] { make_v3({{"digits", 2}}, DataType::int_(32)); }, "floating point");
  expect_error<InvalidArgumentError>([&] { make_v2({{"digits", 2}, {"dtype", "<f4"}, {"keepbits", 2}}, f4); },
                                     "unexpected configuration key");
  auto codec = make_v2({{"digits", 2}, {"dtype", "<f8"}}, f4);
  expect_error<InvalidArgumentError>([&] { codec->encoded_spec(spec_of({4}, f4)); }, "cannot work on float32");
}

}  // namespace
}  // namespace zarrkit
