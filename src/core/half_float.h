// Conversions between double and the 16-bit float formats (IEEE binary16 "float16" and
// bfloat16), used for fill values. Narrowing rounds half to even, straight from the
// double's bits, so no intermediate float32 step adds a second rounding.
//
// Caveat: a fill value reaches us as a double already (the JSON parser rounded the decimal
// text to the nearest double), so a decimal text that lies extremely close to a midpoint
// between two 16-bit values can round differently from a direct decimal -> float16
// conversion. That needs more than 15 significant digits sitting within 2^-53 (relative)
// of the midpoint; writers that emit the shortest representation never produce it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace zarrkit {

namespace half_detail {

// Rounds a double to a binary format with `kExpBits` exponent bits and `kMantBits`
// stored mantissa bits (total 1 + kExpBits + kMantBits <= 16), round half to even.
template <int kExpBits, int kMantBits>
std::uint16_t narrow(double value) {
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const auto sign = static_cast<std::uint16_t>((bits >> 63) << (kExpBits + kMantBits));
  const std::uint64_t double_exp = (bits >> 52) & 0x7ff;
  const std::uint64_t double_frac = bits & ((std::uint64_t{1} << 52) - 1);
  constexpr std::uint16_t kInfBits = static_cast<std::uint16_t>(((1u << kExpBits) - 1) << kMantBits);

  if (double_exp == 0x7ff) {
    if (double_frac == 0) return sign | kInfBits;
    // NaN: keep the top payload bits, and force the quiet bit so it stays a NaN.
    const auto payload = static_cast<std::uint16_t>(double_frac >> (52 - kMantBits));
    return static_cast<std::uint16_t>(sign | kInfBits | payload | (1u << (kMantBits - 1)));
  }
  if (double_exp == 0) return sign;  // zero or a double subnormal: far below any 16-bit value

  constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  constexpr int kMinNormalExp = 1 - kBias;
  const int exp = static_cast<int>(double_exp) - 1023;
  const std::uint64_t significand = double_frac | (std::uint64_t{1} << 52);  // value = sig * 2^(exp-52)
  // The quantum (value of one unit in the last place) of the target at this magnitude.
  const int quantum_exp = (exp < kMinNormalExp ? kMinNormalExp : exp) - kMantBits;
  const int shift = quantum_exp - (exp - 52);  // >= 52 - kMantBits > 0
  if (shift >= 64) return sign;                 // below half the smallest subnormal
  std::uint64_t units = significand >> shift;
  const std::uint64_t rest = significand & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  if (rest > half || (rest == half && (units & 1))) ++units;
  // For subnormals `units` is the encoding itself (a carry into 1 << kMantBits yields the
  // smallest normal). For normals, add the biased exponent; a carry bumps the exponent.
  std::uint64_t encoded = units;
  if (exp >= kMinNormalExp) {
    encoded = (static_cast<std::uint64_t>(exp + kBias) << kMantBits) + (units - (std::uint64_t{1} << kMantBits));
  }
  if (encoded >= kInfBits) return sign | kInfBits;
  return static_cast<std::uint16_t>(sign | encoded);
}

template <int kExpBits, int kMantBits>
double widen(std::uint16_t h) {
  const bool negative = (h >> (kExpBits + kMantBits)) & 1;
  const unsigned exp = (h >> kMantBits) & ((1u << kExpBits) - 1);
  const unsigned frac = h & ((1u << kMantBits) - 1);
  constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  double magnitude;
  if (exp == (1u << kExpBits) - 1) {
    if (frac == 0) {
      magnitude = INFINITY;
    } else {
      // Carry the payload into a double NaN (top mantissa bits), as hardware does.
      std::uint64_t bits = (std::uint64_t{0x7ff} << 52) | (static_cast<std::uint64_t>(frac) << (52 - kMantBits));
      std::memcpy(&magnitude, &bits, sizeof bits);
    }
  } else if (exp == 0) {
    magnitude = std::ldexp(static_cast<double>(frac), 1 - kBias - kMantBits);
  } else {
    magnitude = std::ldexp(static_cast<double>(frac | (1u << kMantBits)), static_cast<int>(exp) - kBias - kMantBits);
  }
  return negative ? -magnitude : magnitude;
}

}  // namespace half_detail

inline std::uint16_t double_to_float16_bits(double v) { return half_detail::narrow<5, 10>(v); }
inline std::uint16_t double_to_bfloat16_bits(double v) { return half_detail::narrow<8, 7>(v); }
inline double float16_bits_to_double(std::uint16_t h) { return half_detail::widen<5, 10>(h); }
inline double bfloat16_bits_to_double(std::uint16_t h) { return half_detail::widen<8, 7>(h); }

}  // namespace zarrkit
