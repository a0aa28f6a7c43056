#include "core/minifloat.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using NaNs = MiniFloatFormat::NaNs;

// Bit layouts and special values as the zarr-extensions data type pages give them
// (tensorstore's float8_e4m3fn as ml_dtypes defines it).
constexpr MiniFloatFormat kFormats[] = {
    {MiniFloat::kE3M4, "float8_e3m4", 8, 3, 4, 3, true, true, true, NaNs::kIeee, 0x78, true},
    {MiniFloat::kE4M3, "float8_e4m3", 8, 4, 3, 7, true, true, true, NaNs::kIeee, 0x7c, true},
    {MiniFloat::kE4M3FN, "float8_e4m3fn", 8, 4, 3, 7, true, false, true, NaNs::kAllOnes, 0x7f, true},
    {MiniFloat::kE4M3FNUZ, "float8_e4m3fnuz", 8, 4, 3, 8, true, false, true, NaNs::kNegativeZero, 0x80, true},
    {MiniFloat::kE4M3B11FNUZ, "float8_e4m3b11fnuz", 8, 4, 3, 11, true, false, true, NaNs::kNegativeZero, 0x80, true},
    {MiniFloat::kE5M2, "float8_e5m2", 8, 5, 2, 15, true, true, true, NaNs::kIeee, 0x7e, true},
    {MiniFloat::kE5M2FNUZ, "float8_e5m2fnuz", 8, 5, 2, 16, true, false, true, NaNs::kNegativeZero, 0x80, true},
    {MiniFloat::kE8M0FNU, "float8_e8m0fnu", 8, 8, 0, 127, false, false, true, NaNs::kAllOnes, 0xff, false},
    {MiniFloat::kE2M3FN, "float6_e2m3fn", 6, 2, 3, 1, true, false, false, NaNs::kNone, 0, true},
    {MiniFloat::kE3M2FN, "float6_e3m2fn", 6, 3, 2, 3, true, false, false, NaNs::kNone, 0, true},
    {MiniFloat::kE2M1FN, "float4_e2m1fn", 4, 2, 1, 1, true, false, false, NaNs::kNone, 0, true},
};

std::uint32_t value_mask(const MiniFloatFormat& f) { return (1u << f.bits) - 1; }
std::uint32_t sign_bit(const MiniFloatFormat& f) { return f.has_sign ? 1u << (f.bits - 1) : 0; }
std::uint32_t magnitude_mask(const MiniFloatFormat& f) { return value_mask(f) & ~sign_bit(f); }
std::uint32_t exponent_all_ones(const MiniFloatFormat& f) { return (1u << f.exponent_bits) - 1; }

std::uint32_t infinity_pattern(const MiniFloatFormat& f) { return exponent_all_ones(f) << f.mantissa_bits; }

// The largest finite magnitude's pattern.
std::uint32_t max_finite_pattern(const MiniFloatFormat& f) {
  switch (f.nans) {
    case NaNs::kIeee: return infinity_pattern(f) - 1;
    case NaNs::kAllOnes: return magnitude_mask(f) - 1;
    case NaNs::kNegativeZero:
    case NaNs::kNone: break;
  }
  return magnitude_mask(f);
}

std::string out_of_range(const MiniFloatFormat& f) {
  return fmt::format("out of range: the largest finite {} is {}", f.name,
                     minifloat_to_double(f.format, static_cast<std::uint8_t>(max_finite_pattern(f))));
}

}  // namespace

const MiniFloatFormat& minifloat_format(MiniFloat format) {
  for (const auto& f : kFormats) {
    if (f.format == format) return f;
  }
  throw InternalError(fmt::format("unknown minifloat format {}", static_cast<int>(format)));
}

std::optional<MiniFloat> minifloat_from_name(std::string_view name) {
  for (const auto& f : kFormats) {
    if (f.name == name) return f.format;
  }
  return std::nullopt;
}

bool minifloat_is_nan(MiniFloat format, std::uint8_t bits) {
  const MiniFloatFormat& f = minifloat_format(format);
  const std::uint32_t b = bits & value_mask(f);
  switch (f.nans) {
    case NaNs::kNone: return false;
    case NaNs::kIeee: {
      const std::uint32_t magnitude = b & magnitude_mask(f);
      return magnitude > infinity_pattern(f);
    }
    case NaNs::kAllOnes: return (b & magnitude_mask(f)) == magnitude_mask(f);
    case NaNs::kNegativeZero: return b == sign_bit(f);
  }
  return false;
}

