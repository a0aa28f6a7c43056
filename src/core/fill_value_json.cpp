// Fill values in metadata (SPEC-NOTES rules 10-14 and 27).
//
// v3: integers exact (JSON integers only, range-checked, int64/uint64 never through a
// double); floats as JSON numbers rounded half-to-even to the target type, or "NaN"
// (canonical quiet NaN), "Infinity", "-Infinity", or "0x" + the bit pattern (most
// significant byte first); complex as [re, im]; bool; r<N> as N/8 byte values; datetimes
// as int64 ("NaT" accepted); fixed_length_utf32 as a string; null_terminated_bytes as Base64.
// v2 (zarr-python 2's encoding): null, numbers, the three float strings, [re, im] for
// complex, Base64 for S/V/structured, the string itself for U, int64 for datetimes.
//
// Float32 values come from the double the JSON parser produced and are narrowed by the
// hardware conversion (round half to even); float16/bfloat16 use half_float.h. See there
// for the double-rounding caveat this implies for pathological decimal texts.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/base64.h"
#include "core/half_float.h"
#include "core/minifloat.h"
#include "core/metadata_util.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;
using metadata_detail::describe;

enum class Format { kV2, kV3 };

const char* format_name(Format f) { return f == Format::kV2 ? "v2" : "v3"; }

template <typename T>
T load(ByteView b, std::size_t offset = 0) {
  T v;
  std::memcpy(&v, b.data() + offset, sizeof(T));
  return v;
}

[[noreturn]] void bad_fill(const json& value, const DataType& dtype, Format f, std::string_view why) {
  fail_invalid("fill_value {} is not valid for {} ({}): {}", describe(value), dtype.name(), format_name(f), why);
}

// ---- integers ----------------------------------------------------------------------------

// The JSON integer as a signed or unsigned 64-bit value; v2 also takes integral floats.
struct JsonInteger {
  bool negative;
  std::uint64_t magnitude_or_value;  // value when !negative; the int64 bit pattern otherwise
};

std::optional<JsonInteger> as_integer(const json& v, Format f) {
  if (v.is_number_unsigned()) return JsonInteger{false, v.get<std::uint64_t>()};
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    return JsonInteger{i < 0, static_cast<std::uint64_t>(i)};
  }
  if (f == Format::kV2 && v.is_number_float()) {
    // zarr-python 2 era writers sometimes wrote 0.0 for integer arrays.
    const double d = v.get<double>();
    if (std::trunc(d) != d || std::fabs(d) > 9007199254740992.0) return std::nullopt;
    return d < 0 ? JsonInteger{true, static_cast<std::uint64_t>(static_cast<std::int64_t>(d))}
                 : JsonInteger{false, static_cast<std::uint64_t>(d)};
  }
  return std::nullopt;
}

FillValue parse_integer(const json& v, const DataType& dtype, Format f) {
  auto i = as_integer(v, f);
  if (!i) bad_fill(v, dtype, f, "expected an integer with no fraction or exponent");
  const std::size_t bits = dtype.size() * 8;
  const bool is_signed = dtype.kind() != DataTypeKind::kUInt;
  std::uint64_t raw = i->magnitude_or_value;
  if (is_signed) {
    const auto lo = bits == 64 ? std::numeric_limits<std::int64_t>::min() : -(std::int64_t{1} << (bits - 1));
    const auto hi = bits == 64 ? std::numeric_limits<std::int64_t>::max() : (std::int64_t{1} << (bits - 1)) - 1;
    if (!i->negative && raw > static_cast<std::uint64_t>(hi)) bad_fill(v, dtype, f, "out of range");
    const auto s = static_cast<std::int64_t>(raw);
    if (i->negative && s < lo) bad_fill(v, dtype, f, "out of range");
  } else {
    if (i->negative) bad_fill(v, dtype, f, "out of range (negative)");
    if (bits < 64 && raw > (std::uint64_t{1} << bits) - 1) bad_fill(v, dtype, f, "out of range");
  }
  // Little-endian (native) two's complement, truncated to the element size.
  std::vector<std::byte> bytes(dtype.size());
  for (std::size_t b = 0; b < bytes.size(); ++b) bytes[b] = static_cast<std::byte>((raw >> (8 * b)) & 0xff);
  return FillValue::from_bytes(bytes);
}

