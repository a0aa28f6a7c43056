// The decoded-chunk cache (zarrkit/chunk_cache.h, docs/chunk-cache.md): an LRU of decoded
// chunks within a byte budget, shared by the threads of a process.
//
// Keys. A chunk is named by where its bytes live, `location` = the store's cache identity
// (Store::cache_identity(): "file:///data/" for a directory, so that two stores opened on a
// directory and on one below it name a file alike) followed by the chunk's store key, and by
// `member`: kWholeChunk, or the ordinal of an inner chunk of a shard. A `fingerprint` of
// what decodes the chunk (data type, chunk shape, codecs, fill value) goes with it: a lookup
// with another fingerprint misses, so that an array re-created with other codecs in the same
// place never reads what the old one decoded.
//
// Locks. Entries live in lock shards chosen by a hash of the location, so that readers of
// different chunks rarely take the same lock and all members of one chunk (a shard's inner
// chunks) share one. Eviction is least recently used over the whole cache: every use stamps
// the entry from one counter, each lock shard keeps its entries in stamp order, and the
// oldest entry of the cache is the oldest of the shards' oldest.
//
// Writes. A writer drops the chunk after its new value is stored (invalidate_chunk_caches,
// from the stores); a reader takes a ticket of the chunk's lock shard before it fetches and
// inserts only if no write came to that lock shard since. So a decoded value that a write
// replaced while it was being read is never kept.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "zarrkit/buffer.h"
#include "zarrkit/chunk_cache.h"

namespace zarrkit {

// One chunk as a cache holds it: its decoded bytes, or that it is not stored (the fill value).
struct CachedChunk {
  bool stored = false;
  Buffer bytes;  // the decoded chunk, C order, native byte order (host or device memory)
};

class ChunkCache {
 public:
  static constexpr std::uint64_t kWholeChunk = ~std::uint64_t{0};
  // What an entry costs beyond its bytes (the bookkeeping, the key).
  static constexpr std::uint64_t kEntryOverhead = 160;

  struct Key {
    std::string_view store;   // Store::cache_identity()
    std::string_view key;     // the chunk's key in that store
    std::uint64_t fingerprint = 0;
    std::uint64_t member = kWholeChunk;
  };

  explicit ChunkCache(std::uint64_t budget);
  ~ChunkCache();
  ChunkCache(const ChunkCache&) = delete;
  ChunkCache& operator=(const ChunkCache&) = delete;

  // The entry, marked as just used; nullopt (a miss) when there is none. Lookups are not
  // counted as hits or misses: the reader says what it made of them (count()).
  std::optional<CachedChunk> find(const Key& key);
  // The members `members` of one chunk (key.member is ignored) under one lock: out[i] for
  // members[i]. Returns how many were found.
  std::size_t find_members(const Key& key, std::span<const std::uint64_t> members,
                           std::span<std::optional<CachedChunk>> out);

  // Take before fetching what will be inserted; insert() keeps the value only if no write
  // to the chunk's lock shard came in between.
  std::uint64_t ticket(const Key& key);
  // Keeps `chunk` (bytes never changed afterwards) unless it exceeds the budget or the
  // ticket is stale; pushes out the least recently used entries until within the budget.
  void insert(const Key& key, CachedChunk chunk, std::uint64_t ticket);

  // Drops every member of the chunk at `key` of `store`, whatever its fingerprint.
  void invalidate(std::string_view store, std::string_view key);
  // Drops every chunk of `store` whose key is `prefix` or lies below the directory `prefix`
  // ("" is the whole store).
  void invalidate_prefix(std::string_view store, std::string_view prefix);
  void clear();

  // Changes the budget (0: nothing is kept), pushing out what no longer fits.
  void set_budget(std::uint64_t budget);
  std::uint64_t budget() const { return budget_.load(std::memory_order_relaxed); }
  // Counts chunks a read took from the cache (hits) and chunks it had to fetch (misses).
  void count(std::uint64_t hits, std::uint64_t misses);
  ChunkCacheStats stats() const;

 private:
  struct Shard;
  Shard& shard_of(std::string_view store, std::string_view key) const;
  void evict_to(std::uint64_t budget);
  // Removes the oldest entry of the cache; false when empty.
  bool evict_oldest();

  static constexpr std::size_t kShards = 64;
  std::unique_ptr<Shard[]> shards_;
  std::atomic<std::uint64_t> budget_;
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::uint64_t> entries_{0};
  std::atomic<std::uint64_t> clock_{0};
  mutable std::atomic<std::uint64_t> hits_{0}, misses_{0}, insertions_{0}, evictions_{0}, invalidations_{0},
      dropped_{0};
};

// What a read passes down to find its chunks: the cache, and the store and array they
// belong to. Empty (no cache) when the read does not use one.
struct ChunkCacheView {
  ChunkCache* cache = nullptr;
  std::string_view store;  // Store::cache_identity() of the array's store
  std::uint64_t fingerprint = 0;

  explicit operator bool() const { return cache != nullptr; }
  ChunkCache::Key key(std::string_view chunk_key, std::uint64_t member = ChunkCache::kWholeChunk) const {
    return {store, chunk_key, fingerprint, member};
  }
};

// The process's host cache, with its budget set to `budget` (0 empties it). Made on the
// first call with a budget.
ChunkCache* process_chunk_cache(std::uint64_t budget);
// The cache of reads into the memory of GPU `device`, likewise (Config::cache.device_bytes).
ChunkCache* device_chunk_cache(int device, std::uint64_t budget);
// A cache of its own (an array's, a device's) that writes reach as they reach the process's.
std::shared_ptr<ChunkCache> make_registered_chunk_cache(std::uint64_t budget);

// True once any cache was made in this process (writes have nothing to drop before).
bool chunk_caches_exist();
// Drop `key` (or everything below `prefix`) of the store with cache identity `store` from
// every cache of the process. Cheap while no cache was ever used.
void invalidate_chunk_caches(std::string_view store, std::string_view key);
void invalidate_chunk_caches_under(std::string_view store, std::string_view prefix);

// A fingerprint of bytes (FNV-1a, 64 bits) for ChunkCache::Key::fingerprint.
std::uint64_t fingerprint_of(std::string_view text);

}  // namespace zarrkit
