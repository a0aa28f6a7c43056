// Helpers shared by the metadata parsers (v2, v3, data types, fill values): typed reads of
// JSON fields that turn every wrong type or value into an InvalidArgumentError naming the
// field, and the v3 extension-object form.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "zarrkit/metadata.h"

namespace zarrkit::metadata_detail {

using json = nlohmann::json;

// A short rendering of a JSON value for error messages (at most ~80 characters).
std::string describe(const json& value);

// The member `key` of `object`, or nullptr.
const json* find_member(const json& object, std::string_view key);
const json& require_member(const json& object, std::string_view key, std::string_view context);

// The value of a JSON integer >= 0 (never a float, not even 3.0), whether nlohmann holds it
// as unsigned (parsed text) or signed (built in C++); nullopt for anything else.
std::optional<std::uint64_t> as_uint(const json& value);
// as_uint or InvalidArgumentError naming `what`.
std::uint64_t get_uint(const json& value, std::string_view what);
// A list of non-negative integers, at most limits.max_ndim long. `positive`: each > 0.
Shape get_shape(const json& value, std::string_view what, std::size_t max_ndim, bool positive);

// Checks shape x itemsize fits in 64 bits (zero-length axes aside), and that a chunk of
// `chunk_shape` stays within limits.max_chunk_bytes.
void check_array_sizes(const Shape& shape, const Shape& chunk_shape, const DataType& dtype,
                       const MetadataLimits& limits);

// A v3 extension point: a bare name ("bytes") or {"name", "configuration"?,
// "must_understand"?}. Any other key in the object is an error.
struct Extension {
  std::string name;
  json configuration = json::object();  // {} when absent
  bool must_understand = true;
};
Extension parse_extension(const json& value, std::string_view what);

// Refuses `"must_understand": false`, which v3 does not allow for data types, chunk grids
// and chunk key encodings.
void require_must_understand(const Extension& extension, std::string_view what);

// Refuses keys of `configuration` other than `allowed`.
void check_configuration_keys(const json& configuration, std::initializer_list<std::string_view> allowed,
                              std::string_view what);

// v3 chunk_key_encoding object (or short-hand name).
ChunkKeyEncoding parse_chunk_key_encoding_v3(const json& value);

}  // namespace zarrkit::metadata_detail
