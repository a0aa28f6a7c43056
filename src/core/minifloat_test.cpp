#include "core/minifloat.h"

#include <cmath>
#include <string>
#include <variant>

#include <gtest/gtest.h>

namespace zarrkit {
namespace {

constexpr MiniFloat kAll[] = {MiniFloat::kE3M4,     MiniFloat::kE4M3,        MiniFloat::kE4M3FN,
                              MiniFloat::kE4M3FNUZ, MiniFloat::kE4M3B11FNUZ, MiniFloat::kE5M2,
                              MiniFloat::kE5M2FNUZ, MiniFloat::kE8M0FNU,     MiniFloat::kE2M3FN,
                              MiniFloat::kE3M2FN,   MiniFloat::kE2M1FN};

std::uint8_t round_to(MiniFloat f, double v) {
  auto r = double_to_minifloat(f, v);
  if (const auto* why = std::get_if<std::string>(&r)) ADD_FAILURE() << minifloat_format(f).name << " " << v << ": " << *why;
  return std::get<std::uint8_t>(r);
}

std::string refusal(MiniFloat f, double v) {
  auto r = double_to_minifloat(f, v);
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "";
}

TEST(MiniFloat, NamesRoundTrip) {
  for (MiniFloat f : kAll) {
    const auto& format = minifloat_format(f);
    EXPECT_EQ(minifloat_from_name(format.name), f);
    EXPECT_EQ(1 + format.exponent_bits + format.mantissa_bits - (format.has_sign ? 0 : 1), format.bits) << format.name;
  }
  EXPECT_FALSE(minifloat_from_name("float8"));
  EXPECT_FALSE(minifloat_from_name("float8_e4m3FN"));
  EXPECT_FALSE(minifloat_from_name("float4_e2m1"));
}

// Every pattern that is not a NaN converts to a double and back to itself.
TEST(MiniFloat, EveryPatternRoundTrips) {
  for (MiniFloat f : kAll) {
    const auto& format = minifloat_format(f);
    for (unsigned p = 0; p < (1u << format.bits); ++p) {
      const auto bits = static_cast<std::uint8_t>(p);
      const double d = minifloat_to_double(f, bits);
      if (minifloat_is_nan(f, bits)) {
        EXPECT_TRUE(std::isnan(d));
        continue;
      }
      EXPECT_EQ(round_to(f, d), bits) << format.name << " pattern " << p << " value " << d;
    }
  }
}

// The largest finite values and the NaN patterns as the zarr-extensions pages describe the
// formats (bias, special values).
TEST(MiniFloat, RangesAndSpecialValuesFollowTheFormats) {
  struct Case { MiniFloat f; double max; std::uint8_t nan; };
  const Case cases[] = {
      {MiniFloat::kE3M4, 15.5, 0x78},       {MiniFloat::kE4M3, 240, 0x7c},        {MiniFloat::kE4M3FN, 448, 0x7f},
      {MiniFloat::kE4M3FNUZ, 240, 0x80},    {MiniFloat::kE4M3B11FNUZ, 30, 0x80},  {MiniFloat::kE5M2, 57344, 0x7e},
      {MiniFloat::kE5M2FNUZ, 57344, 0x80},  {MiniFloat::kE8M0FNU, std::ldexp(1.0, 127), 0xff},
  };
  for (const auto& c : cases) {
    const auto& format = minifloat_format(c.f);
    double largest = 0;
    for (unsigned p = 0; p < 256; ++p) {
      const double d = minifloat_to_double(c.f, static_cast<std::uint8_t>(p));
      if (std::isfinite(d)) largest = std::max(largest, d);
    }
    EXPECT_EQ(largest, c.max) << format.name;
    EXPECT_EQ(format.canonical_nan, c.nan) << format.name;
    EXPECT_TRUE(minifloat_is_nan(c.f, c.nan)) << format.name;
    EXPECT_EQ(round_to(c.f, NAN), c.nan) << format.name;
  }
  for (MiniFloat f : {MiniFloat::kE2M3FN, MiniFloat::kE3M2FN, MiniFloat::kE2M1FN}) {
    for (unsigned p = 0; p < (1u << minifloat_format(f).bits); ++p) {
      EXPECT_TRUE(std::isfinite(minifloat_to_double(f, static_cast<std::uint8_t>(p))));
    }
  }
  EXPECT_EQ(minifloat_to_double(MiniFloat::kE2M1FN, 0x7), 6.0);
  EXPECT_EQ(minifloat_to_double(MiniFloat::kE2M3FN, 0x1f), 7.5);
  EXPECT_EQ(minifloat_to_double(MiniFloat::kE3M2FN, 0x1f), 28.0);
  EXPECT_EQ(minifloat_to_double(MiniFloat::kE8M0FNU, 0x7f), 1.0);
  EXPECT_EQ(minifloat_to_double(MiniFloat::kE8M0FNU, 0x00), std::ldexp(1.0, -127));
  // Both fn NaNs are NaN; fnuz has only one, and no negative zero.
  EXPECT_TRUE(minifloat_is_nan(MiniFloat::kE4M3FN, 0xff));
  EXPECT_FALSE(minifloat_is_nan(MiniFloat::kE4M3FNUZ, 0xff));
  EXPECT_EQ(round_to(MiniFloat::kE4M3FNUZ, -0.0), 0x00);
  EXPECT_EQ(round_to(MiniFloat::kE4M3FN, -0.0), 0x80);
  EXPECT_EQ(round_to(MiniFloat::kE2M1FN, -0.0), 0x8);
  // Only the format's low bits count.
  EXPECT_EQ(minifloat_to_double(MiniFloat::kE2M1FN, 0xf7), 6.0);
}

TEST(MiniFloat, RoundsHalfToEven) {
  // float8_e4m3fn around 1: steps of 1/8. 1 + 1/16 lies halfway between 1 (even) and 1.125.
  EXPECT_EQ(minifloat_to_double(MiniFloat::kE4M3FN, round_to(MiniFloat::kE4M3FN, 1.0625)), 1.0);
  EXPECT_EQ(minifloat_to_double(MiniFloat::kE4M3FN, round_to(MiniFloat::kE4M3FN, 1.1875)), 1.25);
  EXPECT_EQ(minifloat_to_double(MiniFloat::kE4M3FN, round_to(MiniFloat::kE4M3FN, 1.0626)), 1.125);
  // 464 is halfway between 448 (even) and 480, which float8_e4m3fn lacks: 448.
  EXPECT_EQ(minifloat_to_double(MiniFloat::kE4M3FN, round_to(MiniFloat::kE4M3FN, 464)), 448.0);
  // float4_e2m1fn: 5 lies between 4 (even) and 6.
  EXPECT_EQ(minifloat_to_double(MiniFloat::kE2M1FN, round_to(MiniFloat::kE2M1FN, 5)), 4.0);
  EXPECT_EQ(minifloat_to_double(MiniFloat::kE2M1FN, round_to(MiniFloat::kE2M1FN, 0.25)), 0.0);
  EXPECT_EQ(minifloat_to_double(MiniFloat::kE2M1FN, round_to(MiniFloat::kE2M1FN, 0.26)), 0.5);
  // Subnormals of float8_e5m2 (smallest 2^-16), and below half of it: zero.
  EXPECT_EQ(round_to(MiniFloat::kE5M2, std::ldexp(1.0, -16)), 0x01);
  EXPECT_EQ(round_to(MiniFloat::kE5M2, std::ldexp(1.0, -18)), 0x00);
  EXPECT_EQ(round_to(MiniFloat::kE5M2, -std::ldexp(1.0, -18)), 0x80);
  // IEEE-like formats overflow to infinity.
  EXPECT_EQ(round_to(MiniFloat::kE5M2, 1e6), 0x7c);
  EXPECT_EQ(round_to(MiniFloat::kE4M3, -1e6), 0xf8);
  EXPECT_EQ(round_to(MiniFloat::kE4M3, INFINITY), 0x78);
  // float8_e8m0fnu: powers of two; halfway rounds up, as ml_dtypes does.
  EXPECT_EQ(minifloat_to_double(MiniFloat::kE8M0FNU, round_to(MiniFloat::kE8M0FNU, 3.0)), 4.0);
  EXPECT_EQ(minifloat_to_double(MiniFloat::kE8M0FNU, round_to(MiniFloat::kE8M0FNU, 2.9)), 2.0);
}

TEST(MiniFloat, RefusesValuesWithoutARepresentation) {
  EXPECT_NE(refusal(MiniFloat::kE4M3FN, 1000).find("largest finite float8_e4m3fn is 448"), std::string::npos);
  EXPECT_NE(refusal(MiniFloat::kE2M1FN, 7).find("largest finite float4_e2m1fn is 6"), std::string::npos);
  EXPECT_NE(refusal(MiniFloat::kE2M1FN, NAN).find("has no NaN"), std::string::npos);
  EXPECT_NE(refusal(MiniFloat::kE4M3FN, INFINITY).find("has no infinities"), std::string::npos);
  EXPECT_NE(refusal(MiniFloat::kE5M2FNUZ, -INFINITY).find("has no infinities"), std::string::npos);
  EXPECT_NE(refusal(MiniFloat::kE8M0FNU, -1).find("no negative values"), std::string::npos);
  EXPECT_NE(refusal(MiniFloat::kE8M0FNU, 0).find("has no zero"), std::string::npos);
  EXPECT_NE(refusal(MiniFloat::kE8M0FNU, std::ldexp(1.0, -130)).find("below its smallest value"), std::string::npos);
  EXPECT_NE(refusal(MiniFloat::kE8M0FNU, std::ldexp(1.0, 128)).find("out of range"), std::string::npos);
}

}  // namespace
}  // namespace zarrkit
