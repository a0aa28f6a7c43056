// Reading and writing the metadata documents of nodes (arrays and groups), shared by Array
// and Group: node paths, JSON documents in the store, removing a node, and creating the
// ancestor groups a new node needs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrkit/group.h"
#include "zarrkit/store.h"

namespace zarrkit {

// Metadata document names.
inline constexpr std::string_view kZarrJson = "zarr.json";  // v3 array or group
inline constexpr std::string_view kZarray = ".zarray";      // v2 array
inline constexpr std::string_view kZgroup = ".zgroup";      // v2 group
inline constexpr std::string_view kZattrs = ".zattrs";      // v2 attributes

// "a/b/" and "/a/b" -> "a/b"; "" and "/" -> "" (the root). Rejects unsafe paths ("..",
// empty segments, ...) with InvalidArgumentError.
std::string normalize_node_path(std::string_view path);
// Checks the names along a path for a node about to be created (v3 core "node names"):
// no segment may be only dots, start with "__", or be a metadata document name.
void validate_new_node_path(std::string_view path);

// The path as messages show it: "/" for the root.
std::string display_path(std::string_view path);

// The JSON document at `key`, or nullopt if the key is absent. Parsed with the metadata
// limits (size, depth), of which the size bounds what is read; malformed JSON is an
// InvalidArgumentError naming the key.
std::optional<nlohmann::json> read_json(Store& store, const std::string& key);
// Writes `value` as zarr-python formats it (indent 2).
void write_json(Store& store, const std::string& key, const nlohmann::json& value);

// The node_type a zarr.json document declares, or "" when it has no string node_type
// (the metadata parser then says precisely what is wrong).
std::string_view declared_node_type(const nlohmann::json& doc);

// The node of a given format at `path`, or nullopt. zarr.json must be an object with
// node_type "array" or "group" (InvalidArgumentError otherwise).
std::optional<NodeInfo> probe_node_format(Store& store, std::string_view path, int zarr_format);

// The children of the group at `path` that are nodes of `zarr_format`, sorted by name.
std::vector<NodeInfo> list_members(Store& store, std::string_view path, int zarr_format);

// Removes the node at `path` with everything below it (the whole store for the root).
void erase_node(Store& store, std::string_view path);

// Makes sure every ancestor of `path` is a group of `zarr_format`, writing the metadata of
// those that are missing (v3 zarr.json; v2 .zgroup and .zattrs), as zarr-python does.
// InvalidArgumentError if an ancestor is an array.
void ensure_ancestor_groups(Store& store, std::string_view path, int zarr_format);

// Writes the metadata of a group (v3 zarr.json; v2 .zgroup and .zattrs).
void write_group_metadata(Store& store, std::string_view path, const GroupMetadata& metadata);

}  // namespace zarrkit
