// Writing a whole node (cp, import) so that a crash or a failure never leaves a half-written
// node where the old one was, nor a partial one that reads as finished (docs/concurrency.md).
//
// On a directory store the node is written into a hidden directory beside its destination
// (".<name>.zarrkit-tmp.<pid>-<random>") and renamed into place once complete: over nothing
// (a new node), or exchanged with the old node in one step (renameat2 RENAME_EXCHANGE, with
// two renames where the file system cannot exchange), the old one then removed. Elsewhere
// (zip archives, which are replaced whole anyway; S3; memory) the node is written in place
// and the caller writes an array's metadata last.
#pragma once

#include <filesystem>
#include <string>

#include "zarrkit/stores/open_store.h"

namespace zarrkit::cli {

class StagedNodeWrite {
 public:
  // `dest`: where the node goes. `overwrite`: an existing node there may be replaced.
  // `zarr_format`: the new node's, for missing ancestor groups of a staged node.
  StagedNodeWrite(const StoreLocation& dest, bool overwrite, int zarr_format);
  StagedNodeWrite(const StagedNodeWrite&) = delete;
  StagedNodeWrite& operator=(const StagedNodeWrite&) = delete;
  // Not committed: the staging directory and everything in it are removed.
  ~StagedNodeWrite();

  // Where to write the node: the staging directory's store at "", or `dest` itself.
  const StoreLocation& target() const { return target_; }
  bool staged() const { return !staging_.empty(); }
  // Puts the finished node in place (no-op when not staged); IoError when a rename fails,
  // and then the old node is still there.
  void commit();

 private:
  StoreLocation dest_;
  StoreLocation target_;
  std::filesystem::path destination_;  // the node's directory (staged only)
  std::filesystem::path staging_;      // empty: not staged
  bool replaces_existing_node_ = false;
};

// Removes the staging directories beside `destination` whose writers are gone (killed
// before their commit); those inside a store go when the store is opened for writing.
void remove_abandoned_staging(const std::filesystem::path& destination);

}  // namespace zarrkit::cli
