#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "codecs/filter_test_support.h"
#include "codecs/register.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

const CodecRegistry& registry() {
  static const CodecRegistry r = registry_with(register_cast_value_codec);
  return r;
}

std::shared_ptr<const ArrayToArrayCodec> make(const nlohmann::json& config, const DataType& dtype) {
  return as_array_codec(registry().make_v3({{"name", "cast_value"}, {"configuration", config}}, {dtype, 3}));
}

nlohmann::json config(const char* target, const char* rounding, const char* out_of_range = nullptr) {
  nlohmann::json c = {{"data_type", target}, {"rounding", rounding}};
  if (out_of_range != nullptr) c["out_of_range"] = out_of_range;
  return c;
}

template <typename T>
std::string encode_hex(const nlohmann::json& cfg, const std::vector<T>& values, const DataType& dtype) {
  const NDBuffer x = array_of(values, {values.size()}, dtype);
  const Bytes bytes = bytes_of(make(cfg, dtype)->encode(x, spec_of({values.size()}, dtype)));
  std::string hex;
  for (std::byte b : bytes) hex += fmt::format("{:02x}", static_cast<unsigned>(b));
  return hex;
}

const char* kModes[] = {"nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"};

// The expected bytes are cast-value-rs 0.5.1's (zarr-python 3.4.2's cast_value backend):
// cast_array(x, target_dtype=..., rounding_mode=..., out_of_range_mode=...).tobytes().hex()
TEST(CastValue, Float64ToInt8RoundsClampsAndWrapsAsZarrPython) {
  const std::vector<double> x = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.7, -1.7, 300.0, -300.0};
  const char* clamp[] = {"fefe0000020202fe7f80", "feff0000010201ff7f80", "feff0001020302ff7f80",
                         "fdfeff00010201fe7f80", "fdfeff01020302fe7f80"};
  const char* wrap[] = {"fefe0000020202fe2cd4", "feff0000010201ff2cd4", "feff0001020302ff2cd4",
                        "fdfeff00010201fe2cd4", "fdfeff01020302fe2cd4"};
  for (int m = 0; m < 5; ++m) {
    EXPECT_EQ(encode_hex(config("int8", kModes[m], "clamp"), x, DataType::float_(64)), clamp[m]) << kModes[m];
    EXPECT_EQ(encode_hex(config("int8", kModes[m], "wrap"), x, DataType::float_(64)), wrap[m]) << kModes[m];
  }
}

TEST(CastValue, NearestAwayRoundsTheExactValue) {
  // Not floor(|x| + 0.5): that sum rounds up to 1 for the largest double below 0.5.
  const std::vector<double> x = {0.49999999999999994, -0.49999999999999994, 4503599627370497.0, -2.5};
  EXPECT_EQ(encode_hex(config("int64", "nearest-away"), x, DataType::float_(64)),
            "000000000000000000000000000000000100000000001000fdffffffffffffff");
}

TEST(CastValue, Float64ToFloat32FollowsTheRoundingMode) {
  const std::vector<double> x = {1 + 0x1p-24, 1 + 3 * 0x1p-24, -(1 + 0x1p-24), 1e-46, -1e-46, 0.1};
  const char* expected[] = {"0000803f0200803f000080bf0000000000000080cdcccc3d",
                            "0000803f0100803f000080bf0000000000000080cccccc3d",
                            "0100803f0200803f000080bf0100000000000080cdcccc3d",
                            "0000803f0100803f010080bf0000000001000080cccccc3d",
                            "0100803f0200803f010080bf0000000000000080cdcccc3d"};
  for (int m = 0; m < 5; ++m) {
    EXPECT_EQ(encode_hex(config("float32", kModes[m]), x, DataType::float_(64)), expected[m]) << kModes[m];
  }
}

