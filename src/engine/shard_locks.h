// Per-shard locks for read-modify-write of shards inside one process.
//
// Two threads updating different inner chunks of the same shard each read the shard, change
// their part and write it back; without mutual exclusion the later write drops the earlier
// update. Every shard write of the engine holds the lock of (store, key) from reading the old
// shard to storing the new one. A store is named by its describe() text, so two Store objects
// opened on the same directory share their locks. Locks are striped: a fixed table of mutexes chosen by a hash
// of the store and the key, so memory does not grow with the number of shards written and
// nothing has to be cleaned up. Two keys may share a stripe; that only serialises them.
//
// Rules that keep this deadlock-free: a thread holds at most one shard lock at a time, and
// never waits for other work on the shared thread pool while holding it.
#pragma once

#include <mutex>
#include <string_view>

namespace zarrkit {

// The mutex that guards writes of `key` in the store that describes itself as `store_name`.
std::mutex& shard_write_mutex(std::string_view store_name, std::string_view key);

}  // namespace zarrkit
