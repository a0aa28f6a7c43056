#include "codecs/numpy_support.h"

#include <cmath>
#include <cstring>
#include <string>

#include "core/half_float.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit::numpy_support {

bool is_integer(const DataType& t) { return t.kind() == DataTypeKind::kInt || t.kind() == DataTypeKind::kUInt; }

bool is_float(const DataType& t) {
  return t.kind() == DataTypeKind::kFloat && (t.size() == 2 || t.size() == 4 || t.size() == 8);
}

bool is_castable(const DataType& t) { return t.kind() == DataTypeKind::kBool || is_integer(t) || is_float(t); }

DataType parse_dtype(const nlohmann::json& value, std::string_view codec, std::string_view key) {
  if (!value.is_string()) {
    fail_invalid("{} codec: \"{}\" must be a data type string, got {}", codec, key, value.dump());
  }
  const std::string& s = value.get_ref<const std::string&>();
  try {
    const bool numpy_form = !s.empty() && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=');
    if (numpy_form && s[0] == '=') return parse_dtype_v2("<" + s.substr(1));  // native: little-endian hosts
    return numpy_form ? parse_dtype_v2(value) : parse_dtype_v3(value);
  } catch (const Error&) {
    fail_invalid("{} codec: \"{}\" {} is not a data type zarrkit knows", codec, key, value.dump());
  }
}

Scalar load(const std::byte* p, const DataType& t) {
  Scalar s;
  switch (t.kind()) {
    case DataTypeKind::kBool:
      s.kind = Scalar::Kind::kUnsigned;
      s.u = std::to_integer<std::uint8_t>(*p) != 0;
      return s;
    case DataTypeKind::kInt: {
      std::uint64_t bits = 0;
      std::memcpy(&bits, p, t.size());  // little-endian hosts (dtype.h)
      const unsigned width = static_cast<unsigned>(8 * t.size());
      if (width < 64 && ((bits >> (width - 1)) & 1u) != 0) bits |= ~std::uint64_t{0} << width;
      s.kind = Scalar::Kind::kSigned;
      s.i = static_cast<std::int64_t>(bits);
      return s;
    }
    case DataTypeKind::kUInt:
      s.kind = Scalar::Kind::kUnsigned;
      std::memcpy(&s.u, p, t.size());
      return s;
    case DataTypeKind::kFloat:
      s.kind = Scalar::Kind::kFloat;
      if (t.size() == 2) {
        std::uint16_t h;
        std::memcpy(&h, p, 2);
        s.f = float16_bits_to_double(h);
      } else if (t.size() == 4) {
        float f;
        std::memcpy(&f, p, 4);
        s.f = f;
      } else {
        std::memcpy(&s.f, p, 8);
      }
      return s;
    default: fail_unsupported("NumPy casting of {} elements is not supported", t.name());
  }
}

std::int32_t float_to_int32(double v) {
  if (!(v > -2147483649.0 && v < 2147483648.0)) return INT32_MIN;  // NaN too
  return static_cast<std::int32_t>(v);
}

std::int64_t float_to_int64(double v) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<std::int64_t>(v);
}

std::uint64_t float_to_bits(double v, std::size_t bytes, bool is_signed) {
  // NumPy's scalar loops compile to the x86-64 truncating conversions: 8- and 16-bit targets
  // go through a 32-bit one; unsigned targets take their upper half from an unsigned path.
  switch (bytes) {
    case 1:
    case 2: return static_cast<std::uint64_t>(static_cast<std::uint32_t>(float_to_int32(v)));
    case 4:
      if (!is_signed && v >= 2147483648.0) return v < 4294967296.0 ? static_cast<std::uint32_t>(v) : 0;
      return static_cast<std::uint32_t>(float_to_int32(v));
    default:
      if (!is_signed && v >= 9223372036854775808.0) {
        return v < 18446744073709551616.0 ? static_cast<std::uint64_t>(v) : 0;
      }
      return static_cast<std::uint64_t>(float_to_int64(v));
  }
}

float round_to_float16(double v) { return static_cast<float>(float16_bits_to_double(double_to_float16_bits(v))); }

namespace {

std::uint64_t integer_bits(const Scalar& s) {
  return s.kind == Scalar::Kind::kSigned ? static_cast<std::uint64_t>(s.i) : s.u;
}

void store_float(std::byte* p, const Scalar& value, std::size_t size) {
  // Integers convert straight to the target width: one rounding, as in C and NumPy.
  if (size == 8) {
    const double d = value.kind == Scalar::Kind::kFloat    ? value.f
                     : value.kind == Scalar::Kind::kSigned ? static_cast<double>(value.i)
                                                           : static_cast<double>(value.u);
    std::memcpy(p, &d, 8);
  } else if (size == 4) {
    const float f = value.kind == Scalar::Kind::kFloat    ? static_cast<float>(value.f)
                    : value.kind == Scalar::Kind::kSigned ? static_cast<float>(value.i)
                                                          : static_cast<float>(value.u);
    std::memcpy(p, &f, 4);
  } else {
    const double d = value.kind == Scalar::Kind::kFloat    ? value.f
                     : value.kind == Scalar::Kind::kSigned ? static_cast<double>(value.i)
                                                           : static_cast<double>(value.u);
    const std::uint16_t h = double_to_float16_bits(d);
    std::memcpy(p, &h, 2);
  }
}

}  // namespace

void store(std::byte* p, const Scalar& value, const DataType& t) {
  switch (t.kind()) {
    case DataTypeKind::kBool: {
      const bool truth = value.kind == Scalar::Kind::kFloat ? value.f != 0 || std::isnan(value.f)
                                                            : integer_bits(value) != 0;
      *p = std::byte{truth ? std::uint8_t{1} : std::uint8_t{0}};
      return;
    }
    case DataTypeKind::kInt:
    case DataTypeKind::kUInt: {
      const std::uint64_t bits = value.kind == Scalar::Kind::kFloat
                                     ? float_to_bits(value.f, t.size(), t.kind() == DataTypeKind::kInt)
                                     : integer_bits(value);
      std::memcpy(p, &bits, t.size());  // the low bytes: integers wrap
      return;
    }
    case DataTypeKind::kFloat: store_float(p, value, t.size()); return;
    default: fail_unsupported("NumPy casting to {} elements is not supported", t.name());
  }
}

void cast_elements(const std::byte* src, const DataType& from, std::byte* dst, const DataType& to,
                   std::uint64_t count) {
  const std::size_t in_size = from.size();
  const std::size_t out_size = to.size();
  if (from.kind() == to.kind() && in_size == out_size) {
    std::memcpy(dst, src, static_cast<std::size_t>(count) * in_size);
    return;
  }
  for (std::uint64_t i = 0; i < count; ++i, src += in_size, dst += out_size) store(dst, load(src, from), to);
}

}  // namespace zarrkit::numpy_support
