#include "core/half_float.h"

#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

namespace zarrkit {
namespace {

bool is_nan16(std::uint16_t h, bool bfloat) {
  return bfloat ? (h & 0x7f80) == 0x7f80 && (h & 0x7f) : (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
}

// Every 16-bit pattern widens exactly and narrows back to itself.
TEST(HalfFloat, EveryValueRoundTrips) {
  for (int bf = 0; bf < 2; ++bf) {
    for (std::uint32_t i = 0; i < 65536; ++i) {
      const auto h = static_cast<std::uint16_t>(i);
      const double d = bf ? bfloat16_bits_to_double(h) : float16_bits_to_double(h);
      const std::uint16_t back = bf ? double_to_bfloat16_bits(d) : double_to_float16_bits(d);
      if (is_nan16(h, bf)) {
        EXPECT_TRUE(std::isnan(d));
        EXPECT_TRUE(is_nan16(back, bf));
      } else {
        EXPECT_EQ(back, h) << "bf=" << bf << " bits=" << i;
      }
    }
  }
}

// The value halfway between two neighbours rounds to the one with an even mantissa;
// a hair either side rounds to the nearer one.
TEST(HalfFloat, MidpointsRoundHalfToEven) {
  for (int bf = 0; bf < 2; ++bf) {
    const std::uint16_t inf = bf ? 0x7f80 : 0x7c00;
    for (std::uint32_t i = 0; i + 1 < inf; ++i) {
      const auto lo = static_cast<std::uint16_t>(i);
      const auto hi = static_cast<std::uint16_t>(i + 1);
      const double a = bf ? bfloat16_bits_to_double(lo) : float16_bits_to_double(lo);
      const double b = bf ? bfloat16_bits_to_double(hi) : float16_bits_to_double(hi);
      const double mid = (a + b) / 2;  // exact in double
      auto narrow = [&](double x) { return bf ? double_to_bfloat16_bits(x) : double_to_float16_bits(x); };
      ASSERT_EQ(narrow(mid), (lo & 1) ? hi : lo) << "bf=" << bf << " between " << i << " and " << i + 1;
      ASSERT_EQ(narrow(std::nextafter(mid, 0.0)), lo);
      ASSERT_EQ(narrow(std::nextafter(mid, INFINITY)), hi);
      ASSERT_EQ(narrow(-mid), ((lo & 1) ? hi : lo) | 0x8000);
    }
  }
}

TEST(HalfFloat, OverflowUnderflowAndSpecials) {
  EXPECT_EQ(double_to_float16_bits(65504.0), 0x7bff);
  EXPECT_EQ(double_to_float16_bits(65519.99), 0x7bff);
  EXPECT_EQ(double_to_float16_bits(65520.0), 0x7c00);  // the tie goes to even: infinity
  EXPECT_EQ(double_to_float16_bits(1e300), 0x7c00);
  EXPECT_EQ(double_to_float16_bits(-1e300), 0xfc00);
  EXPECT_EQ(double_to_float16_bits(std::ldexp(1.0, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(double_to_float16_bits(std::ldexp(1.0, -25)), 0x0000);  // tie with 0: even
  EXPECT_EQ(double_to_float16_bits(std::nextafter(std::ldexp(1.0, -25), 1.0)), 0x0001);
  EXPECT_EQ(double_to_float16_bits(-0.0), 0x8000);
  EXPECT_EQ(double_to_float16_bits(5e-324), 0x0000);
  EXPECT_EQ(double_to_float16_bits(INFINITY), 0x7c00);
  EXPECT_EQ(double_to_float16_bits(std::nan("")), 0x7e00);
  EXPECT_EQ(double_to_bfloat16_bits(1.0), 0x3f80);
  EXPECT_EQ(double_to_bfloat16_bits(-2.0), 0xc000);
  EXPECT_EQ(double_to_bfloat16_bits(3.0e38), 0x7f62);
  EXPECT_EQ(double_to_bfloat16_bits(3.4e38), 0x7f80);  // past the largest finite, rounds up
  EXPECT_EQ(double_to_bfloat16_bits(std::nan("")), 0x7fc0);
  EXPECT_DOUBLE_EQ(float16_bits_to_double(0x3c00), 1.0);
  EXPECT_DOUBLE_EQ(float16_bits_to_double(0xc000), -2.0);
  EXPECT_DOUBLE_EQ(float16_bits_to_double(0x0001), std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isinf(float16_bits_to_double(0xfc00)));
}

#if defined(__FLT16_MAX__)
// The compiler's own double -> _Float16 conversion (one correctly rounded step) agrees.
TEST(HalfFloat, AgreesWithCompilerFloat16) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 2000000; ++i) {
    std::uint64_t bits = rng();
    // Concentrate on the float16 range: exponents -30..17.
    bits = (bits & 0x800fffffffffffffull) | (static_cast<std::uint64_t>(1023 - 30 + static_cast<int>(rng() % 48)) << 52);
    double d;
    std::memcpy(&d, &bits, 8);
    const _Float16 h = static_cast<_Float16>(d);
    std::uint16_t expected;
    std::memcpy(&expected, &h, 2);
    ASSERT_EQ(double_to_float16_bits(d), expected) << d;
  }
}
#endif

}  // namespace
}  // namespace zarrkit
