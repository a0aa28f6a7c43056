#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "codecs/compressor_test_support.h"
#include "codecs/numpy_support.h"

namespace zarrkit {
namespace {

namespace np = numpy_support;

// NumPy 2.4 on x86-64, np.array(x, 'f8').astype(t) for
//   x = [nan, inf, -inf, 1e10, -1e10, 40000.7, -40000.7, 300.5, -3.7, 3.7, 2**63, 2**64+5e5, -1.0]
// (float32 input gives the same results).
const std::vector<double> kInputs = {NAN,     INFINITY, -INFINITY, 1e10, -1e10, 40000.7, -40000.7,
                                     300.5,   -3.7,     3.7,       9223372036854775808.0,
                                     18446744073709551616.0 + 5e5, -1.0};

std::vector<std::uint64_t> cast_all(const DataType& to) {
  std::vector<std::uint64_t> out;
  for (double x : kInputs) {
    std::byte buffer[8] = {};
    np::Scalar s;
    s.kind = np::Scalar::Kind::kFloat;
    s.f = x;
    np::store(buffer, s, to);
    const np::Scalar back = np::load(buffer, to);
    out.push_back(back.kind == np::Scalar::Kind::kSigned ? static_cast<std::uint64_t>(back.i) : back.u);
  }
  return out;
}

std::vector<std::uint64_t> as_bits(std::vector<std::int64_t> v) { return {v.begin(), v.end()}; }

TEST(NumpySupport, FloatToIntegerCastsMatchNumPyOnX86) {
  EXPECT_EQ(cast_all(DataType::int_(8)), as_bits({0, 0, 0, 0, 0, 64, -64, 44, -3, 3, 0, 0, -1}));
  EXPECT_EQ(cast_all(DataType::uint_(8)), as_bits({0, 0, 0, 0, 0, 64, 192, 44, 253, 3, 0, 0, 255}));
  EXPECT_EQ(cast_all(DataType::int_(16)), as_bits({0, 0, 0, 0, 0, -25536, 25536, 300, -3, 3, 0, 0, -1}));
  EXPECT_EQ(cast_all(DataType::uint_(16)), as_bits({0, 0, 0, 0, 0, 40000, 25536, 300, 65533, 3, 0, 0, 65535}));
  const std::int64_t i32_min = std::numeric_limits<std::int32_t>::min();
  EXPECT_EQ(cast_all(DataType::int_(32)),
            as_bits({i32_min, i32_min, i32_min, i32_min, i32_min, 40000, -40000, 300, -3, 3, i32_min, i32_min, -1}));
  EXPECT_EQ(cast_all(DataType::uint_(32)), as_bits({2147483648, 0, 2147483648, 0, 2147483648, 40000, 4294927296, 300,
                                                    4294967293, 3, 0, 0, 4294967295}));
  const std::int64_t i64_min = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(cast_all(DataType::int_(64)), as_bits({i64_min, i64_min, i64_min, 10000000000, -10000000000, 40000,
                                                   -40000, 300, -3, 3, i64_min, i64_min, -1}));
  EXPECT_EQ(cast_all(DataType::uint_(64)),
            (std::vector<std::uint64_t>{9223372036854775808u, 0, 9223372036854775808u, 10000000000u,
                                        18446744063709551616u, 40000, 18446744073709511616u, 300,
                                        18446744073709551613u, 3, 9223372036854775808u, 0, 18446744073709551615u}));
}

TEST(NumpySupport, CastsBetweenIntegersWrapAndToBoolTestNonZero) {
  const std::vector<std::int32_t> in = {300, -1, 65536, 0};
  std::vector<std::uint8_t> out(4);
  np::cast_elements(reinterpret_cast<const std::byte*>(in.data()), DataType::int_(32),
                    reinterpret_cast<std::byte*>(out.data()), DataType::uint_(8), 4);
  EXPECT_EQ(out, (std::vector<std::uint8_t>{44, 255, 0, 0}));
  np::cast_elements(reinterpret_cast<const std::byte*>(in.data()), DataType::int_(32),
                    reinterpret_cast<std::byte*>(out.data()), DataType::boolean(), 4);
  EXPECT_EQ(out, (std::vector<std::uint8_t>{1, 1, 1, 0}));
  const std::vector<std::int8_t> small = {-128, 127};
  std::vector<std::int64_t> wide(2);
  np::cast_elements(reinterpret_cast<const std::byte*>(small.data()), DataType::int_(8),
                    reinterpret_cast<std::byte*>(wide.data()), DataType::int_(64), 2);
  EXPECT_EQ(wide, (std::vector<std::int64_t>{-128, 127}));
}

TEST(NumpySupport, ParsesNumcodecsAndV3TypeNames) {
  EXPECT_EQ(np::parse_dtype("<f4", "test", "dtype"), DataType::float_(32));
  EXPECT_EQ(np::parse_dtype(">i2", "test", "dtype").storage_endian(), Endian::kBig);
  EXPECT_EQ(np::parse_dtype("float64", "test", "dtype"), DataType::float_(64));
  EXPECT_EQ(np::parse_dtype("=u2", "test", "dtype"), DataType::uint_(16));
  testing::expect_error<InvalidArgumentError>([] { np::parse_dtype(7, "test", "dtype"); }, "data type string");
  testing::expect_error<InvalidArgumentError>([] { np::parse_dtype("<x9", "test", "astype"); }, "\"astype\"");
}

}  // namespace
}  // namespace zarrkit
