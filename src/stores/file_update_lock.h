// Update locks across the processes of one host for local files (LocalStore's
// lock_for_update): an exclusive flock on a lock file chosen by the store's directory and
// the key. The lock files live outside the store, in <temp dir>/zarrkit-locks, so that
// nothing appears among the store's keys and nothing has to be cleaned up: there are at
// most kUpdateLockStripes of them, shared by every store (two keys that share a stripe only
// wait for each other). A process that dies releases its locks with its file descriptors.
// Processes on other hosts sharing the directory over a network file system are not
// covered (docs/concurrency.md).
#pragma once

#include <memory>
#include <string_view>

#include "zarrkit/store.h"

namespace zarrkit {

inline constexpr unsigned kUpdateLockStripes = 4096;

// Blocks until the lock of (`store_root`, `key`) is held; IoError when the lock file cannot
// be opened or locked.
std::unique_ptr<UpdateLock> lock_file_update(std::string_view store_root, std::string_view key);

}  // namespace zarrkit
