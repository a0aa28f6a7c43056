// Per-key locks for read-modify-write of chunks and shards inside one process.
//
// Two threads updating different parts of the same chunk (different inner chunks of one
// shard, say) each read it, change their part and write it back; without mutual exclusion
// the later write drops the earlier update. Every read-modify-write of the engine and of
// the sharding codec holds the lock of (store, key) from reading the old value to storing
// the new one. A store is named by its describe() text, so two Store objects opened on the
// same directory share their locks. Locks are striped: a fixed table of mutexes chosen by a
// hash of the store and the key, so memory does not grow with the number of keys written
// and nothing has to be cleaned up. Two keys may share a stripe; that only serialises them.
//
// Rules that keep this deadlock-free: a thread holds at most one key lock at a time, and
// never waits for other work on the shared thread pool while holding it.
#pragma once

#include <mutex>
#include <string_view>

namespace zarrkit {

// The mutex that guards writes of `key` in the store that describes itself as `store_name`.
std::mutex& key_write_mutex(std::string_view store_name, std::string_view key);

}  // namespace zarrkit