TEST(CastValue, Int64ToFloatsRoundAsZarrPython) {
  const std::vector<std::int64_t> x = {(1 << 24) + 1, -((1 << 24) + 1), (std::int64_t{1} << 53) + 1, 3,
                                       std::numeric_limits<std::int64_t>::min(),
                                       std::numeric_limits<std::int64_t>::max()};
  const char* f32[] = {"0000804b000080cb0000005a00004040000000df0000005f", "0000804b000080cb0000005a00004040000000dfffffff5e",
                       "0100804b000080cb0100005a00004040000000df0000005f", "0000804b010080cb0000005a00004040000000dfffffff5e",
                       "0100804b010080cb0000005a00004040000000df0000005f"};
  // float64: an int64 beyond 2^53 is compared as a double, so only 2^63 - 1 moves.
  const char* f64_plain = "000000100000704100000010000070c100000000000040430000000000000840000000000000e0c3000000000000e043";
  const char* f64_down = "000000100000704100000010000070c100000000000040430000000000000840000000000000e0c3ffffffffffffdf43";
  const char* f64_up = "000000100000704100000010000070c101000000000040430000000000000840000000000000e0c3000000000000e043";
  const char* f64[] = {f64_plain, f64_down, f64_up, f64_down, f64_up};
  for (int m = 0; m < 5; ++m) {
    EXPECT_EQ(encode_hex(config("float32", kModes[m]), x, DataType::int_(64)), f32[m]) << kModes[m];
    EXPECT_EQ(encode_hex(config("float64", kModes[m]), x, DataType::int_(64)), f64[m]) << kModes[m];
  }
}

TEST(CastValue, Float16OverflowIsRefusedOrInfiniteUnderClamp) {
  const std::vector<std::int32_t> x = {70000, -70000, 65519, 65520, 5};
  EXPECT_EQ(encode_hex(config("float16", "nearest-even", "clamp"), x, DataType::int_(32)), "007c00fcff7b007c0045");
  EXPECT_EQ(encode_hex(config("float16", "towards-zero", "clamp"), x, DataType::int_(32)), "007c00fcff7bff7b0045");
  EXPECT_THROW(encode_hex(config("float16", "nearest-even"), x, DataType::int_(32)), InvalidArgumentError);
  // Beyond the largest float16, towards zero comes back to it below 65536 only.
  EXPECT_EQ(encode_hex(config("float16", "towards-zero"), std::vector<double>{65535.0, 65520.0}, DataType::float_(64)),
            "ff7bff7b");
  EXPECT_THROW(encode_hex(config("float16", "towards-zero"), std::vector<double>{65536.0}, DataType::float_(64)),
               InvalidArgumentError);
  EXPECT_THROW(encode_hex(config("float16", "nearest-even"), std::vector<double>{65527.0}, DataType::float_(64)),
               InvalidArgumentError);
  EXPECT_THROW(encode_hex(config("float32", "towards-zero"), std::vector<double>{1e39}, DataType::float_(64)),
               InvalidArgumentError);
  // float64 -> float16 goes through float32 (rounding twice), special values pass.
  EXPECT_EQ(encode_hex(config("float16", "nearest-even", "clamp"),
                       std::vector<double>{1e300, -1e300, 65519.0, 65520.0, 1e-8, NAN, -0.0, 1 + 0x1p-11 + 0x1p-30},
                       DataType::float_(64)),
            "007c00fcff7b007c0000007e0080003c");
}

TEST(CastValue, IntegersClampOrWrap) {
  const std::vector<std::int32_t> x = {300, -1, -129, 70000, std::numeric_limits<std::int32_t>::max()};
  EXPECT_EQ(encode_hex(config("int8", "nearest-even", "clamp"), x, DataType::int_(32)), "7fff807f7f");
  EXPECT_EQ(encode_hex(config("int8", "nearest-even", "wrap"), x, DataType::int_(32)), "2cff7f70ff");
  EXPECT_THROW(encode_hex(config("int8", "nearest-even"), x, DataType::int_(32)), InvalidArgumentError);
  const std::vector<std::uint64_t> big = {~std::uint64_t{0}, std::uint64_t{1} << 63};
  EXPECT_EQ(encode_hex(config("int16", "nearest-even", "clamp"), big, DataType::uint_(64)), "ff7fff7f");
  EXPECT_EQ(encode_hex(config("int16", "nearest-even", "wrap"), big, DataType::uint_(64)), "ffff0000");
}