json integer_to_json(ByteView b, const DataType& dtype) {
  std::uint64_t raw = 0;
  for (std::size_t i = 0; i < b.size(); ++i) raw |= std::to_integer<std::uint64_t>(b[i]) << (8 * i);
  if (dtype.kind() == DataTypeKind::kUInt) return raw;
  const std::size_t bits = b.size() * 8;
  if (bits < 64 && (raw >> (bits - 1)) & 1) raw |= ~std::uint64_t{0} << bits;  // sign-extend
  return static_cast<std::int64_t>(raw);
}

// ---- floats ------------------------------------------------------------------------------

// One float part of `size` bytes (2: float16/bfloat16 per `bfloat`, 4, 8), as bits.
std::uint64_t canonical_nan_bits(std::size_t size, bool bfloat) {
  switch (size) {
    case 2: return bfloat ? 0x7fc0 : 0x7e00;
    case 4: return 0x7fc00000;
    default: return 0x7ff8000000000000;
  }
}

std::uint64_t double_to_bits(double d, std::size_t size, bool bfloat) {
  switch (size) {
    case 2: return bfloat ? double_to_bfloat16_bits(d) : double_to_float16_bits(d);
    case 4: {
      const auto fl = static_cast<float>(d);  // IEEE round half to even
      std::uint32_t u;
      std::memcpy(&u, &fl, 4);
      return u;
    }
    default: {
      std::uint64_t bits;
      std::memcpy(&bits, &d, 8);
      return bits;
    }
  }
}

double bits_to_double(std::uint64_t bits, std::size_t size, bool bfloat) {
  switch (size) {
    case 2: {
      const auto h = static_cast<std::uint16_t>(bits);
      return bfloat ? bfloat16_bits_to_double(h) : float16_bits_to_double(h);
    }
    case 4: {
      const auto u = static_cast<std::uint32_t>(bits);
      float fl;
      std::memcpy(&fl, &u, 4);
      return fl;
    }
    default: {
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
  }
}

std::optional<std::uint64_t> parse_hex(std::string_view hex, std::size_t size) {
  if (hex.size() != 2 + 2 * size || hex.substr(0, 2) != "0x") return std::nullopt;
  std::uint64_t v = 0;
  for (char c : hex.substr(2)) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return std::nullopt;
    v = (v << 4) | static_cast<std::uint64_t>(d);
  }
  return v;
}

std::uint64_t parse_float_part(const json& v, const json& whole, const DataType& dtype, std::size_t size, bool bfloat,
                               Format f) {
  const std::uint64_t sign_bit = std::uint64_t{1} << (size * 8 - 1);
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d)) bad_fill(whole, dtype, f, "use the strings \"NaN\", \"Infinity\", \"-Infinity\"");
    return double_to_bits(d, size, bfloat);
  }
  if (v.is_number_unsigned() || v.is_number_integer()) {
    // Convert 64-bit integers straight to the target where the hardware can (one rounding).
    if (size == 4) {
      const float fl = v.is_number_unsigned() ? static_cast<float>(v.get<std::uint64_t>())
                                              : static_cast<float>(v.get<std::int64_t>());
      std::uint32_t u;
      std::memcpy(&u, &fl, 4);
      return u;
    }
    const double d = v.is_number_unsigned() ? static_cast<double>(v.get<std::uint64_t>())
                                            : static_cast<double>(v.get<std::int64_t>());
    return double_to_bits(d, size, bfloat);
  }
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "NaN") return canonical_nan_bits(size, bfloat);
    const std::uint64_t inf = double_to_bits(INFINITY, size, bfloat);
    if (s == "Infinity") return inf;
    if (s == "-Infinity") return inf | sign_bit;
    if (f == Format::kV3 && s.size() >= 2 && s.substr(0, 2) == "0x") {
      if (auto bits = parse_hex(s, size)) return *bits;
      bad_fill(whole, dtype, f, fmt::format("a hex bit pattern needs exactly {} hex digits after 0x", 2 * size));
    }
  }
  bad_fill(whole, dtype, f, f == Format::kV3 ? "expected a number, \"NaN\", \"Infinity\", \"-Infinity\" or \"0x<hex>\""
                                               : "expected a number, \"NaN\", \"Infinity\" or \"-Infinity\"");
}

