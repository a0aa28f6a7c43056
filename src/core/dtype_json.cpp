// Data types in metadata: v3 names (core types, r<N>, bfloat16, the zarr-extensions ML
// types float8/float6/float4 and int2/int4/uint2/uint4, the zarr-python extensions
// numpy.datetime64 / numpy.timedelta64 / fixed_length_utf32 / null_terminated_bytes, and
// struct with its legacy spelling structured) and v2 NumPy type strings (with byte order),
// structured lists, and the ml_dtypes types by name (as tensorstore writes them in v2).
#include <charconv>
#include <climits>
#include <set>
#include <string>

#include "core/checked_math.h"
#include "core/minifloat.h"
#include "core/metadata_util.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

using metadata_detail::describe;
using metadata_detail::Extension;
using metadata_detail::find_member;
using json = nlohmann::json;

// The largest element NumPy allows (its itemsize is a C int).
constexpr std::uint64_t kMaxItemSize = INT_MAX;
// Structured dtypes may nest; the depth is bounded so parsing never recurses deeply.
constexpr int kMaxStructDepth = 8;

// A canonical decimal (digits only, no sign, no leading zero unless "0"), or nullopt.
std::optional<std::uint64_t> parse_decimal(std::string_view text) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

bool is_datetime_unit(std::string_view unit) {
  static const std::set<std::string_view> kUnits = {"Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as", "generic"};
  return kUnits.count(unit) != 0;
}

void require_empty_configuration(const Extension& e) {
  if (!e.configuration.empty()) {
    fail_invalid("data_type \"{}\" takes no configuration, got {}", e.name, describe(e.configuration));
  }
}

std::uint64_t config_uint(const Extension& e, std::string_view key) {
  const json* v = find_member(e.configuration, key);
  if (v == nullptr) fail_invalid("data_type \"{}\": configuration needs \"{}\"", e.name, key);
  return metadata_detail::get_uint(*v, fmt::format("data_type \"{}\" {}", e.name, key));
}

DataType parse_datetime_v3(const Extension& e, bool is_datetime) {
  metadata_detail::check_configuration_keys(e.configuration, {"unit", "scale_factor"}, "data_type " + e.name);
  const json* unit = find_member(e.configuration, "unit");
  if (unit == nullptr || !unit->is_string() || !is_datetime_unit(unit->get<std::string>())) {
    fail_invalid("data_type \"{}\": unit must be one of Y M W D h m s ms us ns ps fs as generic, got {}", e.name,
                 unit ? describe(*unit) : "nothing");
  }
  const std::uint64_t scale = config_uint(e, "scale_factor");
  if (scale < 1 || scale > INT32_MAX) fail_invalid("data_type \"{}\": scale_factor must be 1..2^31-1, got {}", e.name, scale);
  const auto count = static_cast<std::int64_t>(scale);
  return is_datetime ? DataType::datetime(unit->get<std::string>(), count)
                     : DataType::timedelta(unit->get<std::string>(), count);
}

DataType parse_dtype_v3_at_depth(const json& data_type, int depth);

