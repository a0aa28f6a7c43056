#include "engine/node_io.h"

#include <algorithm>

#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

std::string_view last_segment(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

NodeInfo make_info(std::string_view path, NodeType type, int zarr_format) {
  return {std::string(last_segment(path)), std::string(path), type, zarr_format};
}

// The node type a zarr.json document declares.
NodeType v3_node_type(const nlohmann::json& doc, const std::string& key) {
  const std::string_view type = declared_node_type(doc);
  if (type == "array") return NodeType::kArray;
  if (type == "group") return NodeType::kGroup;
  fail_invalid("'{}': node_type must be \"array\" or \"group\"", key);
}

}  // namespace

std::string_view declared_node_type(const nlohmann::json& doc) {
  if (!doc.is_object()) return {};
  const auto it = doc.find("node_type");
  if (it == doc.end() || !it->is_string()) return {};
  return it->get_ref<const std::string&>();
}

std::string normalize_node_path(std::string_view path) {
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (!path.empty()) validate_key(path);
  return std::string(path);
}

void validate_new_node_path(std::string_view path) {
  std::size_t begin = 0;
  while (begin < path.size()) {
    std::size_t end = path.find('/', begin);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view name = path.substr(begin, end - begin);
    if (name.find_first_not_of('.') == std::string_view::npos) {
      fail_invalid("invalid node name '{}' in '{}': a name cannot consist of dots only", name, path);
    }
    if (name.starts_with("__")) {
      fail_invalid("invalid node name '{}' in '{}': names starting with \"__\" are reserved", name, path);
    }
    if (name == kZarrJson || name == kZarray || name == kZgroup || name == kZattrs) {
      fail_invalid("invalid node name '{}' in '{}': it is the name of a metadata document", name, path);
    }
    begin = end + 1;
  }
}

std::string display_path(std::string_view path) {
  return path.empty() ? std::string("/") : std::string(path);
}

std::optional<nlohmann::json> read_json(Store& store, const std::string& key) {
  // One byte past the size limit is all that is read: a larger document (a huge object) is
  // refused without being read whole. Where a value's size costs no request of its own (local
  // files, memory, zip members: stores without batched remote gets), a document declaring more
  // than the limit is refused before a byte of it is read, so a zip member that would inflate to
  // gigabytes is never inflated at all.
  const std::uint64_t limit = MetadataLimits{}.max_json_bytes;
  if (!store.capabilities().batched_gets) {
    const auto declared = store.size(key);
    if (!declared) return std::nullopt;
    if (*declared > limit) {
      fail_resource("'{}' declares {} bytes, more than the limit of {} bytes for a JSON document", key, *declared,
                    limit);
    }
  }
  const auto value = store.get(key, BufferPrototype::host(), ByteRange::range(0, limit + 1));
  if (!value) return std::nullopt;
  if (value->size() > limit) {
    fail_resource("'{}' is larger than the limit of {} bytes for a JSON document", key, limit);
  }
  try {
    return parse_json(as_chars(value->view()));
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("'{}'", key));  // callers name the store
  }
}

void write_json(Store& store, const std::string& key, const nlohmann::json& value) {
  store.set(key, as_bytes(dump_json(value)));
}

std::optional<NodeInfo> probe_node_format(Store& store, std::string_view path, int zarr_format) {
  if (zarr_format == 3) {
    const std::string key = join_key(path, kZarrJson);
    const auto doc = read_json(store, key);
    if (!doc) return std::nullopt;
    return make_info(path, v3_node_type(*doc, key), 3);
  }
  if (zarr_format == 2) {
    if (store.exists(join_key(path, kZarray))) return make_info(path, NodeType::kArray, 2);
    if (store.exists(join_key(path, kZgroup))) return make_info(path, NodeType::kGroup, 2);
    return std::nullopt;
  }
  fail_invalid("zarr_format must be 2 or 3, got {}", zarr_format);
}

std::optional<NodeInfo> probe_node(Store& store, std::string_view path) {
  const std::string normalized = normalize_node_path(path);
  try {
    if (auto v3 = probe_node_format(store, normalized, 3)) return v3;
    return probe_node_format(store, normalized, 2);
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("node '{}' in {}", display_path(normalized), store.describe()));
  }
}

std::vector<NodeInfo> list_members(Store& store, std::string_view path, int zarr_format) {
  std::vector<NodeInfo> members;
  // Every sub-directory is a candidate; it is a node if it has metadata.
  std::vector<std::string> names = store.list_dir(path).prefixes;
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (auto node = probe_node_format(store, join_key(path, name), zarr_format)) {
      members.push_back(std::move(*node));
    }
  }
  return members;
}

void erase_node(Store& store, std::string_view path) {
  // Store prefixes name directories: "a/b" removes "a/b/..." but not "a/bc/...".
  store.erase_prefix(path);
}

void ensure_ancestor_groups(Store& store, std::string_view path, int zarr_format) {
  if (path.empty()) return;  // the root has no ancestors
  // Ancestors from the root down: "", "a", "a/b" for "a/b/c".
  std::size_t end = 0;
  for (;;) {
    const std::string_view ancestor = path.substr(0, end);
    for (int format : {3, 2}) {
      const auto node = probe_node_format(store, ancestor, format);
      if (node && node->type == NodeType::kArray) {
        fail_invalid("cannot create a node at '{}': '{}' is an array, and arrays cannot contain nodes",
                     path, display_path(ancestor));
      }
    }
    if (!probe_node_format(store, ancestor, zarr_format)) {
      GroupMetadata group;
      group.zarr_format = zarr_format;
      write_group_metadata(store, ancestor, group);
    }
    const std::size_t next = path.find('/', end == 0 ? 0 : end + 1);
    if (next == std::string_view::npos) return;
    end = next;
  }
}

void write_group_metadata(Store& store, std::string_view path, const GroupMetadata& metadata) {
  if (metadata.zarr_format == 3) {
    write_json(store, join_key(path, kZarrJson), group_metadata_to_v3_json(metadata));
  } else if (metadata.zarr_format == 2) {
    write_json(store, join_key(path, kZgroup), nlohmann::json{{"zarr_format", 2}});
    write_json(store, join_key(path, kZattrs), metadata.attributes);
  } else {
    fail_invalid("zarr_format must be 2 or 3, got {}", metadata.zarr_format);
  }
}

}  // namespace zarrkit
