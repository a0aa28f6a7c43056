// Writing a whole node (cp, import) so that a crash or a failure never leaves a half-written
// node where the old one was, nor a partial one that reads as finished (docs/concurrency.md).
//
// On a directory store the node is written into a hidden directory beside its destination
// (".<name>.zarrkit-tmp.<pid>-<random>") and renamed into place once complete: over nothing
// (a new node), or exchanged with the old node in one step (renameat2 RENAME_EXCHANGE, with
// two renames where the file system cannot exchange), the old one then removed. A zip
// archive is replaced whole when it is written, so a node is written into it in place (the
// caller writes an array's metadata last). On stores that cannot rename (S3, memory) the node
// is written through a NodeWriteView (node_write_view.h): its metadata held back until the
// commit, its other keys beside an old node (under a hidden prefix inside it) or in place where
// there is none, and with `overwrite` the keys under the destination that the new node does not
// have removed at the commit.
#pragma once

#include <filesystem>
#include <string>

#include "zarrkit/node_write_view.h"
#include "zarrkit/stores/open_store.h"

namespace zarrkit::cli {

class StagedNodeWrite {
 public:
  // `dest`: where the node goes. `overwrite`: an existing node there may be replaced.
  // `zarr_format`: the new node's, for missing ancestor groups of a staged node.
  StagedNodeWrite(const StoreLocation& dest, bool overwrite, int zarr_format);
  StagedNodeWrite(const StagedNodeWrite&) = delete;
  StagedNodeWrite& operator=(const StagedNodeWrite&) = delete;
  // Not committed: the staging directory (or prefix) and everything in it are removed.
  ~StagedNodeWrite();

  // Where to write the node: the staging directory's store at "", a NodeWriteView at the
  // node's path, or `dest` itself.
  const StoreLocation& target() const { return target_; }
  // Puts the finished node in place (no-op when written in place). On a directory store an
  // IoError when a rename fails, and then the old node is still there; through a NodeWriteView
  // as NodeWriteView::commit says.
  void commit();

 private:
  StoreLocation dest_;
  StoreLocation target_;
  std::filesystem::path destination_;  // the node's directory (staged only)
  std::filesystem::path staging_;      // empty: not staged
  bool replaces_existing_node_ = false;
  std::shared_ptr<NodeWriteView> view_;  // stores that cannot rename
  bool committed_ = false;
};

// Removes the staging directories beside `destination` whose writers are gone (killed
// before their commit); those inside a store go when the store is opened for writing.
void remove_abandoned_staging(const std::filesystem::path& destination);

}  // namespace zarrkit::cli