// zarr-extensions "struct": {"fields": [{"name", "data_type"}, ...]}, packed in field order.
// The legacy "structured" (zarr-python before "struct") also wrote fields as
// [name, data_type] pairs; both spellings take both forms, as zarr-python 3.4 reads them.
DataType parse_struct_v3(const Extension& e, int depth) {
  if (depth > kMaxStructDepth) fail_invalid("data_type \"{}\" nested more than {} levels", e.name, kMaxStructDepth);
  metadata_detail::check_configuration_keys(e.configuration, {"fields"}, "data_type " + e.name);
  const json* list = find_member(e.configuration, "fields");
  if (list == nullptr || !list->is_array() || list->empty()) {
    fail_invalid("data_type \"{}\": configuration needs \"fields\", a list of at least one field, got {}", e.name,
                 list ? describe(*list) : "nothing");
  }
  std::vector<StructField> fields;
  std::set<std::string> names;
  std::uint64_t offset = 0;
  for (const auto& entry : *list) {
    const json* name = nullptr;
    const json* type = nullptr;
    if (entry.is_object()) {
      metadata_detail::check_configuration_keys(entry, {"name", "data_type"}, "data_type " + e.name + " field");
      name = find_member(entry, "name");
      type = find_member(entry, "data_type");
    } else if (entry.is_array() && entry.size() == 2) {
      name = &entry[0];
      type = &entry[1];
    }
    if (name == nullptr || type == nullptr || !name->is_string()) {
      fail_invalid("data_type \"{}\": a field must be {{\"name\": ..., \"data_type\": ...}}, got {}", e.name,
                   describe(entry));
    }
    StructField field;
    field.name = name->get<std::string>();
    if (field.name.empty()) fail_invalid("data_type \"{}\": a field has an empty name", e.name);
    if (!names.insert(field.name).second) fail_invalid("data_type \"{}\": field \"{}\" appears twice", e.name, field.name);
    try {
      field.type = parse_dtype_v3_at_depth(*type, depth + 1);
    } catch (const Error& error) {
      rethrow_with_context(error, fmt::format("data_type \"{}\" field \"{}\"", e.name, field.name));
    }
    if (field.type.is_variable_length()) {
      fail_invalid("data_type \"{}\": field \"{}\" is {}, which has no fixed size", e.name, field.name,
                   field.type.name());
    }
    // Their stored high bits would need clearing inside each record, which the bytes codec
    // does only for whole elements.
    if (field.type.is_sub_byte()) {
      fail_unsupported("data_type \"{}\": field \"{}\" is {}; sub-byte fields are not supported", e.name,
                       field.name, field.type.name());
    }
    field.offset = to_size(offset);
    offset = checked_add(offset, field.type.size(), "struct size");
    if (offset > kMaxItemSize) fail_invalid("data_type \"{}\" is larger than {} bytes", e.name, kMaxItemSize);
    fields.push_back(std::move(field));
  }
  return DataType::structured(std::move(fields));
}

}  // namespace

DataType parse_dtype_v3(const json& data_type) { return parse_dtype_v3_at_depth(data_type, 0); }

namespace {

DataType parse_dtype_v3_at_depth(const json& data_type, int depth) {
  const Extension e = metadata_detail::parse_extension(data_type, "data_type");
  metadata_detail::require_must_understand(e, "data_type");
  const std::string& n = e.name;
  struct Fixed { std::string_view name; DataType (*make)(); };
  static const Fixed kFixed[] = {
      {"bool", [] { return DataType::boolean(); }},      {"int8", [] { return DataType::int_(8); }},
      {"int16", [] { return DataType::int_(16); }},      {"int32", [] { return DataType::int_(32); }},
      {"int64", [] { return DataType::int_(64); }},      {"uint8", [] { return DataType::uint_(8); }},
      {"uint16", [] { return DataType::uint_(16); }},    {"uint32", [] { return DataType::uint_(32); }},
      {"uint64", [] { return DataType::uint_(64); }},    {"float16", [] { return DataType::float_(16); }},
      {"float32", [] { return DataType::float_(32); }},  {"float64", [] { return DataType::float_(64); }},
      {"complex64", [] { return DataType::complex_(64); }}, {"complex128", [] { return DataType::complex_(128); }},
      {"bfloat16", [] { return DataType::bfloat16(); }},
  };
  for (const auto& f : kFixed) {
    if (n == f.name) {
      require_empty_configuration(e);
      return f.make();
    }
  }
  if (const auto format = minifloat_from_name(n)) {
    require_empty_configuration(e);
    return DataType::minifloat(*format);
  }
  if (n == "int2" || n == "int4" || n == "uint2" || n == "uint4") {
    require_empty_configuration(e);
    const int bits = n.back() - '0';
    return n[0] == 'u' ? DataType::sub_byte_uint(bits) : DataType::sub_byte_int(bits);
  }
  if (n.size() > 1 && n[0] == 'r' && n[1] >= '0' && n[1] <= '9') {
    auto bits = parse_decimal(std::string_view(n).substr(1));
    if (!bits || *bits == 0 || *bits % 8 != 0 || *bits > INT_MAX) {
      fail_invalid("data_type \"{}\": raw bits need a positive multiple of 8 (at most {})", n, INT_MAX);
    }
    require_empty_configuration(e);
    return DataType::raw_bits(static_cast<int>(*bits));
  }
  if (n == "numpy.datetime64") return parse_datetime_v3(e, true);
  if (n == "numpy.timedelta64") return parse_datetime_v3(e, false);
  if (n == "fixed_length_utf32" || n == "null_terminated_bytes") {
    metadata_detail::check_configuration_keys(e.configuration, {"length_bytes"}, "data_type " + n);
    const std::uint64_t length = config_uint(e, "length_bytes");
    const bool utf32 = n == "fixed_length_utf32";
    if (length == 0 || length > kMaxItemSize || (utf32 && length % 4 != 0)) {
      fail_invalid("data_type \"{}\": length_bytes must be positive{} and at most {}, got {}", n,
                   utf32 ? ", a multiple of 4," : "", kMaxItemSize, length);
    }
    return utf32 ? DataType::fixed_unicode(length / 4) : DataType::fixed_bytes(length);
  }
  // Variable-length types (zarr-extensions): zarr-python writes "string" and
  // "variable_length_bytes"; "bytes" is the extension's own name for the latter.
  if (n == "string") {
    require_empty_configuration(e);
    return DataType::string();
  }
  if (n == "variable_length_bytes" || n == "bytes") {
    require_empty_configuration(e);
    return DataType::var_bytes();
  }
  if (n == "struct" || n == "structured") return parse_struct_v3(e, depth);
  fail_unsupported("unsupported data_type \"{}\"", n);
}

}  // namespace