json float_part_to_json(std::uint64_t bits, std::size_t size, bool bfloat, Format f) {
  const double d = bits_to_double(bits, size, bfloat);
  if (std::isnan(d)) {
    // Only the canonical NaN has a name; any other payload keeps its bits in v3.
    if (bits == canonical_nan_bits(size, bfloat) || f == Format::kV2) return "NaN";
    return fmt::format("0x{:0{}x}", bits, 2 * size);
  }
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return d;
}

std::uint64_t load_bits(ByteView b, std::size_t offset, std::size_t size) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < size; ++i) v |= std::to_integer<std::uint64_t>(b[offset + i]) << (8 * i);
  return v;
}

void store_bits(std::vector<std::byte>& out, std::size_t offset, std::size_t size, std::uint64_t v) {
  for (std::size_t i = 0; i < size; ++i) out[offset + i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

FillValue parse_floating(const json& v, const DataType& dtype, Format f) {
  const bool bfloat = dtype.kind() == DataTypeKind::kBFloat16;
  std::vector<std::byte> bytes(dtype.size());
  if (dtype.kind() == DataTypeKind::kComplex) {
    if (!v.is_array() || v.size() != 2) bad_fill(v, dtype, f, "expected [real, imaginary]");
    const std::size_t part = dtype.size() / 2;
    store_bits(bytes, 0, part, parse_float_part(v[0], v, dtype, part, false, f));
    store_bits(bytes, part, part, parse_float_part(v[1], v, dtype, part, false, f));
  } else {
    store_bits(bytes, 0, dtype.size(), parse_float_part(v, v, dtype, dtype.size(), bfloat, f));
  }
  return FillValue::from_bytes(bytes);
}

json floating_to_json(ByteView b, const DataType& dtype, Format f) {
  const bool bfloat = dtype.kind() == DataTypeKind::kBFloat16;
  if (dtype.kind() == DataTypeKind::kComplex) {
    const std::size_t part = dtype.size() / 2;
    return json::array({float_part_to_json(load_bits(b, 0, part), part, false, f),
                        float_part_to_json(load_bits(b, part, part), part, false, f)});
  }
  return float_part_to_json(load_bits(b, 0, dtype.size()), dtype.size(), bfloat, f);
}

// ---- minifloats and sub-byte integers (zarr-extensions) ----------------------------------

// As the core float types: a number rounded half to even, "NaN", "Infinity", "-Infinity"
// or "0x" + the two hex digits of the pattern; the names only where the format has them.
FillValue parse_base64(const json& v, const DataType& dtype, Format f, bool exact);

// tensorstore's v2 metadata gives float4_e2m1fn fill values as Base64 of the byte.
bool base64_in_v2(const DataType& dtype, Format f) {
  return f == Format::kV2 && dtype.minifloat_format() == MiniFloat::kE2M1FN;
}

FillValue parse_minifloat(const json& v, const DataType& dtype, Format f) {
  const MiniFloatFormat& format = minifloat_format(dtype.minifloat_format());
  if (base64_in_v2(dtype, f) && v.is_string() && v.get_ref<const std::string&>().substr(0, 2) != "0x" &&
      v != "NaN" && v != "Infinity" && v != "-Infinity") {
    const FillValue raw = parse_base64(v, dtype, f, /*exact=*/true);
    if (std::to_integer<unsigned>(raw.bytes()[0]) >> format.bits != 0) {
      bad_fill(v, dtype, f, fmt::format("a {}-bit pattern is at most 0x{:02x}", format.bits, (1u << format.bits) - 1));
    }
    return raw;
  }
  auto pattern = [&](std::uint32_t bits) { return FillValue::of(static_cast<std::uint8_t>(bits)); };
  if (v.is_number()) {
    const double d = v.is_number_float() ? v.get<double>()
                     : v.is_number_unsigned() ? static_cast<double>(v.get<std::uint64_t>())
                                              : static_cast<double>(v.get<std::int64_t>());
    if (!std::isfinite(d)) bad_fill(v, dtype, f, "use the strings \"NaN\", \"Infinity\", \"-Infinity\"");
    auto rounded = double_to_minifloat(format.format, d);
    if (const auto* why = std::get_if<std::string>(&rounded)) bad_fill(v, dtype, f, *why);
    return pattern(std::get<std::uint8_t>(rounded));
  }
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "NaN" || s == "Infinity" || s == "-Infinity") {
      const double named = s == "NaN" ? NAN : s == "Infinity" ? INFINITY : -INFINITY;
      auto special = double_to_minifloat(format.format, named);
      if (const auto* why = std::get_if<std::string>(&special)) bad_fill(v, dtype, f, *why);
      return pattern(std::get<std::uint8_t>(special));
    }
    if (s.size() >= 2 && s.substr(0, 2) == "0x") {
      const auto bits = parse_hex(s, 1);
      if (!bits) bad_fill(v, dtype, f, "a hex bit pattern needs exactly 2 hex digits after 0x");
      if (*bits >> format.bits != 0) bad_fill(v, dtype, f, fmt::format("a {}-bit pattern is at most 0x{:02x}", format.bits, (1u << format.bits) - 1));
      return pattern(static_cast<std::uint32_t>(*bits));
    }
  }
  bad_fill(v, dtype, f, "expected a number, \"NaN\", \"Infinity\", \"-Infinity\" or \"0x<hex>\"");
}

