#include "core/metadata_util.h"

#include "core/checked_math.h"
#include "zarrkit/error.h"

namespace zarrkit::metadata_detail {

std::string describe(const json& value) {
  std::string text = value.dump(-1, ' ', true, json::error_handler_t::replace);
  constexpr std::size_t kMax = 80;
  if (text.size() > kMax) text = text.substr(0, kMax - 3) + "...";
  return text;
}

const json* find_member(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const json& require_member(const json& object, std::string_view key, std::string_view context) {
  const json* member = find_member(object, key);
  if (member == nullptr) fail_invalid("{}: required field \"{}\" is missing", context, key);
  return *member;
}

std::optional<std::uint64_t> as_uint(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  }
  return std::nullopt;
}

std::uint64_t get_uint(const json& value, std::string_view what) {
  if (auto v = as_uint(value)) return *v;
  fail_invalid("{} must be a non-negative integer, got {}", what, describe(value));
}

Shape get_shape(const json& value, std::string_view what, std::size_t max_ndim, bool positive) {
  if (!value.is_array()) fail_invalid("{} must be a list of integers, got {}", what, describe(value));
  if (value.size() > max_ndim) {
    fail_resource("{} has {} dimensions, more than the limit of {}", what, value.size(), max_ndim);
  }
  Shape shape;
  shape.reserve(value.size());
  for (const auto& item : value) {
    const std::uint64_t n = get_uint(item, what);
    if (positive && n == 0) fail_invalid("{} must be positive in every dimension, got {}", what, describe(value));
    shape.push_back(n);
  }
  return shape;
}

void check_array_sizes(const Shape& shape, const Shape& chunk_shape, const DataType& dtype,
                       const MetadataLimits& limits) {
  // The whole array's byte size must be representable, so that indexing arithmetic on it
  // can never wrap. Zero-length axes make the array empty; the others must still fit.
  std::uint64_t array_bytes = dtype.size();
  for (auto n : shape) {
    if (n == 0) continue;
    auto next = try_mul(array_bytes, n);
    if (!next) fail_invalid("array shape {} of {} overflows 64 bits of bytes", json(shape).dump(), dtype.name());
    array_bytes = *next;
  }
  std::uint64_t chunk_bytes = dtype.size();
  for (auto n : chunk_shape) {
    auto next = try_mul(chunk_bytes, n);
    if (!next) fail_invalid("chunk shape {} of {} overflows 64 bits of bytes", json(chunk_shape).dump(), dtype.name());
    chunk_bytes = *next;
  }
  if (chunk_bytes > limits.max_chunk_bytes) {
    fail_resource("chunk shape {} of {} is {} bytes, more than the limit of {} bytes", json(chunk_shape).dump(),
                  dtype.name(), chunk_bytes, limits.max_chunk_bytes);
  }
}

Extension parse_extension(const json& value, std::string_view what) {
  Extension extension;
  if (value.is_string()) {
    extension.name = value.get<std::string>();
  } else if (value.is_object()) {
    const json* name = find_member(value, "name");
    if (name == nullptr || !name->is_string()) {
      fail_invalid("{} must have a string \"name\", got {}", what, describe(value));
    }
    extension.name = name->get<std::string>();
    for (const auto& [key, member] : value.items()) {
      if (key == "name") continue;
      if (key == "configuration") {
        if (!member.is_object()) fail_invalid("{} \"{}\": configuration must be an object", what, extension.name);
        extension.configuration = member;
      } else if (key == "must_understand") {
        if (!member.is_boolean()) fail_invalid("{} \"{}\": must_understand must be true or false", what, extension.name);
        extension.must_understand = member.get<bool>();
      } else {
        fail_invalid("{} \"{}\": unexpected field \"{}\"", what, extension.name, key);
      }
    }
  } else {
    fail_invalid("{} must be a name or an object with \"name\", got {}", what, describe(value));
  }
  if (extension.name.empty()) fail_invalid("{}: the name is empty", what);
  return extension;
}

void require_must_understand(const Extension& extension, std::string_view what) {
  if (!extension.must_understand) {
    fail_invalid("{} \"{}\": \"must_understand\": false is not allowed here", what, extension.name);
  }
}

void check_configuration_keys(const json& configuration, std::initializer_list<std::string_view> allowed,
                              std::string_view what) {
  for (const auto& [key, value] : configuration.items()) {
    bool known = false;
    for (auto a : allowed) known = known || key == a;
    if (!known) fail_invalid("{}: unexpected configuration field \"{}\"", what, key);
  }
}

}  // namespace zarrkit::metadata_detail
