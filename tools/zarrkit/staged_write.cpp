#include "zarrkit/staged_write.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "engine/node_io.h"
#include "stores/local_store_internal.h"
#include "zarrkit/chunk_cache.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/group.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/stores/zip_store.h"

namespace zarrkit::cli {
namespace fs = std::filesystem;
namespace {

using detail::errno_text;
using detail::retry_eintr;

// True when `path` does not exist or is an empty directory: a rename may put a node there.
bool is_absent_or_empty_directory(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  if (status.type() == fs::file_type::not_found) return true;
  return status.type() == fs::file_type::directory && fs::is_empty(path, ec) && !ec;
}

// Swaps the directories `a` and `b` in one step; false (errno set) where the file system
// cannot (EINVAL, ENOSYS), the caller then renames twice.
bool exchange_directories(const fs::path& a, const fs::path& b) {
  return retry_eintr([&] { return ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE); }) == 0;
}

int rename_path(const fs::path& from, const fs::path& to) {
  return retry_eintr([&] { return ::rename(from.c_str(), to.c_str()); });
}

// With durable writes, the renames that put a node in place count once the directory that
// holds it is synced (the files inside were synced as they were written).
void sync_parent_if_durable(const fs::path& node) {
  if (!current_config().durable_writes) return;
  const fs::path parent = node.parent_path().empty() ? fs::path(".") : node.parent_path();
  const int fd = retry_eintr([&] { return ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
  if (fd < 0) fail_io("cannot sync the directory \"{}\" of the new node: {}", parent.string(), errno_text(errno));
  const int result = retry_eintr([&] { return ::fsync(fd); });
  const int error = errno;
  ::close(fd);
  if (result != 0) {
    fail_io("the new node is in place at \"{}\" but its directory could not be synced: {}", node.string(),
            errno_text(error));
  }
}

}  // namespace

void remove_abandoned_staging(const fs::path& destination) {
  const std::string prefix = "." + destination.filename().string() + std::string(detail::kTempMarker);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(destination.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || !detail::temp_writer_is_gone(name)) continue;
    std::error_code remove_ec;
    fs::remove_all(entry.path(), remove_ec);  // best effort: never a reason to fail a write
  }
}

StagedNodeWrite::StagedNodeWrite(const StoreLocation& dest, bool overwrite, int zarr_format)
    : dest_(dest), target_(dest) {
  auto local = std::dynamic_pointer_cast<LocalStore>(dest.store);
  if (!local) {
    if (dynamic_cast<ZipStore*>(dest.store.get()) != nullptr || !dest.store->capabilities().writable) return;
    const auto existing = probe_node(*dest.store, dest.path);
    if (existing && !overwrite) return;  // Array::create or Group::create refuses, naming the node
    // With overwrite, whatever is under the destination now goes at the commit unless the new
    // node has it: the old node's keys, and those of a killed writer.
    std::vector<std::string> old_keys;
    if (overwrite && dest.store->capabilities().listable) old_keys = dest.store->list(dest.path);
    const auto placement = existing ? NodeWriteView::Placement::kBeside : NodeWriteView::Placement::kInPlace;
    view_ = std::make_shared<NodeWriteView>(dest.store, dest.path, placement, std::move(old_keys));
    target_ = StoreLocation{view_, dest.path};
    return;
  }
  destination_ = dest.path.empty() ? local->root() : local->root() / dest.path;
  remove_abandoned_staging(destination_);
  const auto existing = probe_node(*dest.store, dest.path);
  if (existing) {
    // Without overwrite the write fails as it always has (Array::create names the node).
    if (!overwrite) return;
    replaces_existing_node_ = true;
  } else if (!is_absent_or_empty_directory(destination_)) {
    return;  // files but no node: written in place, the metadata last
  }
  if (!dest.path.empty()) ensure_ancestor_groups(*dest.store, dest.path, zarr_format);
  const fs::path staging = destination_.parent_path() / detail::temp_name_for(destination_.filename().string());
  if (::mkdir(staging.c_str(), 0777) != 0) {
    fail_io("cannot make the directory \"{}\" to write the new node in: {}", staging.string(), errno_text(errno));
  }
  staging_ = staging;
  target_ = StoreLocation{LocalStore::open(staging_), ""};
}

StagedNodeWrite::~StagedNodeWrite() {
  if (view_ && !committed_) view_->discard();
  if (staging_.empty()) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

void StagedNodeWrite::commit() {
  if (view_) {
    view_->commit();
    committed_ = true;
    forget_cached_chunks(*dest_.store, dest_.path);  // keys copied into place on the server
    return;
  }
  if (staging_.empty()) return;
  target_.store.reset();  // nothing writes into the staging directory any more
  if (!replaces_existing_node_) {
    // Over nothing, or over the empty directory that opening the destination made.
    if (rename_path(staging_, destination_) != 0) {
      fail_io("cannot move the new node into place at \"{}\": {}", destination_.string(), errno_text(errno));
    }
    staging_.clear();
    forget_cached_chunks(*dest_.store, dest_.path);  // written around the store
    sync_parent_if_durable(destination_);
    return;
  }
  if (!exchange_directories(staging_, destination_)) {
    if (errno != EINVAL && errno != ENOSYS) {
      fail_io("cannot swap the new node into place at \"{}\": {}", destination_.string(), errno_text(errno));
    }
    // No exchange on this file system: move the old node aside, then the new one in. A crash
    // between the two renames leaves the old node under a temporary name beside it.
    const fs::path aside = destination_.parent_path() / detail::temp_name_for(destination_.filename().string());
    if (rename_path(destination_, aside) != 0) {
      fail_io("cannot move the old node at \"{}\" aside: {}", destination_.string(), errno_text(errno));
    }
    if (rename_path(staging_, destination_) != 0) {
      const int error = errno;
      rename_path(aside, destination_);  // put the old node back
      fail_io("cannot move the new node into place at \"{}\": {}", destination_.string(), errno_text(error));
    }
    staging_ = aside;
  }
  forget_cached_chunks(*dest_.store, dest_.path);  // the old node's chunks, swapped out around the store
  // staging_ now holds the old node: removed here (or, after a crash, by the next writer).
  std::error_code ec;
  fs::remove_all(staging_, ec);
  staging_.clear();
  sync_parent_if_durable(destination_);
}

}  // namespace zarrkit::cli