json dtype_to_v3_json(const DataType& dtype) {
  switch (dtype.kind()) {
    case DataTypeKind::kBool:
    case DataTypeKind::kInt:
    case DataTypeKind::kUInt:
    case DataTypeKind::kFloat:
    case DataTypeKind::kBFloat16:
    case DataTypeKind::kComplex:
    case DataTypeKind::kRawBits:
    case DataTypeKind::kMiniFloat:
    case DataTypeKind::kSubByteInt:
    case DataTypeKind::kSubByteUInt: return dtype.name();
    case DataTypeKind::kDatetime:
    case DataTypeKind::kTimedelta:
      return {{"name", dtype.kind() == DataTypeKind::kDatetime ? "numpy.datetime64" : "numpy.timedelta64"},
              {"configuration",
               {{"unit", dtype.datetime_unit().empty() ? "generic" : dtype.datetime_unit()},
                {"scale_factor", dtype.datetime_count()}}}};
    case DataTypeKind::kFixedUnicode:
      return {{"name", "fixed_length_utf32"}, {"configuration", {{"length_bytes", dtype.size()}}}};
    case DataTypeKind::kFixedBytes:
      return {{"name", "null_terminated_bytes"}, {"configuration", {{"length_bytes", dtype.size()}}}};
    case DataTypeKind::kString: return "string";
    case DataTypeKind::kVarBytes: return "variable_length_bytes";  // as zarr-python writes it
    case DataTypeKind::kStructured: {
      // Always the "struct" spelling (zarr-extensions: "structured" is read-only). v3 packs
      // the fields in order, with no sub-arrays.
      json fields = json::array();
      std::size_t offset = 0;
      for (const auto& f : dtype.fields()) {
        if (!f.shape.empty()) fail_unsupported("field \"{}\" of {} is a sub-array, which v3 struct has not", f.name, dtype.name());
        if (f.offset != offset) fail_unsupported("the fields of {} are not packed in order, as v3 struct needs", dtype.name());
        offset += f.type.size();
        fields.push_back({{"name", f.name}, {"data_type", dtype_to_v3_json(f.type)}});
      }
      return {{"name", "struct"}, {"configuration", {{"fields", std::move(fields)}}}};
    }
  }
  fail_unsupported("data type {} has no Zarr v3 form in zarrkit", dtype.name());
}

// ---- v2 ----------------------------------------------------------------------------------