double minifloat_to_double(MiniFloat format, std::uint8_t bits) {
  const MiniFloatFormat& f = minifloat_format(format);
  if (minifloat_is_nan(format, bits)) return std::numeric_limits<double>::quiet_NaN();
  const std::uint32_t b = bits & value_mask(f);
  const bool negative = (b & sign_bit(f)) != 0;
  const std::uint32_t magnitude = b & magnitude_mask(f);
  const int exponent = static_cast<int>(magnitude >> f.mantissa_bits);
  const std::uint32_t mantissa = magnitude & ((1u << f.mantissa_bits) - 1);
  double value;
  if (f.has_infinity && magnitude == infinity_pattern(f)) {
    value = std::numeric_limits<double>::infinity();
  } else if (exponent == 0 && f.has_subnormals) {
    value = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  } else {
    value = std::ldexp(static_cast<double>(mantissa | (1u << f.mantissa_bits)), exponent - f.bias - f.mantissa_bits);
  }
  return negative ? -value : value;
}

std::variant<std::uint8_t, std::string> double_to_minifloat(MiniFloat format, double value) {
  const MiniFloatFormat& f = minifloat_format(format);
  if (std::isnan(value)) {
    if (!f.has_nan) return fmt::format("{} has no NaN", f.name);
    return f.canonical_nan;
  }
  const bool negative = std::signbit(value);
  if (negative && !f.has_sign && value != 0) return fmt::format("{} has no negative values", f.name);
  const std::uint32_t sign = negative ? sign_bit(f) : 0;
  if (std::isinf(value)) {
    if (!f.has_infinity) return fmt::format("{} has no infinities", f.name);
    return static_cast<std::uint8_t>(sign | infinity_pattern(f));
  }
  // Without subnormals (float8_e8m0fnu) the exponent field 0 is a normal value and there is
  // no zero.
  const int min_exponent = f.has_subnormals ? 1 - f.bias : -f.bias;
  std::uint64_t double_bits;
  std::memcpy(&double_bits, &value, sizeof double_bits);
  const std::uint64_t double_exponent = (double_bits >> 52) & 0x7ff;
  const int exponent = static_cast<int>(double_exponent) - 1023;
  std::uint64_t encoded = 0;
  if (!f.has_subnormals && (double_exponent == 0 || exponent < min_exponent)) {
    return fmt::format("{} has no zero, and {} is below its smallest value {}", f.name, value,
                       std::ldexp(1.0, min_exponent));
  }
  if (double_exponent != 0) {  // a double subnormal rounds to zero in every format here
    const std::uint64_t significand = (double_bits & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52);
    // One unit in the last place of the format at this magnitude, as a power of two.
    const int quantum_exponent = std::max(exponent, min_exponent) - f.mantissa_bits;
    const int shift = quantum_exponent - (exponent - 52);  // > 0: the format keeps fewer bits
    if (shift < 64) {
      std::uint64_t units = significand >> shift;
      const std::uint64_t rest = significand & ((std::uint64_t{1} << shift) - 1);
      const std::uint64_t half = std::uint64_t{1} << (shift - 1);
      if (rest > half || (rest == half && (units & 1) != 0)) ++units;
      // Subnormals: `units` is the pattern (a carry gives the smallest normal). Normals: add
      // the biased exponent; a carry out of the mantissa bumps the exponent.
      encoded = units;
      if (exponent >= min_exponent) {
        encoded = (static_cast<std::uint64_t>(exponent + f.bias) << f.mantissa_bits) + units -
                  (std::uint64_t{1} << f.mantissa_bits);
      }
    }
  }
  if (encoded > max_finite_pattern(f)) {
    if (!f.has_infinity) return out_of_range(f);
    encoded = infinity_pattern(f);
  }
  // "uz" formats have one zero; their negative-zero pattern is the NaN.
  if (encoded == 0 && f.nans == NaNs::kNegativeZero) return std::uint8_t{0};
  return static_cast<std::uint8_t>(sign | encoded);
}

}  // namespace zarrkit
