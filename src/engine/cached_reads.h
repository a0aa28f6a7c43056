// Reads through the decoded-chunk cache (core/chunk_cache.h, docs/chunk-cache.md): which
// cache a read of an array uses, and chunk reads that look there first and keep there what
// they decode. A read with no cache never comes here (array.cpp): its path is unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/chunk_cache.h"
#include "engine/chunk_read.h"
#include "zarrkit/array.h"
#include "zarrkit/config.h"

namespace zarrkit {

namespace detail {
// Shared by the copies of an Array: the cache of its own (made when it was opened while
// Config::cache.array_bytes was set), and the fingerprint of what decodes its chunks,
// worked out at its first read that uses a cache.
struct ArrayCacheState {
  std::shared_ptr<ChunkCache> own;
  std::once_flag fingerprinted;
  std::uint64_t fingerprint = 0;
};
std::shared_ptr<ArrayCacheState> make_array_cache_state(const Config& settings);
}  // namespace detail

// What decodes an array's chunks (data type, chunk shape, fill value, codecs), as a
// ChunkCache fingerprint: the shape and the attributes do not count (a resize keeps what
// is cached; its writes drop the chunks it changes).
std::uint64_t decoding_fingerprint(const ArrayMetadata& m);

// The cache one read of an array uses, and the array's place in it; none (false) when the
// read uses no cache.
class ReadCache {
 public:
  // A read into host memory under the settings in force: the array's own cache, else the
  // process's where Config::cache.host_bytes is set (which resizes it to that).
  explicit ReadCache(const Array& array);
  // `cache` (a device's), none where null.
  ReadCache(const Array& array, ChunkCache* cache);
  ReadCache(const ReadCache&) = delete;
  ReadCache& operator=(const ReadCache&) = delete;

  explicit operator bool() const { return static_cast<bool>(view_); }
  const ChunkCacheView& view() const { return view_; }

 private:
  void use(const Array& array, ChunkCache* cache);

  std::string store_;  // the store's cache identity, which view_ points into
  ChunkCacheView view_;
};

// Reads the task's elements of the chunk at `key` (its store key) from the cache alone:
// false, having written nothing, when the cache does not hold it.
bool read_chunk_task_from_cache(const ChunkReadRequest& r, const ChunkCacheView& cache, const std::string& key,
                                const ChunkTask& task);
// Reads the task's elements of the chunk at `key`: from the cache where it holds the chunk,
// else fetched, decoded whole into a buffer that the cache keeps, and copied from there.
void read_chunk_task_cached(const ChunkReadRequest& r, const ChunkCacheView& cache, const std::string& key,
                            const ChunkTask& task);
// The whole chunk at `key` of `store`, decoded with `chain` (the one prepared for the chunk's
// shape: m.prepared_chain(coords)), through the cache (stored false: absent).
CachedChunk read_chunk_cached(Store& store, const ArrayMetadata& m, const ChunkCacheView& cache,
                              const std::string& key, const PreparedChain& chain);

}  // namespace zarrkit