namespace {

// The ml_dtypes types by name, as tensorstore writes them in v2 metadata (NumPy has no type
// string for them): bfloat16, the float8/6/4 formats, int2/int4/uint2/uint4.
std::optional<DataType> ml_type_by_name(std::string_view s) {
  if (s == "bfloat16") return DataType::bfloat16();
  if (const auto format = minifloat_from_name(s)) return DataType::minifloat(*format);
  if (s == "int2" || s == "int4") return DataType::sub_byte_int(s.back() - '0');
  if (s == "uint2" || s == "uint4") return DataType::sub_byte_uint(s.back() - '0');
  return std::nullopt;
}

DataType parse_typestr(std::string_view s) {
  if (auto ml = ml_type_by_name(s)) return *ml;
  const std::string text(s);
  if (s.size() < 2) fail_invalid("dtype \"{}\": not a NumPy type string", text);
  const char order = s[0];
  if (order != '<' && order != '>' && order != '|') {
    fail_invalid("dtype \"{}\": needs a byte order '<', '>' or '|' first", text);
  }
  const char code = s[1];
  const std::string_view rest = s.substr(2);
  DataType t;
  if (code == 'M' || code == 'm') {
    // "M8", "M8[ns]", "m8[10s]"
    if (rest.substr(0, 1) != "8") fail_invalid("dtype \"{}\": datetimes are 8 bytes", text);
    std::string unit = "generic";
    std::int64_t count = 1;
    std::string_view bracket = rest.substr(1);
    if (!bracket.empty()) {
      if (bracket.size() < 3 || bracket.front() != '[' || bracket.back() != ']') {
        fail_invalid("dtype \"{}\": expected a unit in brackets like [ns]", text);
      }
      std::string_view inner = bracket.substr(1, bracket.size() - 2);
      std::size_t digits = 0;
      while (digits < inner.size() && inner[digits] >= '0' && inner[digits] <= '9') ++digits;
      if (digits > 0) {
        auto c = parse_decimal(inner.substr(0, digits));
        if (!c || *c == 0 || *c > INT32_MAX) fail_invalid("dtype \"{}\": bad unit multiplier", text);
        count = static_cast<std::int64_t>(*c);
      }
      unit = std::string(inner.substr(digits));
      // "[generic]" and "[3generic]" too: zarr-python writes a generic unit with a multiplier so.
      if (!is_datetime_unit(unit)) fail_invalid("dtype \"{}\": unknown time unit \"{}\"", text, unit);
    }
    t = code == 'M' ? DataType::datetime(unit, count) : DataType::timedelta(unit, count);
  } else if (code == 'O') {
    if (!rest.empty() && rest != "8") fail_invalid("dtype \"{}\": not a NumPy type string", text);
    fail_unsupported("dtype \"{}\": object (variable-length) arrays are not supported yet", text);
  } else {
    auto size = parse_decimal(rest);
    if (!size || *size == 0 || *size > kMaxItemSize) {
      fail_invalid("dtype \"{}\": needs a positive item size (at most {})", text, kMaxItemSize);
    }
    const int bits = *size <= 16 ? static_cast<int>(*size * 8) : 0;
    switch (code) {
      case 'b':
        if (*size != 1) fail_invalid("dtype \"{}\": bool is 1 byte", text);
        t = DataType::boolean();
        break;
      case 'i':
      case 'u':
        if (bits != 8 && bits != 16 && bits != 32 && bits != 64) fail_invalid("dtype \"{}\": integers are 1, 2, 4 or 8 bytes", text);
        t = code == 'i' ? DataType::int_(bits) : DataType::uint_(bits);
        break;
      case 'f':
        if (bits != 16 && bits != 32 && bits != 64) fail_invalid("dtype \"{}\": floats are 2, 4 or 8 bytes", text);
        t = DataType::float_(bits);
        break;
      case 'c':
        if (bits != 64 && bits != 128) fail_invalid("dtype \"{}\": complex numbers are 8 or 16 bytes", text);
        t = DataType::complex_(bits);
        break;
      case 'S': t = DataType::fixed_bytes(*size); break;
      case 'V':
        if (*size > INT_MAX / 8) fail_invalid("dtype \"{}\": too long", text);
        t = DataType::raw_bits(static_cast<int>(*size * 8));
        break;
      case 'U':
        if (*size > kMaxItemSize / 4) fail_invalid("dtype \"{}\": too long", text);
        t = DataType::fixed_unicode(*size);
        break;
      default: fail_invalid("dtype \"{}\": unknown type code '{}'", text, code);
    }
  }
  if (t.swap_unit() == 1) return t;  // byte order does not apply; NumPy writes '|'
  if (order == '|') fail_invalid("dtype \"{}\": a multi-byte type needs '<' or '>'", text);
  return t.with_storage_endian(order == '<' ? Endian::kLittle : Endian::kBig);
}

DataType parse_dtype_v2_at_depth(const json& dtype, int depth);

DataType parse_structured(const json& list, int depth) {
  if (depth > kMaxStructDepth) fail_invalid("structured dtype nested more than {} levels", kMaxStructDepth);
  if (list.empty()) fail_invalid("structured dtype has no fields");
  std::vector<StructField> fields;
  std::set<std::string> names;
  std::optional<Endian> common_order;
  bool mixed = false;
  std::uint64_t offset = 0;
  for (const auto& entry : list) {
    if (!entry.is_array() || entry.size() < 2 || entry.size() > 3 || !entry[0].is_string()) {
      fail_invalid("structured dtype field must be [name, dtype] or [name, dtype, shape], got {}", describe(entry));
    }
    StructField field;
    field.name = entry[0].get<std::string>();
    if (field.name.empty()) fail_invalid("structured dtype field has an empty name");
    if (!names.insert(field.name).second) fail_invalid("structured dtype field \"{}\" appears twice", field.name);
    field.type = parse_dtype_v2_at_depth(entry[1], depth + 1);
    if (field.type.is_sub_byte()) {
      fail_unsupported("structured dtype field \"{}\" is {}; sub-byte fields are not supported", field.name,
                       field.type.name());
    }
    std::uint64_t count = 1;
    if (entry.size() == 3) {
      field.shape = metadata_detail::get_shape(entry[2], "structured dtype field shape", 32, /*positive=*/true);
      for (auto d : field.shape) count = checked_mul(count, d, "structured dtype field size");
    }
    field.offset = to_size(offset);
    offset = checked_add(offset, checked_mul(count, field.type.size(), "structured dtype field size"), "structured dtype size");
    if (offset > kMaxItemSize) fail_invalid("structured dtype is larger than {} bytes", kMaxItemSize);
    if (auto e = field.type.storage_endian()) {
      if (common_order && *common_order != *e) mixed = true;
      common_order = e;
    }
    fields.push_back(std::move(field));
  }
  if (mixed) fail_unsupported("structured dtype mixes little- and big-endian fields");
  return DataType::structured(std::move(fields)).with_storage_endian(common_order);
}

DataType parse_dtype_v2_at_depth(const json& dtype, int depth) {
  if (dtype.is_string()) return parse_typestr(dtype.get<std::string>());
  if (dtype.is_array()) return parse_structured(dtype, depth);
  fail_invalid("dtype must be a NumPy type string or a list of fields, got {}", describe(dtype));
}

char order_char(const DataType& t) {
  if (t.swap_unit() == 1) return '|';
  return t.storage_endian().value_or(Endian::kLittle) == Endian::kBig ? '>' : '<';
}

}  // namespace

