#include "zarrkit/dtype.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "core/minifloat.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

const std::vector<StructField>& empty_fields() {
  static const std::vector<StructField> none;
  return none;
}

template <std::size_t N>
void swap_run(std::byte* p, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i, p += N) std::reverse(p, p + N);
}

void swap_units(std::byte* p, std::size_t bytes, std::size_t unit) {
  switch (unit) {
    case 1: return;
    case 2: return swap_run<2>(p, bytes / 2);
    case 4: return swap_run<4>(p, bytes / 4);
    case 8: return swap_run<8>(p, bytes / 8);
    default:
      for (std::size_t i = 0; i + unit <= bytes; i += unit) std::reverse(p + i, p + i + unit);
  }
}

void swap_element(std::byte* p, const DataType& t) {
  if (t.kind() == DataTypeKind::kStructured) {
    for (const auto& f : t.fields()) {
      std::size_t count = 1;
      for (auto d : f.shape) count *= d;
      for (std::size_t i = 0; i < count; ++i) swap_element(p + f.offset + i * f.type.size(), f.type);
    }
    return;
  }
  swap_units(p, t.size(), t.swap_unit());
}

}  // namespace

DataType DataType::boolean() {
  DataType t;
  t.kind_ = DataTypeKind::kBool;
  t.size_ = 1;
  return t;
}

static void check_bits(int bits, const char* what) {
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64) fail_invalid("{} with {} bits is not a data type", what, bits);
}

DataType DataType::int_(int bits) {
  check_bits(bits, "int");
  DataType t;
  t.kind_ = DataTypeKind::kInt;
  t.size_ = static_cast<std::size_t>(bits / 8);
  return t;
}
DataType DataType::uint_(int bits) {
  check_bits(bits, "uint");
  DataType t;
  t.kind_ = DataTypeKind::kUInt;
  t.size_ = static_cast<std::size_t>(bits / 8);
  return t;
}
DataType DataType::float_(int bits) {
  if (bits != 16 && bits != 32 && bits != 64) fail_invalid("float with {} bits is not a data type", bits);
  DataType t;
  t.kind_ = DataTypeKind::kFloat;
  t.size_ = static_cast<std::size_t>(bits / 8);
  return t;
}
DataType DataType::bfloat16() {
  DataType t;
  t.kind_ = DataTypeKind::kBFloat16;
  t.size_ = 2;
  return t;
}
DataType DataType::minifloat(MiniFloat format) {
  DataType t;
  t.kind_ = DataTypeKind::kMiniFloat;
  t.size_ = 1;
  t.sub_type_ = static_cast<std::uint8_t>(zarrkit::minifloat_format(format).format);  // validates
  return t;
}
DataType DataType::sub_byte_int(int bits) {
  if (bits != 2 && bits != 4) fail_invalid("int{} is not a data type", bits);
  DataType t;
  t.kind_ = DataTypeKind::kSubByteInt;
  t.size_ = 1;
  t.sub_type_ = static_cast<std::uint8_t>(bits);
  return t;
}
DataType DataType::sub_byte_uint(int bits) {
  DataType t = sub_byte_int(bits);
  t.kind_ = DataTypeKind::kSubByteUInt;
  return t;
}
DataType DataType::complex_(int bits) {
  if (bits != 64 && bits != 128) fail_invalid("complex with {} bits is not a data type", bits);
  DataType t;
  t.kind_ = DataTypeKind::kComplex;
  t.size_ = static_cast<std::size_t>(bits / 8);
  return t;
}
DataType DataType::raw_bits(int bits) {
  if (bits <= 0 || bits % 8 != 0) fail_invalid("r{} is not a data type: raw bits must be a positive multiple of 8", bits);
  DataType t;
  t.kind_ = DataTypeKind::kRawBits;
  t.size_ = static_cast<std::size_t>(bits / 8);
  return t;
}
DataType DataType::fixed_bytes(std::size_t n) {
  DataType t;
  t.kind_ = DataTypeKind::kFixedBytes;
  t.size_ = n;
  return t;
}
DataType DataType::fixed_unicode(std::size_t chars) {
  if (chars > (std::size_t{1} << 40)) fail_invalid("U{} is too long", chars);
  DataType t;
  t.kind_ = DataTypeKind::kFixedUnicode;
  t.size_ = chars * 4;
  return t;
}
DataType DataType::datetime(std::string unit, std::int64_t count) {
  DataType t;
  t.kind_ = DataTypeKind::kDatetime;
  t.size_ = 8;
  t.unit_ = std::move(unit);
  t.unit_count_ = count;
  return t;
}
DataType DataType::timedelta(std::string unit, std::int64_t count) {
  DataType t = datetime(std::move(unit), count);
  t.kind_ = DataTypeKind::kTimedelta;
  return t;
}
DataType DataType::structured(std::vector<StructField> fields) {
  DataType t;
  t.kind_ = DataTypeKind::kStructured;
  std::size_t end = 0;
  for (const auto& f : fields) {
    std::size_t count = 1;
    for (auto d : f.shape) count *= d;
    end = std::max(end, f.offset + count * f.type.size());
  }
  t.size_ = end;
  t.fields_ = std::make_shared<const std::vector<StructField>>(std::move(fields));
  return t;
}
DataType DataType::string() {
  DataType t;
  t.kind_ = DataTypeKind::kString;
  t.size_ = 0;
  return t;
}
DataType DataType::var_bytes() {
  DataType t;
  t.kind_ = DataTypeKind::kVarBytes;
  t.size_ = 0;
  return t;
}

