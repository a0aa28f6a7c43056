// Reading a shard through the decoded-chunk cache (core/chunk_cache.h): each inner chunk is
// an entry of its own (the shard's store key, its ordinal in the index), so that a read of
// another part of the shard, or of the same part again, takes the inner chunks decoded
// before from the cache and fetches only the others.
#include <algorithm>

#include "codecs/sharding_level.h"
#include "core/checked_math.h"
#include "stores/byte_range_coalescer.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {

// The cache's entries for the task's inner chunks: found[i] for selection.chunks[i].
struct CachedInner {
  InnerChunkSelection selection;
  std::vector<std::optional<CachedChunk>> found;
  std::size_t hits = 0;
};

CachedInner look_up(const ShardLevel& level, const PartialRequest& request, const std::string& key,
                    const ChunkTask& task) {
  CachedInner c;
  c.selection = level.select(task_runs(task), chunk_valid_extent(task, level.layout.shard_spec.shape, request.array_shape));
  std::vector<std::uint64_t> ordinals;
  ordinals.reserve(c.selection.chunks.size());
  for (const InnerChunkRef& chunk : c.selection.chunks) ordinals.push_back(chunk.ordinal);
  c.found.resize(ordinals.size());
  c.hits = request.cache.cache->find_members(request.cache.key(key), ordinals, c.found);
  return c;
}

// Copies the selected elements of one inner chunk (the fill value where it is not stored).
void place(const ShardLevel& level, const NDView& region, const InnerChunkRef& chunk, const CachedChunk& value) {
  const BlockRuns runs = chunk.runs();
  if (!value.stored) return fill_region(runs, region.data, region.byte_strides, level.layout.shard_spec.fill_value.bytes());
  copy_block_to_region(runs, value.bytes.data(), level.inner->strides(), region.data, region.byte_strides,
                       level.layout.inner_spec.dtype.size());
}

}  // namespace

bool ShardLevel::read_from_cache(const PartialRequest& request, const std::string& key, const ChunkTask& task) const {
  if (!request.cache) return false;
  const CachedInner c = look_up(*this, request, key, task);
  if (c.hits != c.found.size()) return false;
  for (std::size_t i = 0; i < c.found.size(); ++i) place(*this, request.region, c.selection.chunks[i], *c.found[i]);
  request.cache.cache->count(c.hits, 0);
  return true;
}

void ShardLevel::read_through_cache(const PartialRequest& request, const std::string& key, const ChunkTask& task) const {
  ChunkCache& cache = *request.cache.cache;
  // Before anything is fetched: a write to the shard from now on keeps what this read
  // decodes out of the cache.
  const std::uint64_t ticket = cache.ticket(request.cache.key(key));
  const CachedInner c = look_up(*this, request, key, task);
  std::vector<std::size_t> missing;
  for (std::size_t i = 0; i < c.found.size(); ++i) {
    if (c.found[i]) {
      place(*this, request.region, c.selection.chunks[i], *c.found[i]);
    } else {
      missing.push_back(i);
    }
  }
  cache.count(c.hits, missing.size());
  if (missing.empty()) return;

  auto keep = [&](std::size_t i, CachedChunk value) {
    place(*this, request.region, c.selection.chunks[i], value);
    cache.insert(request.cache.key(key, c.selection.chunks[i].ordinal), std::move(value), ticket);
  };
  auto all_absent = [&] {
    for (const std::size_t i : missing) keep(i, CachedChunk{});
  };

  // The shard's index (from the whole shard where one get is the way to read it, as
  // ShardLevel::read decides), then the missing inner chunks' bytes.
  Store& store = request.store;
  const StoreCapabilities capabilities = store.capabilities();
  ShardSource source;
  std::optional<Buffer> whole;
  if (!capabilities.partial_reads || (task.covers_whole_chunk && capabilities.batched_gets)) {
    whole = store.get(key, BufferPrototype::host());
    if (!whole) return all_absent();
    source.bytes = whole->view();
    source.size = whole->size();
  }
  std::optional<Buffer> index_storage;
  const std::optional<ByteView> index = fetch_shard_index(*this, source, &store, key, index_storage);
  if (!index) return all_absent();
  const std::vector<ShardIndexEntry> entries = codec->decode_index(*index, layout, source.size);

  std::vector<std::size_t> stored;  // of `missing`, those with bytes
  for (const std::size_t i : missing) {
    if (entries[to_size(c.selection.chunks[i].ordinal)].is_empty()) {
      keep(i, CachedChunk{});
    } else {
      stored.push_back(i);
    }
  }
  std::vector<ByteView> bytes(stored.size());
  std::optional<std::vector<Buffer>> got;  // holds fetched bytes until they are decoded
  if (source.bytes) {
    for (std::size_t k = 0; k < stored.size(); ++k) {
      const ShardIndexEntry& e = entries[to_size(c.selection.chunks[stored[k]].ordinal)];
      bytes[k] = source.bytes->subspan(to_size(e.offset), to_size(e.nbytes));
    }
  } else if (!stored.empty()) {
    std::vector<ByteRange> wanted;
    wanted.reserve(stored.size());
    for (const std::size_t i : stored) {
      const ShardIndexEntry& e = entries[to_size(c.selection.chunks[i].ordinal)];
      wanted.push_back(ByteRange::range(e.offset, e.offset + e.nbytes));
    }
    const CoalescedRanges fetches = coalesce_byte_ranges(wanted, {.max_gap = request.settings.coalesce_gap});
    got = store.get_ranges(key, fetches.requests, BufferPrototype::host());
    if (!got) {
      // Deleted since the index was read: the fill value now, but nothing is kept (the
      // write that deleted it may have come after this read's ticket).
      for (const std::size_t i : stored) place(*this, request.region, c.selection.chunks[i], CachedChunk{});
      return;
    }
    if (got->size() != fetches.requests.size()) throw InternalError("get_ranges returned the wrong number of ranges");
    for (std::size_t r = 0; r < got->size(); ++r) {
      const ByteRange& range = fetches.requests[r];
      if ((*got)[r].size() != range.end - range.start) {
        fail_data_loss("bytes [{}, {}) of the shard hold inner chunks, but the shard ends at byte {}", range.start,
                       range.end, range.start + (*got)[r].size());
      }
    }
    for (std::size_t k = 0; k < stored.size(); ++k) {
      const CoalescedRanges::Part& part = fetches.parts[k];
      bytes[k] = (*got)[part.request].view().subspan(to_size(part.offset), to_size(part.length));
    }
  }

  // Each inner chunk decoded whole into a buffer of its own, which the cache keeps.
  shared_thread_pool().parallel_for(stored.size(), [&](std::size_t k) {
    const InnerChunkRef& chunk = c.selection.chunks[stored[k]];
    try {
      CachedChunk value{true, Buffer::allocate(to_size(inner->chunk_bytes()))};
      if (!inner->decode_into(bytes[k], value.bytes.mutable_view())) value.bytes = decode_inner(bytes[k]).buffer();
      keep(stored[k], std::move(value));
    } catch (const Error& e) {
      rethrow_with_context(e, chunk.describe());
    }
  });
}

}  // namespace zarrkit
