// Group: opening, creating and listing groups (v2 .zgroup, v3 zarr.json node_type group).
#include "zarrkit/group.h"

#include <algorithm>
#include <utility>

#include "engine/consolidated.h"
#include "engine/node_io.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

// How deep walk() descends below the group it starts from. Key spaces have no cycles, but
// a hostile store can nest groups arbitrarily deep; the walk is iterative either way.
constexpr std::size_t kMaxWalkDepth = 64;

std::string group_context(std::string_view path, Store& store) {
  return fmt::format("group '{}' in {}", display_path(path), store.describe());
}

// The group of `zarr_format` at `path`, or nullopt if there is none of that format.
// With `use_zmetadata` false a v2 group is read from .zgroup and .zattrs alone.
std::optional<GroupMetadata> read_group_metadata(Store& store, const std::string& path, int zarr_format,
                                                 bool use_zmetadata = true) {
  if (zarr_format == 3) {
    auto doc = read_json(store, join_key(path, kZarrJson));
    if (!doc) return std::nullopt;
    if (declared_node_type(*doc) == "array") {
      fail_invalid("zarr.json describes an array, not a group");
    }
    return parse_group_metadata_v3(*doc);
  }
  // Consolidated: .zmetadata holds the group's own .zgroup and .zattrs too (one get).
  if (auto zmetadata = use_zmetadata ? read_zmetadata(store, path) : std::nullopt) {
    const nlohmann::json& entries = zmetadata->at("metadata");
    if (const auto zgroup = entries.find(kZgroup); zgroup != entries.end()) {
      const auto zattrs = entries.find(kZattrs);
      GroupMetadata g = parse_group_metadata_v2(
          *zgroup, zattrs == entries.end() ? std::nullopt : std::optional<nlohmann::json>(*zattrs));
      g.consolidated = std::move(*zmetadata);
      return g;
    }
  }
  auto zgroup = read_json(store, join_key(path, kZgroup));
  if (!zgroup) return std::nullopt;
  return parse_group_metadata_v2(*zgroup, read_json(store, join_key(path, kZattrs)));
}

std::shared_ptr<const ConsolidatedIndex> consolidated_index(const GroupMetadata& m) {
  return m.consolidated ? ConsolidatedIndex::from(*m.consolidated, m.zarr_format) : nullptr;
}

// The metadata of a group listed in consolidated metadata. Its own consolidated block (an
// empty one, as zarr-python writes them there) is dropped: the parent's subtree replaces it.
GroupMetadata group_from(const ConsolidatedNode& node, int zarr_format) {
  GroupMetadata g = zarr_format == 3 ? parse_group_metadata_v3(node.metadata)
                                     : parse_group_metadata_v2(node.metadata, node.zattrs);
  g.consolidated.reset();
  return g;
}

}  // namespace

Group::Group(std::shared_ptr<Store> store, std::string path, GroupMetadata metadata)
    : store_(std::move(store)), path_(std::move(path)), metadata_(std::move(metadata)) {}

Group::Group(std::shared_ptr<Store> store, std::string path, GroupMetadata metadata,
             std::shared_ptr<const ConsolidatedIndex> consolidated)
    : store_(std::move(store)),
      path_(std::move(path)),
      metadata_(std::move(metadata)),
      consolidated_(std::move(consolidated)) {}

Group Group::open(std::shared_ptr<Store> store, std::string_view path_in, ConsolidatedUse use) {
  if (!store) fail_invalid("Group::open: no store given");
  const std::string path = normalize_node_path(path_in);
  try {
    for (int format : {3, 2}) {  // v3 wins when both exist
      if (auto m = read_group_metadata(*store, path, format, use != ConsolidatedUse::kIgnore)) {
        if (use == ConsolidatedUse::kIgnore) m->consolidated.reset();
        if (use == ConsolidatedUse::kRequire && !m->consolidated) {
          fail_not_found("consolidated metadata was required but the group has none ({})",
                         format == 3 ? "no consolidated_metadata in zarr.json" : "no .zmetadata");
        }
        auto consolidated = consolidated_index(*m);
        return Group(store, path, std::move(*m), std::move(consolidated));
      }
    }
    if (store->exists(join_key(path, kZarray))) fail_invalid("there is a v2 array (.zarray), not a group");
  } catch (const Error& e) {
    rethrow_with_context(e, group_context(path, *store));
  } catch (const nlohmann::json::exception& e) {
    // A safety net: metadata of an unexpected shape must never escape as a JSON library error.
    fail_invalid("{}: malformed metadata: {}", group_context(path, *store), e.what());
  }
  fail_not_found("no group at '{}' in {}: neither zarr.json nor .zgroup exists there", display_path(path),
                 store->describe());
}

