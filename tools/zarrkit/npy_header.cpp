#include "zarrkit/npy_header.h"

#include <cstring>

#include "core/checked_math.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit::cli {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::size_t kAlignment = 64;
constexpr std::size_t kMaxNdim = 64;

// v1.0 and v2.0 headers are Latin-1; turn them into UTF-8 before parsing.
std::string latin1_to_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

void check_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > text.size()) fail_invalid("npy header is not valid UTF-8 (byte {})", i);
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) {
        fail_invalid("npy header is not valid UTF-8 (byte {})", i + k);
      }
    }
    i += n;
  }
}

std::string python_string(std::string_view s) {
  std::string out = "'";
  for (unsigned char c : s) {
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);  // UTF-8 passes through; the header then needs v3.0
    }
  }
  return out + "'";
}

std::string python_tuple(const nlohmann::json& items) {
  std::string out = "(";
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += fmt::format("{}{}", i ? ", " : "", items[i].get<std::uint64_t>());
  }
  return out + (items.size() == 1 ? ",)" : ")");
}

// The v2 dtype JSON (a typestr or a list of [name, type, shape?]) as NumPy writes a descr.
std::string descr_literal(const nlohmann::json& descr) {
  if (descr.is_string()) return python_string(descr.get<std::string>());
  std::string out = "[";
  for (std::size_t i = 0; i < descr.size(); ++i) {
    const auto& field = descr[i];
    out += fmt::format("{}({}, {}", i ? ", " : "", python_string(field.at(0).get<std::string>()),
                       descr_literal(field.at(1)));
    if (field.size() > 2) out += ", " + python_tuple(field[2]);
    out += ")";
  }
  return out + "]";
}

bool is_object_descr(const nlohmann::json& descr) {
  if (descr.is_string()) {
    const auto& s = descr.get_ref<const std::string&>();
    return s == "O" || s == "|O" || s == "<O" || s == ">O" || s == "=O";
  }
  if (descr.is_array()) {
    for (const auto& field : descr) {
      if (field.is_array() && field.size() >= 2 && is_object_descr(field[1])) return true;
    }
  }
  return false;
}

DataType parse_descr(const nlohmann::json& descr) {
  if (!descr.is_string() && !descr.is_array()) {
    fail_invalid("npy header 'descr' must be a string or a list of fields, got {}", descr.dump());
  }
  if (is_object_descr(descr)) {
    fail_unsupported("npy file holds Python objects (descr {}), which are stored pickled; not supported",
                     descr.dump());
  }
  DataType dtype;
  try {
    dtype = parse_dtype_v2(descr);
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("npy header descr {}", descr.dump()));
  }
  if (dtype.is_variable_length()) fail_unsupported("npy descr {} has no fixed item size", descr.dump());
  return dtype;
}

Shape parse_shape(const nlohmann::json& shape) {
  if (!shape.is_array()) fail_invalid("npy header 'shape' must be a tuple, got {}", shape.dump());
  if (shape.size() > kMaxNdim) fail_invalid("npy shape has {} dimensions (at most {})", shape.size(), kMaxNdim);
  Shape out;
  for (const auto& d : shape) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0) {
      fail_invalid("npy shape entries must be non-negative integers, got {}", shape.dump());
    }
    out.push_back(d.get<std::uint64_t>());
  }
  return out;
}

}  // namespace

std::size_t npy_preamble_size(ByteView prefix) {
  if (prefix.size() < 8 || std::memcmp(prefix.data(), kMagic.data(), kMagic.size()) != 0) return 0;
  auto major = static_cast<unsigned>(prefix[6]);
  auto minor = static_cast<unsigned>(prefix[7]);
  if (minor != 0) return 0;
  if (major == 1) return 10;
  if (major == 2 || major == 3) return 12;
  return 0;
}

