// Groups and hierarchy walks (v2 and v3).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "zarrkit/array.h"
#include "zarrkit/metadata.h"
#include "zarrkit/store.h"

namespace zarrkit {

class ConsolidatedIndex;

enum class NodeType { kArray, kGroup };

struct NodeInfo {
  std::string name;  // the last path segment
  std::string path;  // the full path from the store root
  NodeType type;
  int zarr_format;
};

// Which node is at `path` ("" the root), or nullopt. v3 (zarr.json) wins over v2.
std::optional<NodeInfo> probe_node(Store& store, std::string_view path);

// Consolidated metadata (zarr-python's consolidate_metadata / open_consolidated): the
// metadata of every node below a group kept in one document, v3 inline in the group's
// zarr.json ("consolidated_metadata"), v2 in a .zmetadata beside .zgroup. A group opened with
// it answers members(), walk(), open_group() and open_array() from that document, without
// reading the store (a node it does not list is still looked up in the store). It is a
// snapshot: nodes created or changed later are not in it until the group is consolidated again.
// Whether Group::open uses consolidated metadata (zarr-python's use_consolidated=None, True,
// False): where present, required (NotFoundError without it), or never (the store is read).
enum class ConsolidatedUse { kIfPresent, kRequire, kIgnore };

class Group {
 public:
  // Reads the group's metadata: zarr.json (v3, with any inline consolidated metadata), else
  // .zmetadata (v2 consolidated: .zgroup and .zattrs come from it), else .zgroup and .zattrs.
  static Group open(std::shared_ptr<Store> store, std::string_view path = "",
                    ConsolidatedUse consolidated = ConsolidatedUse::kIfPresent);
  // Creates the group (and its missing ancestors). An existing group of this format is
  // kept as it is (and `attributes` ignored) unless `overwrite`, which removes the node and
  // everything below it first; an existing array there is an error unless `overwrite`.
  // Node names are checked (no "__" prefix, not only dots, not a metadata file name).
  static Group create(std::shared_ptr<Store> store, std::string_view path = "",
                      int zarr_format = 3,
                      const nlohmann::json& attributes = nlohmann::json::object(),
                      bool overwrite = false);

  const GroupMetadata& metadata() const { return metadata_; }
  const nlohmann::json& attributes() const { return metadata_.attributes; }
  int zarr_format() const { return metadata_.zarr_format; }
  const std::string& path() const { return path_; }
  const std::shared_ptr<Store>& store() const { return store_; }

  // Direct children of this group's zarr format, sorted by name (as zarr-python lists them).
  std::vector<NodeInfo> members() const;
  // Every node below this group, depth first, children in name order. Deeper than 64
  // levels is a ResourceExhaustedError (no cycles exist in a key space; this bounds work).
  std::vector<NodeInfo> walk() const;

  Group open_group(std::string_view name) const;
  Array open_array(std::string_view name) const;
  Group create_group(std::string_view name,
                     const nlohmann::json& attributes = nlohmann::json::object()) const;
  // metadata.zarr_format must be the group's (InvalidArgumentError otherwise).
  Array create_array(std::string_view name, const ArrayMetadata& metadata,
                     bool overwrite = false) const;

  // Replaces all attributes (v3: rewrites zarr.json; v2: rewrites .zattrs).
  void set_attributes(const nlohmann::json& attributes);

  // True when the group was opened with consolidated metadata and answers from it.
  bool has_consolidated_metadata() const { return consolidated_ != nullptr; }
  // Reads the metadata of every node below the group from the store (listing it, ignoring
  // any consolidated metadata) and stores it consolidated as zarr-python 3 does: v3 inline
  // in this group's zarr.json, v2 as .zmetadata. The group then answers from it.
  void consolidate();

 private:
  Group(std::shared_ptr<Store> store, std::string path, GroupMetadata metadata);
  Group(std::shared_ptr<Store> store, std::string path, GroupMetadata metadata,
        std::shared_ptr<const ConsolidatedIndex> consolidated);

  std::shared_ptr<Store> store_;
  std::string path_;
  GroupMetadata metadata_;
  std::shared_ptr<const ConsolidatedIndex> consolidated_;  // null without consolidated metadata
};

// Group::open(store, path).consolidate(): zarr-python's zarr.consolidate_metadata.
Group consolidate_metadata(std::shared_ptr<Store> store, std::string_view path = "");

}  // namespace zarrkit
