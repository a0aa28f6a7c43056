#include "engine/consolidated.h"

#include <algorithm>

#include "engine/node_io.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

// As deep as Group::walk goes.
constexpr std::size_t kMaxDepth = 64;

std::size_t depth_of(std::string_view path) { return static_cast<std::size_t>(std::count(path.begin(), path.end(), '/')) + 1; }

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

void check_path(const std::string& path, std::string_view where) {
  try {
    validate_key(path);
  } catch (const InvalidArgumentError& e) {
    fail_invalid("{}: the node path \"{}\" is not usable: {}", where, path, e.what());
  }
  if (depth_of(path) > kMaxDepth) {
    fail_resource("{}: the node path \"{}\" is more than {} levels deep", where, path, kMaxDepth);
  }
}

// The empty inline block zarr-python gives the groups inside consolidated metadata.
json empty_inline_block() {
  return {{"kind", "inline"}, {"must_understand", false}, {"metadata", json::object()}};
}

}  // namespace

std::shared_ptr<const ConsolidatedIndex> ConsolidatedIndex::from(const json& consolidated, int zarr_format) {
  auto index = std::make_shared<ConsolidatedIndex>();
  index->zarr_format_ = zarr_format;
  std::map<std::string, ConsolidatedNode> found;
  if (zarr_format == 3) {
    constexpr std::string_view where = "zarr.json consolidated_metadata";
    const auto metadata = consolidated.is_object() ? consolidated.find("metadata") : consolidated.end();
    if (metadata == consolidated.end() || !metadata->is_object()) fail_invalid("{}: \"metadata\" must be an object", where);
    for (const auto& [path, doc] : metadata->items()) {
      check_path(path, where);
      const std::string_view type = declared_node_type(doc);
      if (type != "array" && type != "group") {
        fail_invalid("{}: \"{}\" must be a zarr.json document with node_type \"array\" or \"group\"", where, path);
      }
      found[path] = ConsolidatedNode{type == "array" ? NodeType::kArray : NodeType::kGroup, doc, std::nullopt};
    }
  } else {
    constexpr std::string_view where = ".zmetadata";
    if (!consolidated.is_object()) fail_invalid("{} must be a JSON object", where);
    const auto format = consolidated.find("zarr_consolidated_format");
    if (format == consolidated.end() || *format != 1) fail_invalid("{}: zarr_consolidated_format must be 1", where);
    const auto metadata = consolidated.find("metadata");
    if (metadata == consolidated.end() || !metadata->is_object()) fail_invalid("{}: \"metadata\" must be an object", where);
    std::map<std::string, json> attributes;
    for (const auto& [key, doc] : metadata->items()) {
      const std::size_t slash = key.rfind('/');
      if (slash == std::string::npos) continue;  // the group's own .zgroup and .zattrs
      const std::string path = key.substr(0, slash);
      const std::string_view name = std::string_view(key).substr(slash + 1);
      if (name == kZarray || name == kZgroup) {
        check_path(path, where);
        found[path] = ConsolidatedNode{name == kZarray ? NodeType::kArray : NodeType::kGroup, doc, std::nullopt};
      } else if (name == kZattrs) {
        attributes[path] = doc;
      }
    }
    for (auto& [path, attrs] : attributes) {
      if (auto it = found.find(path); it != found.end()) it->second.zattrs = std::move(attrs);
    }
  }
  // Keep only nodes whose ancestors are groups of the same document, shallowest first, so
  // that a parent is decided before its children.
  std::vector<std::pair<std::size_t, std::string>> by_depth;
  for (const auto& [path, node] : found) by_depth.emplace_back(depth_of(path), path);
  std::sort(by_depth.begin(), by_depth.end());
  for (const auto& [depth, path] : by_depth) {
    const std::string parent = parent_of(path);
    if (!parent.empty()) {
      const auto it = index->nodes_.find(parent);
      if (it == index->nodes_.end() || it->second.type != NodeType::kGroup) continue;
    }
    index->nodes_.emplace(path, std::move(found[path]));
  }
  return index;
}

const ConsolidatedNode* ConsolidatedIndex::find(const std::string& relative) const {
  const auto it = nodes_.find(relative);
  return it == nodes_.end() ? nullptr : &it->second;
}

std::vector<std::string> ConsolidatedIndex::children(const std::string& relative) const {
  const std::string prefix = relative.empty() ? std::string() : relative + "/";
  std::vector<std::string> names;
  for (auto it = nodes_.lower_bound(prefix); it != nodes_.end() && it->first.starts_with(prefix); ++it) {
    const std::string_view rest = std::string_view(it->first).substr(prefix.size());
    if (!rest.empty() && rest.find('/') == std::string_view::npos) names.emplace_back(rest);
  }
  return names;  // the map's order: sorted by name
}

std::shared_ptr<const ConsolidatedIndex> ConsolidatedIndex::subtree(const std::string& relative) const {
  auto sub = std::make_shared<ConsolidatedIndex>();
  sub->zarr_format_ = zarr_format_;
  const std::string prefix = relative + "/";
  for (auto it = nodes_.lower_bound(prefix); it != nodes_.end() && it->first.starts_with(prefix); ++it) {
    sub->nodes_.emplace(it->first.substr(prefix.size()), it->second);
  }
  return sub;
}

std::optional<json> read_zmetadata(Store& store, const std::string& group_path) {
  auto doc = read_json(store, join_key(group_path, kZmetadata));
  if (doc) (void)ConsolidatedIndex::from(*doc, 2);  // refuse a malformed one now, with its name
  return doc;
}

json build_consolidated(Store& store, const std::string& path, int zarr_format, const json& group_attributes) {
  json metadata = json::object();
  if (zarr_format == 2) {
    metadata[std::string(kZgroup)] = read_json(store, join_key(path, kZgroup)).value_or(json{{"zarr_format", 2}});
    metadata[std::string(kZattrs)] = group_attributes;
  }
  // Depth first over what is stored (an explicit stack: the depth is bounded, not recursion).
  std::vector<std::pair<NodeInfo, std::size_t>> stack;
  auto push_children = [&](const std::string& dir, std::size_t depth) {
    std::vector<NodeInfo> children = list_members(store, dir, zarr_format);
    if (!children.empty() && depth > kMaxDepth) {
      fail_resource("the hierarchy below '{}' is more than {} levels deep", display_path(path), kMaxDepth);
    }
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.emplace_back(std::move(*it), depth);
  };
  push_children(path, 1);
  while (!stack.empty()) {
    auto [node, depth] = std::move(stack.back());
    stack.pop_back();
    const std::string relative = path.empty() ? node.path : node.path.substr(path.size() + 1);
    if (zarr_format == 3) {
      json doc = read_json(store, join_key(node.path, kZarrJson)).value_or(json::object());
      if (node.type == NodeType::kGroup) doc["consolidated_metadata"] = empty_inline_block();
      metadata[relative] = std::move(doc);
    } else {
      const std::string_view name = node.type == NodeType::kArray ? kZarray : kZgroup;
      metadata[relative + "/" + std::string(name)] = read_json(store, join_key(node.path, name)).value_or(json::object());
      metadata[relative + "/" + std::string(kZattrs)] =
          read_json(store, join_key(node.path, kZattrs)).value_or(json::object());
    }
    if (node.type == NodeType::kGroup) push_children(node.path, depth + 1);
  }
  if (zarr_format == 3) return {{"kind", "inline"}, {"must_understand", false}, {"metadata", std::move(metadata)}};
  return {{"metadata", std::move(metadata)}, {"zarr_consolidated_format", 1}};
}

}  // namespace zarrkit