DataType parse_dtype_v2(const json& dtype) { return parse_dtype_v2_at_depth(dtype, 0); }

json dtype_to_v2_json(const DataType& t) {
  const char o = order_char(t);
  const std::size_t n = t.size();
  switch (t.kind()) {
    case DataTypeKind::kBool: return "|b1";
    case DataTypeKind::kInt: return fmt::format("{}i{}", o, n);
    case DataTypeKind::kUInt: return fmt::format("{}u{}", o, n);
    case DataTypeKind::kFloat: return fmt::format("{}f{}", o, n);
    case DataTypeKind::kComplex: return fmt::format("{}c{}", o, n);
    case DataTypeKind::kRawBits: return fmt::format("|V{}", n);
    case DataTypeKind::kFixedBytes: return fmt::format("|S{}", n);
    case DataTypeKind::kFixedUnicode: return fmt::format("{}U{}", o, n / 4);
    case DataTypeKind::kDatetime:
    case DataTypeKind::kTimedelta: {
      const char code = t.kind() == DataTypeKind::kDatetime ? 'M' : 'm';
      const std::string& unit = t.datetime_unit();
      if (t.datetime_count() == 1) {
        if (unit.empty() || unit == "generic") return fmt::format("{}{}8", o, code);
        return fmt::format("{}{}8[{}]", o, code, unit);
      }
      return fmt::format("{}{}8[{}{}]", o, code, t.datetime_count(), unit);
    }
    case DataTypeKind::kStructured: {
      json list = json::array();
      for (const auto& f : t.fields()) {
        json entry = {f.name, dtype_to_v2_json(f.type)};
        if (!f.shape.empty()) entry.push_back(f.shape);
        list.push_back(std::move(entry));
      }
      return list;
    }
    // Object arrays; the first filter (vlen-utf8 or vlen-bytes) says what they hold.
    case DataTypeKind::kString:
    case DataTypeKind::kVarBytes: return "|O";
    // No NumPy type string: the name, as tensorstore writes it.
    case DataTypeKind::kBFloat16:
    case DataTypeKind::kMiniFloat:
    case DataTypeKind::kSubByteInt:
    case DataTypeKind::kSubByteUInt: return t.name();
  }
  fail_unsupported("data type {} has no Zarr v2 form in zarrkit", t.name());
}

}  // namespace zarrkit