json minifloat_to_json(std::uint8_t bits, const DataType& dtype) {
  const MiniFloat format = dtype.minifloat_format();
  const double d = minifloat_to_double(format, bits);
  if (std::isnan(d)) {
    if (bits == minifloat_format(format).canonical_nan) return "NaN";
    return fmt::format("0x{:02x}", bits);
  }
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return d;
}

// int2/int4/uint2/uint4: an integer in range, held in the low bits of the byte.
FillValue parse_sub_byte_integer(const json& v, const DataType& dtype, Format f) {
  const auto i = as_integer(v, f);
  if (!i) bad_fill(v, dtype, f, "expected an integer with no fraction or exponent");
  const int bits = dtype.value_bits();
  const bool is_signed = dtype.kind() == DataTypeKind::kSubByteInt;
  const std::int64_t lo = is_signed ? -(std::int64_t{1} << (bits - 1)) : 0;
  const std::int64_t hi = is_signed ? (std::int64_t{1} << (bits - 1)) - 1 : (std::int64_t{1} << bits) - 1;
  const std::uint64_t raw = i->magnitude_or_value;
  const bool in_range = i->negative ? static_cast<std::int64_t>(raw) >= lo : raw <= static_cast<std::uint64_t>(hi);
  if (!in_range) bad_fill(v, dtype, f, fmt::format("out of range {}..{}", lo, hi));
  return FillValue::of(static_cast<std::uint8_t>(raw & ((1u << bits) - 1)));
}

json sub_byte_integer_to_json(std::uint8_t byte, const DataType& dtype) {
  const int bits = dtype.value_bits();
  const std::uint32_t value = byte & ((1u << bits) - 1);
  if (dtype.kind() == DataTypeKind::kSubByteUInt) return value;
  const bool negative = (value >> (bits - 1)) != 0;
  return static_cast<std::int64_t>(value) - (negative ? std::int64_t{1} << bits : 0);
}

// ---- text and bytes ----------------------------------------------------------------------

// UTF-8 -> code points; nullopt on invalid UTF-8.
std::optional<std::vector<char32_t>> decode_utf8(std::string_view s) {
  std::vector<char32_t> out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len;
    char32_t cp;
    if (c < 0x80) { len = 1; cp = c; }
    else if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1f; }
    else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0f; }
    else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07; }
    else return std::nullopt;
    if (i + len > s.size()) return std::nullopt;
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (cc & 0x3f);
    }
    static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return std::nullopt;
    out.push_back(cp);
    i += len;
  }
  return out;
}

