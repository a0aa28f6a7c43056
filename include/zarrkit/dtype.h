// Data types and fill values.
//
// A DataType describes one element as it lives in memory: always in the machine's native
// byte order. How it is laid out in storage (endianness) belongs to the codec chain: the
// v3 `bytes` codec, or for v2 the byte-order character of the dtype string, which the v2
// metadata maps onto a `bytes` codec. `storage_endian` records that v2 character so the
// dtype string can be written back unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zarrkit/buffer.h"

namespace zarrkit {

enum class Endian : std::uint8_t { kLittle, kBig };
constexpr Endian native_endian() { return Endian::kLittle; }  // x86-64 and aarch64 (LE)

enum class DataTypeKind : std::uint8_t {
  kBool,
  kInt,           // int8..int64
  kUInt,          // uint8..uint64
  kFloat,         // float16, float32, float64 (IEEE 754)
  kBFloat16,      // bfloat16 (tensorstore extension)
  kComplex,       // complex64, complex128: real then imaginary
  kRawBits,       // r<N>, N a multiple of 8
  kFixedBytes,    // v2 "S<n>": n bytes, NUL padded
  kFixedUnicode,  // v2 "U<n>": n UCS-4 code points
  kDatetime,      // datetime64[unit]: int64
  kTimedelta,     // timedelta64[unit]: int64
  kStructured,    // v2 structured dtype: named fields at fixed offsets
  kString,        // variable-length UTF-8 (not fixed-size; issue 3)
  kVarBytes,      // variable-length bytes (not fixed-size; issue 3)
  kMiniFloat,     // float8/float6/float4 formats (zarr-extensions, ml_dtypes): one byte each
  kSubByteInt,    // int2, int4: one byte each, the value in the low bits (ml_dtypes' layout)
  kSubByteUInt,   // uint2, uint4: likewise
};

// The minifloat formats of zarr-extensions' data types (and tensorstore's float8_e4m3fn),
// named as ml_dtypes and LLVM name them: exponent and mantissa bits, then "fn" (finite: no
// infinity), "uz" (unsigned zero: NaN is the pattern of -0), "fnu" (no sign, no zero).
enum class MiniFloat : std::uint8_t {
  kE3M4,         // float8_e3m4
  kE4M3,         // float8_e4m3 (IEEE-like, with infinities)
  kE4M3FN,       // float8_e4m3fn (tensorstore; not in zarr-extensions)
  kE4M3FNUZ,     // float8_e4m3fnuz
  kE4M3B11FNUZ,  // float8_e4m3b11fnuz (exponent bias 11)
  kE5M2,         // float8_e5m2
  kE5M2FNUZ,     // float8_e5m2fnuz
  kE8M0FNU,      // float8_e8m0fnu (powers of two)
  kE2M3FN,       // float6_e2m3fn
  kE3M2FN,       // float6_e3m2fn
  kE2M1FN,       // float4_e2m1fn
};

struct StructField;

class DataType {
 public:
  DataType() = default;  // uint8

  static DataType boolean();
  static DataType int_(int bits);
  static DataType uint_(int bits);
  static DataType float_(int bits);
  static DataType bfloat16();
  static DataType minifloat(MiniFloat format);
  // int2, int4 / uint2, uint4 (bits 2 or 4): one byte per element in memory and in the bytes
  // codec, the value in the low `bits` (two's complement for int), the high bits zero.
  static DataType sub_byte_int(int bits);
  static DataType sub_byte_uint(int bits);
  static DataType complex_(int bits);  // 64 or 128
  static DataType raw_bits(int bits);
  static DataType fixed_bytes(std::size_t n);
  static DataType fixed_unicode(std::size_t chars);
  // unit is a NumPy unit ("ns", "s", "D", "generic" ...), count the multiplier ("10s" -> 10).
  static DataType datetime(std::string unit, std::int64_t count = 1);
  static DataType timedelta(std::string unit, std::int64_t count = 1);
  static DataType structured(std::vector<StructField> fields);
  static DataType string();
  static DataType var_bytes();