TEST(CastValue, FloatToIntegerRangesAreExact) {
  // 2^31 as a float32 is beyond int32 (though int32's maximum rounds to it as a float32).
  const std::vector<float> x = {2147483520.0f, 2147483648.0f, -2147483648.0f, 4294967296.0f * 3 + 5};
  EXPECT_EQ(encode_hex(config("int32", "nearest-even", "clamp"), x, DataType::float_(32)),
            "80ffff7fffffff7f00000080ffffff7f");
  EXPECT_EQ(encode_hex(config("uint32", "nearest-even", "clamp"), x, DataType::float_(32)),
            "80ffff7f0000008000000000ffffffff");
  EXPECT_EQ(encode_hex(config("int32", "nearest-even", "wrap"), x, DataType::float_(32)),
            "80ffff7f000000800000008000000000");
  const std::vector<double> y = {-3.0, -1.0, 1e19, 0x1p64 + 4096 * 3};
  EXPECT_EQ(encode_hex(config("uint64", "nearest-even", "clamp"), y, DataType::float_(64)),
            "000000000000000000000000000000000000e8890423c78affffffffffffffff");
  // Wrapping is exact modular arithmetic, even where 2^64 - 3 is no float64.
  EXPECT_THROW(encode_hex(config("int32", "nearest-even"), std::vector<float>{2147483648.0f}, DataType::float_(32)),
               InvalidArgumentError);
  EXPECT_EQ(encode_hex(config("uint64", "nearest-even", "wrap"), y, DataType::float_(64)),
            "fdffffffffffffffffffffffffffffff0000e8890423c78a0030000000000000");
}

TEST(CastValue, Float16Sources) {
  std::vector<std::uint16_t> x;  // 1.5, 2.5, -2.5, 300, -300, 1000, 65504 as float16
  for (std::uint16_t h : {0x3e00, 0x4100, 0xc100, 0x5cb0, 0xdcb0, 0x63d0, 0x7bff}) x.push_back(h);
  const DataType f2 = DataType::float_(16);
  EXPECT_EQ(encode_hex(config("int8", "nearest-even", "wrap"), x, f2), "0202fe2cd4e8e0");
  EXPECT_EQ(encode_hex(config("int8", "nearest-away", "clamp"), x, f2), "0203fd7f807f7f");
  EXPECT_EQ(encode_hex(config("uint32", "nearest-away", "wrap"), x, f2),
            "0200000003000000fdffffff2c010000d4feffffe8030000e0ff0000");
}

TEST(CastValue, NanNeedsAScalarMapToBecomeAnInteger) {
  const DataType f8 = DataType::float_(64);
  const std::vector<double> x = {1.0, NAN, 5.0};
  EXPECT_THROW(encode_hex(config("uint8", "nearest-even", "clamp"), x, f8), InvalidArgumentError);
  EXPECT_THROW(encode_hex(config("uint8", "nearest-even", "clamp"), std::vector<double>{INFINITY}, f8),
               InvalidArgumentError);
  nlohmann::json cfg = {{"data_type", "uint8"},
                        {"scalar_map", {{"encode", {{"NaN", 255}, {5.0, 7}}}, {"decode", {{255, "NaN"}}}}}};
  auto codec = make(cfg, f8);
  const ChunkSpec spec = spec_of({3}, f8);
  const NDBuffer encoded = codec->encode(array_of(x, {3}, f8), spec);
  EXPECT_EQ(bytes_of(encoded), from_hex("01ff07"));
  const NDBuffer decoded = codec->decode(encoded, spec);
  const auto* d = reinterpret_cast<const double*>(decoded.data());
  EXPECT_EQ(d[0], 1.0);
  EXPECT_TRUE(std::isnan(d[1]));
  EXPECT_EQ(d[2], 7.0);  // the decode map has no entry for 7
}