std::size_t DataType::swap_unit() const {
  switch (kind_) {
    case DataTypeKind::kInt:
    case DataTypeKind::kUInt:
    case DataTypeKind::kFloat:
    case DataTypeKind::kBFloat16:
    case DataTypeKind::kDatetime:
    case DataTypeKind::kTimedelta: return size_;
    case DataTypeKind::kComplex: return size_ / 2;
    case DataTypeKind::kFixedUnicode: return 4;
    default: return 1;
  }
}

int DataType::value_bits() const {
  switch (kind_) {
    case DataTypeKind::kMiniFloat: return zarrkit::minifloat_format(minifloat_format()).bits;
    case DataTypeKind::kSubByteInt:
    case DataTypeKind::kSubByteUInt: return sub_type_;
    default: return static_cast<int>(size_ * 8);
  }
}

const std::vector<StructField>& DataType::fields() const { return fields_ ? *fields_ : empty_fields(); }

DataType DataType::with_storage_endian(std::optional<Endian> e) const {
  DataType t = *this;
  t.storage_endian_ = e;
  return t;
}

std::string DataType::name() const {
  switch (kind_) {
    case DataTypeKind::kBool: return "bool";
    case DataTypeKind::kInt: return fmt::format("int{}", size_ * 8);
    case DataTypeKind::kUInt: return fmt::format("uint{}", size_ * 8);
    case DataTypeKind::kFloat: return fmt::format("float{}", size_ * 8);
    case DataTypeKind::kBFloat16: return "bfloat16";
    case DataTypeKind::kMiniFloat: return std::string(zarrkit::minifloat_format(minifloat_format()).name);
    case DataTypeKind::kSubByteInt: return fmt::format("int{}", sub_type_);
    case DataTypeKind::kSubByteUInt: return fmt::format("uint{}", sub_type_);
    case DataTypeKind::kComplex: return fmt::format("complex{}", size_ * 8);
    case DataTypeKind::kRawBits: return fmt::format("r{}", size_ * 8);
    case DataTypeKind::kFixedBytes: return fmt::format("S{}", size_);
    case DataTypeKind::kFixedUnicode: return fmt::format("U{}", size_ / 4);
    case DataTypeKind::kDatetime:
    case DataTypeKind::kTimedelta: {
      std::string base = kind_ == DataTypeKind::kDatetime ? "datetime64" : "timedelta64";
      if (unit_.empty() || unit_ == "generic") return base;
      return unit_count_ == 1 ? fmt::format("{}[{}]", base, unit_) : fmt::format("{}[{}{}]", base, unit_count_, unit_);
    }
    case DataTypeKind::kStructured: {
      std::string s = "structured{";
      bool first = true;
      for (const auto& f : fields()) {
        s += fmt::format("{}{}:{}", first ? "" : ",", f.name, f.type.name());
        first = false;
      }
      return s + "}";
    }
    case DataTypeKind::kString: return "string";
    case DataTypeKind::kVarBytes: return "bytes";
  }
  return "?";
}

bool DataType::operator==(const DataType& o) const {
  if (kind_ != o.kind_ || size_ != o.size_ || sub_type_ != o.sub_type_ || unit_ != o.unit_ ||
      unit_count_ != o.unit_count_) {
    return false;
  }
  return fields() == o.fields();
}

void byteswap_elements(MutableByteView data, const DataType& dtype, Endian order) {
  if (order == native_endian() || dtype.size() == 0) return;
  if (dtype.kind() == DataTypeKind::kStructured) {
    for (std::size_t i = 0; i + dtype.size() <= data.size(); i += dtype.size()) swap_element(data.data() + i, dtype);
    return;
  }
  swap_units(data.data(), data.size(), dtype.swap_unit());
}

