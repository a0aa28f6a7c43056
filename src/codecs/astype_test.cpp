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
  static const CodecRegistry r = registry_with(register_astype_codec);
  return r;
}

std::shared_ptr<const ArrayToArrayCodec> make_v2(const char* encode, const char* decode) {
  return as_array_codec(registry().make_v2({{"id", "astype"}, {"encode_dtype", encode}, {"decode_dtype", decode}},
                                           {parse_dtype_v2(decode), 2}));
}

std::shared_ptr<const ArrayToArrayCodec> make_v3(const nlohmann::json& config, const DataType& dtype) {
  return as_array_codec(registry().make_v3({{"name", "numcodecs.astype"}, {"configuration", config}}, {dtype, 3}));
}

const std::vector<double> kFloat64 = {1.5, -2.5, 300.7, -40000.2, 1e10, 0.49999997};
const std::vector<std::int32_t> kInt32 = {100, -100, 127, -128, 5000, -70000};

// numcodecs 0.16: AsType(encode_dtype=..., decode_dtype=...).encode(x), and .decode(that)
TEST(AsType, FloatsToNarrowerTypesMatchNumcodecs) {
  const DataType f8 = parse_dtype_v2("<f8");
  const ChunkSpec spec = spec_of({6}, f8);
  const NDBuffer x = array_of(kFloat64, {6}, f8);
  // Truncation toward zero; 1e10 does not fit int16 (NumPy on x86-64 gives 0).
  EXPECT_EQ(bytes_of(make_v2("<i2", "<f8")->encode(x, spec)), from_hex("0100feff2c01c06300000000"));
  EXPECT_EQ(bytes_of(make_v2("<f4", "<f8")->encode(x, spec)),
            from_hex("0000c03f000020c09a59964333401cc7f9021550ffffff3e"));
  EXPECT_EQ(bytes_of(make_v2("<f2", "<f8")->encode(x, spec)), from_hex("003e00c1b35ce2f8007c0038"));
}

TEST(AsType, IntegersWrapLikeNumcodecs) {
  const DataType i4 = parse_dtype_v2("<i4");
  const ChunkSpec spec = spec_of({6}, i4);
  expect_numcodecs_bytes(*make_v2("<i1", "<i4"), array_of(kInt32, {6}, i4), spec, "649c7f808890",
                         "640000009cffffff7f00000080ffffff88ffffff90ffffff");
  // ">u2": numcodecs writes 0064ff9c...; in memory the elements stay native and the v2
  // bytes codec swaps them.
  auto be = make_v2(">u2", "<i4");
  EXPECT_EQ(be->encoded_spec(spec).dtype.storage_endian(), Endian::kBig);
  expect_numcodecs_bytes(*be, array_of(kInt32, {6}, i4), spec, "64009cff7f0080ff881390ee",
                         "640000009cff00007f00000080ff00008813000090ee0000");
}

TEST(AsType, Uint64ToFloatRoundsOnce) {
  const DataType u8 = parse_dtype_v2("<u8");
  const std::vector<std::uint64_t> x = {0, 1, (std::uint64_t{1} << 63) + 12345, ~std::uint64_t{0}};
  const ChunkSpec spec = spec_of({4}, u8);
  EXPECT_EQ(bytes_of(make_v2("<f4", "<u8")->encode(array_of(x, {4}, u8), spec)),
            from_hex("000000000000803f0000005f0000805f"));
  EXPECT_EQ(bytes_of(make_v2("<f8", "<u8")->encode(array_of(x, {4}, u8), spec)),
            from_hex("0000000000000000000000000000f03f060000000000e043000000000000f043"));
}

TEST(AsType, WideningRoundTripsExactly) {
  const DataType i2 = DataType::int_(16);
  Bytes raw = random_bytes(2 * 999);
  const ChunkSpec spec = spec_of({999}, i2);
  for (const char* encode : {"int32", "int64", "float32", "float64"}) {
    SCOPED_TRACE(encode);
    auto codec = make_v3({{"encode_dtype", encode}}, i2);  // v3: decode_dtype is the array's type
    NDBuffer encoded = codec->encode(array_of_bytes(raw, {999}, i2), spec);
    EXPECT_EQ(bytes_of(codec->decode(encoded, spec)), raw);
  }
}

TEST(AsType, MetadataForms) {
  auto v2 = make_v2("<i2", "<f8");
  EXPECT_EQ(v2->name(), "numcodecs.astype");
  EXPECT_EQ(*v2->to_v2_json(), (nlohmann::json{{"id", "astype"}, {"encode_dtype", "<i2"}, {"decode_dtype", "<f8"}}));
  auto v3 = make_v3({{"encode_dtype", "int16"}, {"decode_dtype", "float64"}}, DataType::float_(64));
  EXPECT_EQ(v3->to_json(), (nlohmann::json{{"name", "numcodecs.astype"},
                                           {"configuration", {{"encode_dtype", "int16"}, {"decode_dtype", "float64"}}}}));
  EXPECT_EQ(v3->encoded_spec(spec_of({3}, DataType::float_(64))).dtype, DataType::int_(16));
}

TEST(AsType, BadConfigurationsAreTypedErrors) {
  const DataType f8 = DataType::float_(64);
  expect_error<InvalidArgumentError>([&] { make_v3(nlohmann::json::object(), f8); }, "needs \"encode_dtype\"");
  expect_error<InvalidArgumentError>(
      [&] { registry().make_v2({{"id", "astype"}, {"encode_dtype", "<i2"}}, {f8, 2}); }, "needs \"decode_dtype\"");
  expect_error<InvalidArgumentError>([&] { make_v3({{"encode_dtype", 2}}, f8); }, "data type string");
  expect_error<InvalidArgumentError>([&] { make_v3({{"encode_dtype", "<U4"}}, f8); }, "bool, integer or float");
  expect_error<InvalidArgumentError>([&] { make_v3({{"encode_dtype", "int16"}, {"order", "C"}}, f8); },
                                     "unexpected configuration key");
  auto codec = make_v2("<i2", "<f4");
  expect_error<InvalidArgumentError>([&] { codec->encoded_spec(spec_of({2}, f8)); }, "cannot work on float64");
}

}  // namespace
}  // namespace zarrkit