std::optional<std::string> encode_utf8(const std::vector<char32_t>& cps) {
  std::string s;
  for (char32_t cp : cps) {
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return std::nullopt;
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xc0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xe0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      s += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      s += static_cast<char>(0xf0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      s += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  return s;
}

FillValue parse_unicode(const json& v, const DataType& dtype, Format f) {
  if (!v.is_string()) bad_fill(v, dtype, f, "expected a string");
  auto cps = decode_utf8(v.get_ref<const std::string&>());
  if (!cps) bad_fill(v, dtype, f, "not valid UTF-8");
  const std::size_t chars = dtype.size() / 4;
  if (cps->size() > chars) bad_fill(v, dtype, f, fmt::format("longer than {} characters", chars));
  std::vector<std::byte> bytes(dtype.size());  // NUL padded, UCS-4 in native order
  for (std::size_t i = 0; i < cps->size(); ++i) store_bits(bytes, 4 * i, 4, (*cps)[i]);
  return FillValue::from_bytes(bytes);
}

json unicode_to_json(ByteView b, const DataType& dtype) {
  std::vector<char32_t> cps;
  for (std::size_t i = 0; i + 4 <= b.size(); i += 4) cps.push_back(static_cast<char32_t>(load_bits(b, i, 4)));
  while (!cps.empty() && cps.back() == 0) cps.pop_back();  // NumPy strips trailing NULs
  auto s = encode_utf8(cps);
  if (!s) fail_invalid("fill value of {} holds a code point that is not Unicode", dtype.name());
  return *s;
}

// Base64 bytes; `exact`: the decoded length must equal the element size, otherwise it may
// be shorter and is NUL padded (fixed-length bytes).
FillValue parse_base64(const json& v, const DataType& dtype, Format f, bool exact) {
  if (!v.is_string()) bad_fill(v, dtype, f, "expected a Base64 string");
  auto decoded = base64_decode(v.get_ref<const std::string&>());
  if (!decoded) bad_fill(v, dtype, f, "not valid Base64");
  if (exact ? decoded->size() != dtype.size() : decoded->size() > dtype.size()) {
    bad_fill(v, dtype, f, fmt::format("decodes to {} bytes, expected {}{}", decoded->size(), exact ? "" : "at most ",
                                      dtype.size()));
  }
  decoded->resize(dtype.size());
  return FillValue::from_bytes(*decoded);
}

FillValue parse_raw_bits_v3(const json& v, const DataType& dtype) {
  // The spec text says N entries, but writers (zarrs) emit N/8 byte values: follow the bytes.
  if (!v.is_array() || v.size() != dtype.size()) {
    bad_fill(v, dtype, Format::kV3, fmt::format("expected a list of {} byte values", dtype.size()));
  }
  std::vector<std::byte> bytes;
  for (const auto& item : v) {
    const auto byte = metadata_detail::as_uint(item);
    if (!byte || *byte > 255) bad_fill(v, dtype, Format::kV3, "each byte must be an integer 0..255");
    bytes.push_back(static_cast<std::byte>(*byte));
  }
  return FillValue::from_bytes(bytes);
}

FillValue parse_datetime(const json& v, const DataType& dtype, Format f) {
  if (v.is_string() && v == "NaT") return FillValue::of(std::numeric_limits<std::int64_t>::min());
  return parse_integer(v, dtype, f);  // int64 underneath
}

// Variable-length types: the fill value's bytes are the element itself. string: the text.
// bytes: Base64 (as zarr-python writes it) or, in v3, a list of byte values. v2 writers
// also used null and 0 for the empty element of object arrays.
FillValue parse_variable_length(const json& v, const DataType& dtype, Format f) {
  if (f == Format::kV2 && v.is_null()) return FillValue::null(dtype);
  if (f == Format::kV2 && v.is_number_integer() && v.get<std::int64_t>() == 0) return FillValue::zero(dtype);
  if (dtype.kind() == DataTypeKind::kString) {
    if (!v.is_string()) bad_fill(v, dtype, f, "expected a string");
    return FillValue::from_bytes(as_bytes(v.get_ref<const std::string&>()));
  }
  if (f == Format::kV3 && v.is_array()) {
    std::vector<std::byte> bytes;
    for (const auto& item : v) {
      const auto byte = metadata_detail::as_uint(item);
      if (!byte || *byte > 255) bad_fill(v, dtype, f, "each byte must be an integer 0..255");
      bytes.push_back(static_cast<std::byte>(*byte));
    }
    return FillValue::from_bytes(bytes);
  }
  if (!v.is_string()) bad_fill(v, dtype, f, "expected a Base64 string");
  auto decoded = base64_decode(v.get_ref<const std::string&>());
  if (!decoded) bad_fill(v, dtype, f, "not valid Base64");
  return FillValue::from_bytes(*decoded);
}

FillValue parse_fill(const json& v, const DataType& dtype, Format f);
json fill_to_json(const FillValue& fill, const DataType& dtype, Format f);

// v3 struct: an object with every field's fill value (zarr-extensions struct); the legacy
// "structured" arrays may have Base64 of the packed record instead, read as zarr-python 3.4
// reads it: little-endian (this machine's order).
FillValue parse_struct_v3(const json& v, const DataType& dtype) {
  if (v.is_string()) return parse_base64(v, dtype, Format::kV3, /*exact=*/true);
  if (!v.is_object()) bad_fill(v, dtype, Format::kV3, "expected an object with a fill value for each field");
  std::vector<std::byte> bytes(dtype.size());
  for (const auto& field : dtype.fields()) {
    const auto it = v.find(field.name);
    if (it == v.end()) bad_fill(v, dtype, Format::kV3, fmt::format("no fill value for field \"{}\"", field.name));
    FillValue part;
    try {
      part = parse_fill(*it, field.type, Format::kV3);
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("field \"{}\" of {}", field.name, dtype.name()));
    }
    std::copy(part.bytes().begin(), part.bytes().end(), bytes.begin() + static_cast<std::ptrdiff_t>(field.offset));
  }
  for (const auto& [key, value] : v.items()) {
    bool known = false;
    for (const auto& field : dtype.fields()) known = known || field.name == key;
    if (!known) bad_fill(v, dtype, Format::kV3, fmt::format("\"{}\" is not a field", key));
  }
  return FillValue::from_bytes(bytes);
}

json struct_to_json(ByteView b, const DataType& dtype) {
  json out = json::object();
  for (const auto& field : dtype.fields()) {
    out[field.name] = fill_to_json(FillValue::from_bytes(b.subspan(field.offset, field.type.size())), field.type,
                                   Format::kV3);
  }
  return out;
}

FillValue parse_fill(const json& v, const DataType& dtype, Format f) {
  if (dtype.is_variable_length()) return parse_variable_length(v, dtype, f);
  if (f == Format::kV2 && v.is_null()) return FillValue::null(dtype);
  if (v.is_null()) bad_fill(v, dtype, f, "null is not allowed in v3");
  // v2 writers use 0 as "zeros" for text and byte types as well.
  const bool zero_for_bytes = f == Format::kV2 && v.is_number_integer() && v.get<std::int64_t>() == 0;
  switch (dtype.kind()) {
    case DataTypeKind::kBool:
      if (v.is_boolean()) return FillValue::of(static_cast<std::uint8_t>(v.get<bool>()));
      if (const auto i = metadata_detail::as_uint(v); f == Format::kV2 && i && *i <= 1) {
        return FillValue::of(static_cast<std::uint8_t>(*i));
      }
      bad_fill(v, dtype, f, "expected true or false");
    case DataTypeKind::kInt:
    case DataTypeKind::kUInt: return parse_integer(v, dtype, f);
    case DataTypeKind::kFloat:
    case DataTypeKind::kBFloat16:
    case DataTypeKind::kComplex: return parse_floating(v, dtype, f);
    case DataTypeKind::kDatetime:
    case DataTypeKind::kTimedelta: return parse_datetime(v, dtype, f);
    case DataTypeKind::kFixedUnicode:
      if (zero_for_bytes) return FillValue::zero(dtype);
      return parse_unicode(v, dtype, f);
    case DataTypeKind::kFixedBytes:
      if (zero_for_bytes) return FillValue::zero(dtype);
      return parse_base64(v, dtype, f, /*exact=*/false);
    case DataTypeKind::kRawBits:
      if (f == Format::kV3) return parse_raw_bits_v3(v, dtype);
      if (zero_for_bytes) return FillValue::zero(dtype);
      return parse_base64(v, dtype, f, /*exact=*/true);
    case DataTypeKind::kStructured:
      if (f == Format::kV3) return parse_struct_v3(v, dtype);
      if (zero_for_bytes) return FillValue::zero(dtype);
      return parse_base64(v, dtype, f, /*exact=*/true);
    case DataTypeKind::kMiniFloat: return parse_minifloat(v, dtype, f);
    case DataTypeKind::kSubByteInt:
    case DataTypeKind::kSubByteUInt: return parse_sub_byte_integer(v, dtype, f);
    case DataTypeKind::kString:
    case DataTypeKind::kVarBytes: break;
  }
  fail_unsupported("fill values of {} are not supported in {} metadata", dtype.name(), format_name(f));
}

json fill_to_json(const FillValue& fill, const DataType& dtype, Format f) {
  if (fill.is_null() && f == Format::kV2) return nullptr;
  // v3 has no null: a v2 null fill (contents undefined) is written as the value it reads as.
  const ByteView b = fill.bytes();
  if (dtype.kind() == DataTypeKind::kString) return std::string(as_chars(b));
  if (dtype.kind() == DataTypeKind::kVarBytes) return base64_encode(b);
  if (b.size() != dtype.size() || dtype.size() == 0) {
    fail_invalid("fill value has {} bytes but an element of {} has {}", b.size(), dtype.name(), dtype.size());
  }
  switch (dtype.kind()) {
    case DataTypeKind::kBool: return b[0] != std::byte{0};
    case DataTypeKind::kInt:
    case DataTypeKind::kUInt: return integer_to_json(b, dtype);
    case DataTypeKind::kFloat:
    case DataTypeKind::kBFloat16:
    case DataTypeKind::kComplex: return floating_to_json(b, dtype, f);
    case DataTypeKind::kDatetime:
    case DataTypeKind::kTimedelta: return load<std::int64_t>(b);
    case DataTypeKind::kFixedUnicode: return unicode_to_json(b, dtype);
    case DataTypeKind::kFixedBytes: {
      // NumPy reads S<n> values without their trailing NULs, and zarr-python encodes that.
      std::size_t n = b.size();
      while (n > 0 && b[n - 1] == std::byte{0}) --n;
      return base64_encode(b.first(n));
    }
    case DataTypeKind::kRawBits:
      if (f == Format::kV2) return base64_encode(b);
      {
        json list = json::array();
        for (auto byte : b) list.push_back(std::to_integer<unsigned>(byte));
        return list;
      }
    case DataTypeKind::kStructured:
      if (f == Format::kV2) return base64_encode(b);
      return struct_to_json(b, dtype);
    case DataTypeKind::kMiniFloat:
      if (base64_in_v2(dtype, f)) return base64_encode(b);
      return minifloat_to_json(std::to_integer<std::uint8_t>(b[0]), dtype);
    case DataTypeKind::kSubByteInt:
    case DataTypeKind::kSubByteUInt: return sub_byte_integer_to_json(std::to_integer<std::uint8_t>(b[0]), dtype);
    case DataTypeKind::kString:
    case DataTypeKind::kVarBytes: break;
  }
  fail_unsupported("fill values of {} are not supported in {} metadata", dtype.name(), format_name(f));
}

}  // namespace

FillValue parse_fill_value_v3(const json& value, const DataType& dtype) { return parse_fill(value, dtype, Format::kV3); }
json fill_value_to_v3_json(const FillValue& fill, const DataType& dtype) { return fill_to_json(fill, dtype, Format::kV3); }
FillValue parse_fill_value_v2(const json& value, const DataType& dtype) { return parse_fill(value, dtype, Format::kV2); }
json fill_value_to_v2_json(const FillValue& fill, const DataType& dtype) { return fill_to_json(fill, dtype, Format::kV2); }

}  // namespace zarrkit