FillValue FillValue::zero(const DataType& dtype) {
  FillValue f;
  f.bytes_.assign(dtype.size(), std::byte{0});
  return f;
}

FillValue FillValue::null(const DataType& dtype) {
  // A v2 null fill leaves missing chunks undefined; read them as zarr-python does: NaT for
  // datetimes and timedeltas, zeros for everything else.
  const bool is_time = dtype.kind() == DataTypeKind::kDatetime || dtype.kind() == DataTypeKind::kTimedelta;
  FillValue f = is_time ? of(std::numeric_limits<std::int64_t>::min()) : zero(dtype);
  f.is_null_ = true;
  return f;
}

FillValue FillValue::from_bytes(ByteView element) {
  FillValue f;
  f.bytes_.assign(element.begin(), element.end());
  return f;
}

bool FillValue::is_all_zero() const {
  return std::all_of(bytes_.begin(), bytes_.end(), [](std::byte b) { return b == std::byte{0}; });
}

void fill_elements(MutableByteView out, const FillValue& fill) {
  const auto pattern = fill.bytes();
  if (pattern.empty() || out.empty()) return;
  if (fill.is_all_zero()) {
    std::memset(out.data(), 0, out.size());
    return;
  }
  if (pattern.size() == 1) {
    std::memset(out.data(), static_cast<int>(pattern[0]), out.size());
    return;
  }
  // Copy the pattern once, then double the filled prefix.
  std::size_t filled = std::min(pattern.size(), out.size());
  std::memcpy(out.data(), pattern.data(), filled);
  while (filled < out.size()) {
    std::size_t n = std::min(filled, out.size() - filled);
    std::memcpy(out.data() + filled, out.data(), n);
    filled += n;
  }
}

namespace {

template <typename F>
bool all_nan(ByteView data) {
  for (std::size_t i = 0; i + sizeof(F) <= data.size(); i += sizeof(F)) {
    F v;
    std::memcpy(&v, data.data() + i, sizeof(F));
    if (!std::isnan(v)) return false;
  }
  return true;
}

bool is_nan_half(std::uint16_t bits, bool bfloat) {
  return bfloat ? ((bits & 0x7f80u) == 0x7f80u && (bits & 0x007fu) != 0)
                : ((bits & 0x7c00u) == 0x7c00u && (bits & 0x03ffu) != 0);
}

}  // namespace

bool all_equal_fill(ByteView data, const DataType& dtype, const FillValue& fill) {
  const auto pattern = fill.bytes();
  const std::size_t n = pattern.size();
  if (n == 0) return false;
  // Float NaN fill: any NaN matches.
  if (dtype.kind() == DataTypeKind::kFloat || dtype.kind() == DataTypeKind::kBFloat16) {
    bool fill_nan = false;
    if (n == 4) { float f; std::memcpy(&f, pattern.data(), 4); fill_nan = std::isnan(f); }
    else if (n == 8) { double d; std::memcpy(&d, pattern.data(), 8); fill_nan = std::isnan(d); }
    else if (n == 2) { std::uint16_t h; std::memcpy(&h, pattern.data(), 2); fill_nan = is_nan_half(h, dtype.kind() == DataTypeKind::kBFloat16); }
    if (fill_nan) {
      if (n == 4) return all_nan<float>(data);
      if (n == 8) return all_nan<double>(data);
      for (std::size_t i = 0; i + 2 <= data.size(); i += 2) {
        std::uint16_t h;
        std::memcpy(&h, data.data() + i, 2);
        if (!is_nan_half(h, dtype.kind() == DataTypeKind::kBFloat16)) return false;
      }
      return true;
    }
  }
  if (dtype.kind() == DataTypeKind::kMiniFloat && minifloat_is_nan(dtype.minifloat_format(), std::to_integer<std::uint8_t>(pattern[0]))) {
    for (std::byte b : data) {
      if (!minifloat_is_nan(dtype.minifloat_format(), std::to_integer<std::uint8_t>(b))) return false;
    }
    return true;
  }
  if (data.size() % n != 0) return false;
  if (fill.is_all_zero()) {
    // Word-at-a-time check for zeros.
    std::size_t i = 0;
    for (; i + 8 <= data.size(); i += 8) {
      std::uint64_t w;
      std::memcpy(&w, data.data() + i, 8);
      if (w != 0) return false;
    }
    for (; i < data.size(); ++i) if (data[i] != std::byte{0}) return false;
    return true;
  }
  for (std::size_t i = 0; i < data.size(); i += n) {
    if (std::memcmp(data.data() + i, pattern.data(), n) != 0) return false;
  }
  return true;
}

}  // namespace zarrkit