  DataTypeKind kind() const { return kind_; }
  // Bytes per element in memory; 0 for variable-length kinds.
  std::size_t size() const { return size_; }
  bool is_variable_length() const {
    return kind_ == DataTypeKind::kString || kind_ == DataTypeKind::kVarBytes;
  }
  // The unit in which bytes are swapped when the storage byte order differs from native:
  // the element size for numbers, half of it for complex, 4 for UCS-4, 1 where order does
  // not apply (bool, int8, bytes, raw bits). Structured types swap per field.
  std::size_t swap_unit() const;

  const std::string& datetime_unit() const { return unit_; }
  std::int64_t datetime_count() const { return unit_count_; }
  const std::vector<StructField>& fields() const;
  // The format of a kMiniFloat type.
  MiniFloat minifloat_format() const { return static_cast<MiniFloat>(sub_type_); }
  // The bits that carry the value, where fewer than the element's bytes hold: 2 or 4 for the
  // sub-byte integers, 4 or 6 for float4/float6; 8 * size() for every other fixed-size type.
  int value_bits() const;
  // The value lives in the low value_bits() of one byte; the others are zero in memory.
  bool is_sub_byte() const { return value_bits() < 8 && size_ == 1; }

  // The byte order recorded for v2 storage ('<' / '>'), where the type has one.
  std::optional<Endian> storage_endian() const { return storage_endian_; }
  DataType with_storage_endian(std::optional<Endian> e) const;

  // A short readable name for messages and `zarrkit info`: "float32", "int16", "r24",
  // "S7", "U13", "datetime64[ns]", "structured{a:int32,b:float64}", "string".
  std::string name() const;

  bool operator==(const DataType& other) const;

 private:
  DataTypeKind kind_ = DataTypeKind::kUInt;
  std::size_t size_ = 1;
  std::optional<Endian> storage_endian_;
  std::string unit_;
  std::int64_t unit_count_ = 1;
  std::uint8_t sub_type_ = 0;  // kMiniFloat: the MiniFloat; kSubByte*: the value bits
  std::shared_ptr<const std::vector<StructField>> fields_;
};

struct StructField {
  std::string name;
  DataType type;
  std::size_t offset = 0;
  // Sub-array shape of the field ("(2,3)<i4"), empty for scalars.
  std::vector<std::uint64_t> shape;
  bool operator==(const StructField&) const = default;
};

// Swaps `data` (a run of elements of `dtype` in `from` order) into native order, or the
// reverse: the operation is its own inverse. Does nothing when `order` is native.
void byteswap_elements(MutableByteView data, const DataType& dtype, Endian order);

// The value of uninitialised elements: the bytes of one element in native order.
// `is_null` records a v2 `fill_value: null` (contents undefined; zarrkit uses zeros).
class FillValue {
 public:
  FillValue() = default;
  static FillValue zero(const DataType& dtype);
  static FillValue null(const DataType& dtype);
  static FillValue from_bytes(ByteView element);

  ByteView bytes() const { return {bytes_.data(), bytes_.size()}; }
  bool is_null() const { return is_null_; }
  // True if every byte of the value is zero (enables memset fast paths).
  bool is_all_zero() const;

  template <typename T>
  static FillValue of(T value) {
    FillValue f;
    f.bytes_.resize(sizeof(T));
    std::memcpy(f.bytes_.data(), &value, sizeof(T));
    return f;
  }

  bool operator==(const FillValue&) const = default;

 private:
  std::vector<std::byte> bytes_;
  bool is_null_ = false;
};

// Fills `out` (a whole number of elements) with the fill value.
void fill_elements(MutableByteView out, const FillValue& fill);

// True if every element of `data` equals the fill value. For float types any NaN matches
// a NaN fill value (as zarr-python's equal_nan comparison does).
bool all_equal_fill(ByteView data, const DataType& dtype, const FillValue& fill);

}  // namespace zarrkit