Group Group::create(std::shared_ptr<Store> store, std::string_view path_in, int zarr_format,
                    const nlohmann::json& attributes, bool overwrite) {
  if (!store) fail_invalid("Group::create: no store given");
  const std::string path = normalize_node_path(path_in);
  try {
    if (zarr_format != 2 && zarr_format != 3) fail_invalid("zarr_format must be 2 or 3, got {}", zarr_format);
    if (!attributes.is_object()) fail_invalid("attributes must be a JSON object, got {}", attributes.type_name());
    validate_new_node_path(path);
    if (const auto existing = probe_node(*store, path)) {
      if (overwrite) {
        erase_node(*store, path);
      } else if (existing->type == NodeType::kArray) {
        fail_invalid("an array (zarr v{}) already exists there; pass overwrite to replace it",
                     existing->zarr_format);
      } else if (auto kept = read_group_metadata(*store, path, zarr_format)) {
        return Group(store, path, std::move(*kept));  // an existing group is kept as it is
      }
    }
    ensure_ancestor_groups(*store, path, zarr_format);
    GroupMetadata metadata;
    metadata.zarr_format = zarr_format;
    metadata.attributes = attributes;
    write_group_metadata(*store, path, metadata);
    return Group(store, path, std::move(metadata));
  } catch (const Error& e) {
    rethrow_with_context(e, "cannot create " + group_context(path, *store));
  }
}

std::vector<NodeInfo> Group::members() const {
  if (consolidated_) {
    std::vector<NodeInfo> out;
    for (const std::string& name : consolidated_->children("")) {
      out.push_back({name, join_key(path_, name), consolidated_->find(name)->type, zarr_format()});
    }
    return out;
  }
  try {
    return list_members(*store_, path_, zarr_format());
  } catch (const Error& e) {
    rethrow_with_context(e, "listing " + group_context(path_, *store_));
  }
}

std::vector<NodeInfo> Group::walk() const {
  std::vector<NodeInfo> out;
  if (consolidated_) {
    // Depth first, children in name order, from the document (its depth is bounded).
    std::vector<std::string> pending;  // relative paths, next on top
    auto push_children = [&](const std::string& relative) {
      const auto names = consolidated_->children(relative);
      for (auto it = names.rbegin(); it != names.rend(); ++it) pending.push_back(join_key(relative, *it));
    };
    push_children("");
    while (!pending.empty()) {
      const std::string relative = std::move(pending.back());
      pending.pop_back();
      const ConsolidatedNode& node = *consolidated_->find(relative);
      const std::size_t slash = relative.rfind('/');
      out.push_back({slash == std::string::npos ? relative : relative.substr(slash + 1), join_key(path_, relative),
                     node.type, zarr_format()});
      if (node.type == NodeType::kGroup) push_children(relative);
    }
    return out;
  }
  // Depth-first, children in name order, with an explicit stack (no recursion).
  std::vector<std::pair<NodeInfo, std::size_t>> stack;
  auto push_children = [&](const std::vector<NodeInfo>& children, std::size_t depth) {
    if (!children.empty() && depth > kMaxWalkDepth) {
      fail_resource("the hierarchy below {} is more than {} levels deep", group_context(path_, *store_),
                    kMaxWalkDepth);
    }
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.emplace_back(*it, depth);
  };
  push_children(members(), 1);
  while (!stack.empty()) {
    auto [node, depth] = std::move(stack.back());
    stack.pop_back();
    if (node.type == NodeType::kGroup) {
      std::vector<NodeInfo> children;
      try {
        children = list_members(*store_, node.path, node.zarr_format);
      } catch (const Error& e) {
        rethrow_with_context(e, "listing " + group_context(node.path, *store_));
      }
      out.push_back(std::move(node));
      push_children(children, depth + 1);
    } else {
      out.push_back(std::move(node));
    }
  }
  return out;
}

