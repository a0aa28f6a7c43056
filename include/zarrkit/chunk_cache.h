// The decoded-chunk cache: decoded chunks (and inner chunks of shards) kept in memory for
// later reads, so that a read that touches a chunk again copies it instead of fetching and
// decoding it (docs/chunk-cache.md). Off unless a budget is set:
//
//   zarrkit::global_config().cache.host_bytes = 512 << 20;   // one budget for the process
//   zarrkit::global_config().cache.array_bytes = 64 << 20;   // arrays opened now: one each
//   zarrkit::global_config().cache.device_bytes = 1 << 30;   // reads into GPU memory, per GPU
//
// Least recently used chunks go first when a budget is full. Writes made by this process
// through any store (chunks, shards written in part, resize, erase, overwrite) drop what
// they change from every cache; writes by other processes are not seen (docs/chunk-cache.md).
#pragma once

#include <cstdint>
#include <string_view>

#include "zarrkit/buffer.h"

namespace zarrkit {

class Store;

// Counters of one cache over its life, and what it holds now.
struct ChunkCacheStats {
  std::uint64_t hits = 0;        // chunks (or inner chunks) a read took from the cache
  std::uint64_t misses = 0;      // chunks a read looked for and had to fetch and decode
  std::uint64_t insertions = 0;  // chunks put in
  std::uint64_t evictions = 0;   // chunks pushed out to stay within the budget
  std::uint64_t invalidations = 0;  // chunks dropped because this process wrote them
  // Decoded chunks that were not kept because a write to them came while they were read.
  std::uint64_t dropped = 0;
  std::uint64_t entries = 0;     // held now
  std::uint64_t bytes = 0;       // held now, bookkeeping included
  std::uint64_t budget = 0;
};

// The process's host cache (Config::cache.host_bytes).
ChunkCacheStats chunk_cache_stats();
// The cache of reads into GPU memory on `device` (Config::cache.device_bytes); all zeros
// without the GPU module or before that device read anything.
ChunkCacheStats device_chunk_cache_stats(int device);
// Empties every cache of the process (host, arrays' own, devices'); counters are kept.
void clear_chunk_caches();
// Drops what every cache holds of `store`'s keys below `prefix` (a directory: "" is the
// whole store). Stores do this themselves on every write; this is for changes made around
// them (another program's files swapped into place under a directory this process caches).
void forget_cached_chunks(const Store& store, std::string_view prefix);

}  // namespace zarrkit
