#include "engine/cached_reads.h"

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "engine/task_copy.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace detail {

std::shared_ptr<ArrayCacheState> make_array_cache_state(const Config& settings) {
  auto state = std::make_shared<ArrayCacheState>();
  if (settings.cache.array_bytes > 0) state->own = make_registered_chunk_cache(settings.cache.array_bytes);
  return state;
}

}  // namespace detail

namespace {

// The chunk's elements that the task selects, into the request's region.
void place_task(const ChunkReadRequest& r, const ChunkTask& task, const CachedChunk& chunk) {
  if (r.faults != nullptr && r.faults->active()) {
    const auto [begin, end] = OutputFaults::task_span(task, r.region);
    r.faults->before_write(begin, end);
  }
  if (!chunk.stored) return fill_task_region(task, r.region.data, r.region.byte_strides, r.fill);
  copy_chunk_to_region(task, chunk.bytes.data(), r.chunk_strides, r.region.data, r.region.byte_strides,
                       r.metadata.dtype.size());
}

// The stored chunk decoded whole into a buffer of its own (the chunk's bytes in C order).
Buffer decode_whole_chunk(const PreparedChain& chain, const ArrayMetadata& m, Buffer encoded) {
  const std::uint64_t chunk_bytes = chain.chunk_bytes();
  const Shape& chunk_shape = chain.spec().shape;  // a rectilinear grid's chunks have their own
  if (chain.stores_raw_bytes()) {
    if (encoded.size() != chunk_bytes) {
      fail_data_loss("bytes codec: chunk of {} elements of {} must be {} bytes, got {}",
                     checked_num_elements(chunk_shape), m.dtype.name(), chunk_bytes, encoded.size());
    }
    return encoded;  // stored as decoded: the value is the chunk
  }
  if (chain.decodes_into()) {
    Buffer decoded = Buffer::allocate(to_size(chunk_bytes));
    if (chain.decode_into(encoded.view(), decoded.mutable_view())) return decoded;
  }
  const NDBuffer chunk = chain.decode(encoded.view(), BufferPrototype::host());
  if (chunk.nbytes() != chunk_bytes || chunk.shape() != chunk_shape) {
    fail_data_loss("the codec chain decoded {} bytes of shape [{}], the chunk needs {} bytes of shape [{}]",
                   chunk.nbytes(), fmt::join(chunk.shape(), ", "), chunk_bytes, fmt::join(chunk_shape, ", "));
  }
  if (chunk.buffer().size() == chunk_bytes) return chunk.buffer();
  return Buffer::copy_of(ByteView(chunk.data(), to_size(chunk_bytes)));
}

}  // namespace

std::uint64_t decoding_fingerprint(const ArrayMetadata& m) {
  std::string text = fmt::format("v{} {} [{}] fill ", m.zarr_format, m.dtype.name(), fmt::join(m.chunk_shape, ","));
  for (const std::byte b : m.fill_value.bytes()) text += fmt::format("{:02x}", static_cast<unsigned>(b));
  text += " codecs ";
  if (m.codecs) text += m.codecs->to_json().dump();
  return fingerprint_of(text);
}

ReadCache::ReadCache(const Array& array) {
  const std::shared_ptr<detail::ArrayCacheState>& state = array.cache_state_;
  use(array, state && state->own ? state->own.get() : process_chunk_cache(current_config().cache.host_bytes));
}

ReadCache::ReadCache(const Array& array, ChunkCache* cache) { use(array, cache); }

void ReadCache::use(const Array& array, ChunkCache* cache) {
  if (cache == nullptr || !array.cache_state_) return;
  detail::ArrayCacheState& state = *array.cache_state_;
  std::call_once(state.fingerprinted, [&] { state.fingerprint = decoding_fingerprint(array.metadata()); });
  store_ = array.store()->cache_identity();
  view_ = ChunkCacheView{cache, store_, state.fingerprint};
}

bool read_chunk_task_from_cache(const ChunkReadRequest& r, const ChunkCacheView& cache, const std::string& key,
                                const ChunkTask& task) {
  const std::optional<CachedChunk> hit = cache.cache->find(cache.key(key));
  if (!hit) return false;
  place_task(r, task, *hit);
  cache.cache->count(1, 0);
  return true;
}

void read_chunk_task_cached(const ChunkReadRequest& r, const ChunkCacheView& cache, const std::string& key,
                            const ChunkTask& task) {
  const CachedChunk chunk = read_chunk_cached(r.store, r.metadata, cache, key, r.chain);
  place_task(r, task, chunk);
}

CachedChunk read_chunk_cached(Store& store, const ArrayMetadata& m, const ChunkCacheView& cache,
                              const std::string& key, const PreparedChain& chain) {
  const ChunkCache::Key k = cache.key(key);
  // Before the fetch: a write of the chunk from now on keeps this read's value out.
  const std::uint64_t ticket = cache.cache->ticket(k);
  if (std::optional<CachedChunk> hit = cache.cache->find(k)) {  // decoded meanwhile by another read
    cache.cache->count(1, 0);
    return std::move(*hit);
  }
  cache.cache->count(0, 1);
  CachedChunk chunk;
  if (std::optional<Buffer> encoded = store.get(key, BufferPrototype::host())) {
    chunk = CachedChunk{true, decode_whole_chunk(chain, m, std::move(*encoded))};
  }
  cache.cache->insert(k, chunk, ticket);
  return chunk;
}

}  // namespace zarrkit
