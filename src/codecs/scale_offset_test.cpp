#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "codecs/filter_test_support.h"
#include "codecs/register.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

const CodecRegistry& registry() {
  static const CodecRegistry r = registry_with(register_scale_offset_codec);
  return r;
}

std::shared_ptr<const ArrayToArrayCodec> make(const nlohmann::json& entry, const DataType& dtype) {
  return as_array_codec(registry().make_v3(entry, {dtype, 3}));
}

nlohmann::json with(const nlohmann::json& offset, const nlohmann::json& scale) {
  return {{"name", "scale_offset"}, {"configuration", {{"offset", offset}, {"scale", scale}}}};
}

// Expected bytes: zarr-python 3.4.2's zarr.codecs.scale_offset _encode / _decode on the
// same values, offset and scale (x.tobytes().hex()).
TEST(ScaleOffset, FloatsComputeInTheirOwnTypeAsZarrPython) {
  const DataType f4 = DataType::float_(32);
  const std::vector<float> x = {1.1f, -2.5f, 1000.123f, NAN, INFINITY, -0.0f};
  expect_numcodecs_bytes(*make(with(5, 0.1), f4), array_of(x, {6}, f4), spec_of({6}, f4),
                         "15aec7be000040bf4c06c7420000c07f0000807f000000bf",
                         "cccc8c3f000020c0df077a440000c07f0000807f00000000");
  const DataType f8 = DataType::float_(64);
  expect_numcodecs_bytes(*make(with(5, 0.1), f8), array_of(std::vector<double>{1.1, -2.5, 1000.123}, {3}, f8),
                         spec_of({3}, f8), "f6285c8fc2f5d8bf000000000000e8bf6a6ff085c9e05840",
                         "9a9999999999f13f00000000000004c0448b6ce7fb408f40");
  // float16: each operation in float32, rounded back to float16 (60000 * 0.1 overflows nothing).
  const DataType f2 = DataType::float_(16);
  expect_numcodecs_bytes(*make(with(5, 0.1), f2), array_of_bytes(from_hex("663c00c1d063537b0080"), {5}, f2),
                         spec_of({5}, f2), "3db600ba3856dc6d00b8", "663c00c1d063537b0000");
}

TEST(ScaleOffset, IntegersAreExactOrRefused) {
  const DataType i2 = DataType::int_(16);
  expect_numcodecs_bytes(*make(with(-3, 4), i2), array_of(std::vector<std::int16_t>{10, 20, -30, 127}, {4}, i2),
                         spec_of({4}, i2), "34005c0094ff0802", "0a001400e2ff7f00");
  const DataType i1 = DataType::int_(8);
  auto codec = make(with(-3, 4), i1);
  EXPECT_THROW(codec->encode(array_of(std::vector<std::int8_t>{100}, {1}, i1), spec_of({1}, i1)),
               InvalidArgumentError);  // 412 is no int8
  EXPECT_THROW(codec->decode(array_of(std::vector<std::int8_t>{5}, {1}, i1), spec_of({1}, i1)),
               DataLossError);  // 5 / 4 has a remainder
  const DataType u8 = DataType::uint_(64);
  auto u = make(with(10, 1), u8);
  EXPECT_EQ(bytes_of(u->encode(array_of(std::vector<std::uint64_t>{~std::uint64_t{0}, 10}, {2}, u8), spec_of({2}, u8))),
            from_hex("f5ffffffffffffff0000000000000000"));
  EXPECT_THROW(u->encode(array_of(std::vector<std::uint64_t>{9}, {1}, u8), spec_of({1}, u8)), InvalidArgumentError);
}

TEST(ScaleOffset, DefaultsAndTheFillValue) {
  const DataType i4 = DataType::int_(32);
  auto identity = make({{"name", "scale_offset"}}, i4);
  EXPECT_EQ(identity->to_json(), nlohmann::json({{"name", "scale_offset"}}));
  auto codec = make(with(100, 2), i4);
  EXPECT_EQ(codec->to_json(), with(100, 2));
  EXPECT_EQ(make(with(0, 2), i4)->to_json(),
            nlohmann::json({{"name", "scale_offset"}, {"configuration", {{"scale", 2}}}}));
  const ChunkSpec encoded = codec->encoded_spec({{3}, i4, FillValue::of(std::int32_t{7})});
  EXPECT_EQ(encoded.dtype, i4);
  EXPECT_EQ(encoded.fill_value, FillValue::of(std::int32_t{-186}));
  // Float parameters in the fill-value encoding: strings for the special values.
  const DataType f8 = DataType::float_(64);
  auto special = make(with("NaN", 1), f8);
  const NDBuffer out = special->encode(array_of(std::vector<double>{1}, {1}, f8), spec_of({1}, f8));
  EXPECT_TRUE(std::isnan(*reinterpret_cast<const double*>(out.data())));
}

TEST(ScaleOffset, BadConfigurationsAreTypedErrors) {
  const DataType i4 = DataType::int_(32);
  const ChunkSpec spec = spec_of({2}, i4);
  EXPECT_THROW(make({{"name", "scale_offset"}, {"configuration", {{"offset", 1}, {"factor", 2}}}}, i4),
               InvalidArgumentError);
  EXPECT_THROW(make(with(nlohmann::json::array(), 1), i4), InvalidArgumentError);
  EXPECT_THROW(make(with(0, 0), i4)->encoded_spec(spec), InvalidArgumentError);
  EXPECT_THROW(make(with(0, 0.0), DataType::float_(32))->encoded_spec(spec_of({2}, DataType::float_(32))),
               InvalidArgumentError);
  EXPECT_THROW(make(with(0.5, 1), i4)->encoded_spec(spec), InvalidArgumentError);          // not an int32
  EXPECT_THROW(make(with(1, 4294967296), i4)->encoded_spec(spec), InvalidArgumentError);   // out of range
  EXPECT_THROW(make(with(0, 1), DataType::boolean())->encoded_spec(spec_of({2}, DataType::boolean())),
               InvalidArgumentError);
  EXPECT_THROW(make(with(0, 1), DataType::complex_(64))->encoded_spec(spec_of({2}, DataType::complex_(64))),
               InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