Group Group::open_group(std::string_view name) const {
  const std::string child = normalize_node_path(name);
  const std::string path = join_key(path_, child);
  if (const ConsolidatedNode* node = consolidated_ && !child.empty() ? consolidated_->find(child) : nullptr) {
    try {
      if (node->type != NodeType::kGroup) fail_invalid("the consolidated metadata lists an array there, not a group");
      return Group(store_, path, group_from(*node, zarr_format()), consolidated_->subtree(child));
    } catch (const Error& e) {
      rethrow_with_context(e, group_context(path, *store_));
    } catch (const nlohmann::json::exception& e) {
      fail_invalid("{}: malformed consolidated metadata: {}", group_context(path, *store_), e.what());
    }
  }
  return Group::open(store_, path);
}

Array Group::open_array(std::string_view name) const {
  const std::string child = normalize_node_path(name);
  const std::string path = join_key(path_, child);
  if (const ConsolidatedNode* node = consolidated_ && !child.empty() ? consolidated_->find(child) : nullptr) {
    const std::string context = fmt::format("array '{}' in {} (consolidated metadata)", path, store_->describe());
    try {
      if (node->type != NodeType::kArray) fail_invalid("the consolidated metadata lists a group there, not an array");
      const CodecRegistry& codecs = CodecRegistry::builtin();
      auto m = std::make_shared<const ArrayMetadata>(zarr_format() == 3
                                                         ? parse_array_metadata_v3(node->metadata, codecs)
                                                         : parse_array_metadata_v2(node->metadata, node->zattrs, codecs));
      return Array(store_, path, std::move(m));
    } catch (const Error& e) {
      rethrow_with_context(e, context);
    } catch (const nlohmann::json::exception& e) {
      fail_invalid("{}: malformed metadata: {}", context, e.what());
    }
  }
  return Array::open(store_, path);
}

Group Group::create_group(std::string_view name, const nlohmann::json& attributes) const {
  const std::string child = normalize_node_path(name);
  if (child.empty()) fail_invalid("create_group: the name is empty");
  return Group::create(store_, join_key(path_, child), zarr_format(), attributes);
}

Array Group::create_array(std::string_view name, const ArrayMetadata& metadata, bool overwrite) const {
  const std::string child = normalize_node_path(name);
  if (child.empty()) fail_invalid("create_array: the name is empty");
  if (metadata.zarr_format != zarr_format()) {
    fail_invalid("cannot create a zarr v{} array '{}' in the zarr v{} {}", metadata.zarr_format, child,
                 zarr_format(), group_context(path_, *store_));
  }
  return Array::create(store_, join_key(path_, child), metadata, overwrite);
}

void Group::set_attributes(const nlohmann::json& attributes) {
  if (!attributes.is_object()) fail_invalid("attributes must be a JSON object, got {}", attributes.type_name());
  GroupMetadata updated = metadata_;
  updated.attributes = attributes;
  try {
    if (updated.zarr_format == 3) {
      write_json(*store_, join_key(path_, kZarrJson), group_metadata_to_v3_json(updated));
    } else {
      write_json(*store_, join_key(path_, kZattrs), attributes);
      // Opening reads the attributes from .zmetadata when there is one: keep it in step.
      if (updated.consolidated) {
        (*updated.consolidated)["metadata"][std::string(kZattrs)] = attributes;
        write_json(*store_, join_key(path_, kZmetadata), *updated.consolidated);
      }
    }
  } catch (const Error& e) {
    rethrow_with_context(e, "writing the attributes of " + group_context(path_, *store_));
  }
  metadata_ = std::move(updated);
}

void Group::consolidate() {
  GroupMetadata updated = metadata_;
  try {
    if (!store_->capabilities().writable) fail_invalid("the store is read-only");
    updated.consolidated = build_consolidated(*store_, path_, zarr_format(), updated.attributes);
    auto index = ConsolidatedIndex::from(*updated.consolidated, zarr_format());
    if (zarr_format() == 3) {
      write_json(*store_, join_key(path_, kZarrJson), group_metadata_to_v3_json(updated));
    } else {
      write_json(*store_, join_key(path_, kZmetadata), *updated.consolidated);
    }
    consolidated_ = std::move(index);
  } catch (const Error& e) {
    rethrow_with_context(e, "consolidating the metadata of " + group_context(path_, *store_));
  }
  metadata_ = std::move(updated);
}

Group consolidate_metadata(std::shared_ptr<Store> store, std::string_view path) {
  Group group = Group::open(std::move(store), path);
  group.consolidate();
  return group;
}

}  // namespace zarrkit