NpyHeader parse_npy_header(ByteView bytes) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0) {
    fail_invalid("not a NumPy .npy file (no \\x93NUMPY magic)");
  }
  const std::size_t preamble = npy_preamble_size(bytes);
  if (preamble == 0) {
    fail_unsupported("npy format version {}.{} is not supported (1.0, 2.0, 3.0 are)",
                     static_cast<unsigned>(bytes[6]), static_cast<unsigned>(bytes[7]));
  }
  if (bytes.size() < preamble) fail_invalid("npy file is truncated inside its preamble");
  std::uint64_t header_len = 0;
  for (std::size_t i = preamble; i-- > 8;) header_len = (header_len << 8) | static_cast<std::uint8_t>(bytes[i]);
  if (header_len > kMaxNpyHeaderBytes) {
    fail_invalid("npy header length {} exceeds the limit of {} bytes", header_len, kMaxNpyHeaderBytes);
  }
  if (bytes.size() - preamble < header_len) {
    fail_invalid("npy file is truncated: header of {} bytes, {} present", header_len, bytes.size() - preamble);
  }
  NpyHeader header;
  header.major_version = static_cast<int>(bytes[6]);
  std::string_view raw(reinterpret_cast<const char*>(bytes.data()) + preamble, header_len);
  std::string text;
  if (header.major_version >= 3) {
    check_utf8(raw);
    text = raw;
  } else {
    text = latin1_to_utf8(raw);
  }
  nlohmann::json dict;
  try {
    dict = parse_python_literal(text);
  } catch (const Error& e) {
    rethrow_with_context(e, "npy header");
  }
  if (!dict.is_object()) fail_invalid("npy header is not a dict");
  for (const auto& [key, value] : dict.items()) {
    if (key != "descr" && key != "fortran_order" && key != "shape") {
      fail_invalid("npy header has unexpected key '{}' (expected descr, fortran_order, shape)", key);
    }
  }
  for (const char* key : {"descr", "fortran_order", "shape"}) {
    if (!dict.contains(key)) fail_invalid("npy header has no '{}'", key);
  }
  if (!dict["fortran_order"].is_boolean()) {
    fail_invalid("npy header 'fortran_order' must be True or False, got {}", dict["fortran_order"].dump());
  }
  header.fortran_order = dict["fortran_order"].get<bool>();
  const nlohmann::json& descr = dict["descr"];
  header.one_byte_float = descr == "<f1" || descr == "|f1" || descr == ">f1";
  header.dtype = header.one_byte_float ? DataType::raw_bits(8) : parse_descr(descr);
  header.shape = parse_shape(dict["shape"]);
  header.data_bytes = checked_nbytes(header.shape, header.dtype);
  header.data_offset = preamble + header_len;
  return header;
}

std::string npy_descr(const DataType& dtype) {
  if (dtype.is_variable_length()) {
    fail_unsupported("{} has no NumPy .npy equivalent with a fixed item size", dtype.name());
  }
  // No .npy type string: export converts them first (--astype, astype.h).
  switch (dtype.kind()) {
    case DataTypeKind::kBFloat16:
    case DataTypeKind::kMiniFloat:
    case DataTypeKind::kSubByteInt:
    case DataTypeKind::kSubByteUInt: fail_unsupported("{} has no NumPy .npy equivalent", dtype.name());
    default: break;
  }
  return descr_literal(dtype_to_v2_json(native_dtype(dtype)));
}

std::string format_npy_header(const DataType& dtype, const Shape& shape, bool fortran_order) {
  nlohmann::json shape_json = shape;
  std::string dict = fmt::format("{{'descr': {}, 'fortran_order': {}, 'shape': {}, }}", npy_descr(dtype),
                                 fortran_order ? "True" : "False", python_tuple(shape_json));
  bool ascii = true;
  for (unsigned char c : dict) ascii = ascii && c < 0x80;
  int major = !ascii ? 3 : dict.size() + 1 + 10 > 65535 ? 2 : 1;
  std::size_t preamble = major == 1 ? 10 : 12;
  std::size_t total = preamble + dict.size() + 1;
  dict.append((kAlignment - total % kAlignment) % kAlignment, ' ');
  dict += '\n';
  std::string out(kMagic);
  out += static_cast<char>(major);
  out += '\0';
  std::uint64_t len = dict.size();
  for (std::size_t i = 0; i < preamble - 8; ++i) out += static_cast<char>((len >> (8 * i)) & 0xFF);
  return out + dict;
}

DataType native_dtype(const DataType& dtype) {
  if (dtype.kind() == DataTypeKind::kStructured) {
    std::vector<StructField> fields = dtype.fields();
    for (auto& f : fields) f.type = native_dtype(f.type);
    return DataType::structured(std::move(fields));
  }
  return dtype.with_storage_endian(dtype.swap_unit() > 1 ? std::optional(native_endian()) : std::nullopt);
}

void npy_to_native(MutableByteView data, const DataType& stored) {
  if (stored.kind() != DataTypeKind::kStructured) {
    if (stored.storage_endian() && *stored.storage_endian() != native_endian()) {
      byteswap_elements(data, stored, *stored.storage_endian());
    }
    return;
  }
  const std::size_t item = stored.size();
  if (item == 0) return;
  for (std::size_t i = 0; i + item <= data.size(); i += item) {
    for (const auto& f : stored.fields()) {
      std::uint64_t count = checked_num_elements(f.shape);
      npy_to_native(data.subspan(i + f.offset, to_size(count * f.type.size())), f.type);
    }
  }
}

}  // namespace zarrkit::cli
