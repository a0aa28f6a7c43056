// Consolidated metadata: the metadata of every node below a group, stored in one document so
// that opening a hierarchy costs one get. Two forms, as zarr-python 3 writes them:
//
//  * v3: inline in the group's zarr.json,
//      "consolidated_metadata": {"kind": "inline", "must_understand": false,
//                                "metadata": {"a": {<a/zarr.json>}, "g/b": {...}, ...}}
//    keyed by the path relative to the group; child groups carry an empty inline block.
//  * v2: a .zmetadata document beside .zgroup,
//      {"metadata": {".zgroup": {...}, ".zattrs": {...}, "a/.zarray": {...},
//                    "a/.zattrs": {...}, ...}, "zarr_consolidated_format": 1}
//
// ConsolidatedIndex reads either form into one map from relative path to node. The documents
// are untrusted: paths are validated as store keys, entries whose parent is not a group in
// the same document are ignored, and each node's metadata is only parsed (with the usual
// validation) when it is opened.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrkit/group.h"

namespace zarrkit {

inline constexpr std::string_view kZmetadata = ".zmetadata";

struct ConsolidatedNode {
  NodeType type = NodeType::kGroup;
  nlohmann::json metadata;                // v3 zarr.json; v2 .zarray or .zgroup
  std::optional<nlohmann::json> zattrs;  // v2 .zattrs
};

class ConsolidatedIndex {
 public:
  // From a group's GroupMetadata::consolidated (v3: the inline block; v2: the .zmetadata
  // document). InvalidArgumentError when it is malformed.
  static std::shared_ptr<const ConsolidatedIndex> from(const nlohmann::json& consolidated, int zarr_format);

  int zarr_format() const { return zarr_format_; }
  // The node at `relative` (below the group), or null.
  const ConsolidatedNode* find(const std::string& relative) const;
  // The nodes directly below `relative` ("" for the group itself), sorted by name.
  std::vector<std::string> children(const std::string& relative) const;
  // The index of the subtree below the group `relative`, keyed relative to it: what a child
  // group opened through this one sees.
  std::shared_ptr<const ConsolidatedIndex> subtree(const std::string& relative) const;

 private:
  int zarr_format_ = 3;
  std::map<std::string, ConsolidatedNode> nodes_;
};

// Builds the consolidated document for the group at `path` from the metadata stored below it
// (store listings, never existing consolidated metadata): the v3 inline block or the whole v2
// .zmetadata document. `group_doc` is the group's own document for v2 (.zgroup) and its
// attributes, which .zmetadata repeats.
nlohmann::json build_consolidated(Store& store, const std::string& path, int zarr_format,
                                  const nlohmann::json& group_attributes);

// The .zmetadata document of a v2 group, or nullopt if there is none. InvalidArgumentError when
// it is not a consolidated metadata document.
std::optional<nlohmann::json> read_zmetadata(Store& store, const std::string& group_path);

}  // namespace zarrkit
