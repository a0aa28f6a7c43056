// NumPy's rules for the numcodecs filters that convert and compute on elements
// (fixedscaleoffset, quantize, astype): reading their dtype strings, and casting one
// element type to another exactly as `ndarray.astype` does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "zarrkit/dtype.h"

namespace zarrkit::numpy_support {

// The element types these filters accept: bool, integers, float16/32/64.
bool is_integer(const DataType& t);
bool is_float(const DataType& t);
bool is_castable(const DataType& t);

// A data type as numcodecs writes it ("<f4", ">i2", "|u1") or as zarr-python writes it in
// v3 configurations (a NumPy name such as "float32", which is also the v3 name).
// InvalidArgumentError naming `codec` and `key` when it is not a string or not a type.
DataType parse_dtype(const nlohmann::json& value, std::string_view codec, std::string_view key);

// One element in a wide form: signed integers sign-extended, unsigned zero-extended,
// floats (and bool as 0/1) widened to double, which is exact for every float type here.
struct Scalar {
  enum class Kind : std::uint8_t { kSigned, kUnsigned, kFloat } kind = Kind::kSigned;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double f = 0;
};

// Reads one native-order element of `t` (which must be castable).
Scalar load(const std::byte* p, const DataType& t);
// Stores `value` as one element of `t`, converting as NumPy's astype does: integers wrap,
// floats round to nearest (half to even), floats truncate toward zero into integers, and
// anything to bool is `!= 0`. A float that does not fit the integer type (NaN, infinities,
// out of range: "corruption" in numcodecs' words) gives what NumPy gives on x86-64.
void store(std::byte* p, const Scalar& value, const DataType& t);

// Casts `count` contiguous elements of `from` at `src` to `to` at `dst`.
void cast_elements(const std::byte* src, const DataType& from, std::byte* dst, const DataType& to,
                   std::uint64_t count);

// The conversions behind store(), exposed for arithmetic done in one type at a time.
std::int64_t float_to_int64(double v);     // x86-64 cvttsd2si: out of range gives INT64_MIN
std::int32_t float_to_int32(double v);     // the same, 32 bits: out of range gives INT32_MIN
std::uint64_t float_to_bits(double v, std::size_t bytes, bool is_signed);  // the stored bits

// NumPy computes each float16 operation in float32 and rounds the result to float16 (half
// to even) before the next one; a Python float scalar applied to float16 data is rounded
// straight from double (overflow gives infinity). This rounds `v` so, returned as a float
// for the next float32 step.
float round_to_float16(double v);

}  // namespace zarrkit::numpy_support
