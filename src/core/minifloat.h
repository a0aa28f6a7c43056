// The minifloat formats (float8, float6, float4; zarr-extensions data types, ml_dtypes):
// their names and bit layouts, and conversions between a format's bit pattern and double,
// used for fill values. Elements are held one per byte, the pattern in the low bits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "zarrkit/dtype.h"

namespace zarrkit {

struct MiniFloatFormat {
  MiniFloat format;
  std::string_view name;  // the v3 data type name: "float8_e4m3fn"
  int bits;               // 8, 6 or 4
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool has_sign;
  bool has_infinity;   // IEEE-like: exponent all ones with a zero mantissa
  bool has_nan;
  // Where the NaNs are: IEEE-like (exponent all ones, mantissa not zero), "fn" (exponent and
  // mantissa all ones), "fnuz" (only the pattern of negative zero), e8m0 (all ones).
  enum class NaNs : std::uint8_t { kNone, kIeee, kAllOnes, kNegativeZero } nans;
  std::uint8_t canonical_nan;  // the pattern that "NaN" names in metadata
  bool has_subnormals;
};

const MiniFloatFormat& minifloat_format(MiniFloat format);
std::optional<MiniFloat> minifloat_from_name(std::string_view name);

bool minifloat_is_nan(MiniFloat format, std::uint8_t bits);
// The value of a bit pattern (only the format's low bits are looked at); NaN patterns give
// a quiet NaN.
double minifloat_to_double(MiniFloat format, std::uint8_t bits);

// A double rounded half to even to the format, as ml_dtypes converts: the pattern, or why
// the value has none (out of the finite range of a format without infinities, NaN or an
// infinity where the format has none, zero or a negative number for float8_e8m0fnu).
std::variant<std::uint8_t, std::string> double_to_minifloat(MiniFloat format, double value);

}  // namespace zarrkit