TEST(CastValue, FillValueIsCastLikeTheData) {
  const DataType f8 = DataType::float_(64);
  ChunkSpec spec{{4}, f8, FillValue::of(2.5)};
  const ChunkSpec encoded = make(config("uint8", "nearest-away"), f8)->encoded_spec(spec);
  EXPECT_EQ(encoded.dtype, DataType::uint_(8));
  EXPECT_EQ(encoded.fill_value, FillValue::of(std::uint8_t{3}));
  spec.fill_value = FillValue::of(std::numeric_limits<double>::quiet_NaN());
  EXPECT_THROW(make(config("uint8", "nearest-even"), f8)->encoded_spec(spec), InvalidArgumentError);
  nlohmann::json mapped = {{"data_type", "uint8"},
                           {"scalar_map", {{"encode", nlohmann::json::array({nlohmann::json::array({"NaN", 0})})}}}};
  EXPECT_EQ(make(mapped, f8)->encoded_spec(spec).fill_value, FillValue::of(std::uint8_t{0}));
}

TEST(CastValue, RoundTripsWhatFits) {
  const DataType f4 = DataType::float_(32);
  const std::vector<float> x = {0, 1, -7, 100, -128, 127};
  auto codec = make({{"data_type", "int8"}}, f4);
  const ChunkSpec spec = spec_of({6}, f4);
  EXPECT_EQ(bytes_of(codec->decode(codec->encode(array_of(x, {6}, f4), spec), spec)),
            bytes_of(array_of(x, {6}, f4)));
  EXPECT_EQ(codec->to_json(), nlohmann::json({{"name", "cast_value"}, {"configuration", {{"data_type", "int8"}}}}));
}

TEST(CastValue, BadConfigurationsAreTypedErrors) {
  const DataType f8 = DataType::float_(64);
  auto bad = [&](const nlohmann::json& cfg) { return make(cfg, f8); };
  EXPECT_THROW(bad(nlohmann::json::object()), InvalidArgumentError);
  EXPECT_THROW(bad({{"data_type", "uint8"}, {"extra", 1}}), InvalidArgumentError);
  EXPECT_THROW(bad({{"data_type", "uint8"}, {"rounding", "up"}}), InvalidArgumentError);
  EXPECT_THROW(bad({{"data_type", "uint8"}, {"rounding", 3}}), InvalidArgumentError);
  EXPECT_THROW(bad({{"data_type", "uint8"}, {"out_of_range", "saturate"}}), InvalidArgumentError);
  EXPECT_THROW(bad({{"data_type", "float32"}, {"out_of_range", "wrap"}}), InvalidArgumentError);
  EXPECT_THROW(bad({{"data_type", "bool"}}), InvalidArgumentError);
  EXPECT_THROW(bad({{"data_type", "no-such-type"}}), Error);
  EXPECT_THROW(bad({{"data_type", "bfloat16"}}), UnsupportedError);
  EXPECT_THROW(bad({{"data_type", "uint8"}, {"scalar_map", {{"both", nlohmann::json::array()}}}}),
               InvalidArgumentError);
  EXPECT_THROW(bad({{"data_type", "uint8"}, {"scalar_map", {{"encode", {{1, 2, 3}}}}}}), InvalidArgumentError);
  EXPECT_THROW(bad({{"data_type", "uint8"}, {"scalar_map", {{"encode", 5}}}}), InvalidArgumentError);
  // Entries are checked against the types when the chain is built: 300 is no uint8.
  auto codec = bad({{"data_type", "uint8"}, {"scalar_map", {{"encode", {{1.0, 300}}}}}});
  EXPECT_THROW(codec->encoded_spec(spec_of({2}, f8)), InvalidArgumentError);
  // The source must be castable too.
  EXPECT_THROW(make({{"data_type", "uint8"}}, DataType::complex_(64))->encoded_spec(spec_of({2}, DataType::complex_(64))),
               InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
