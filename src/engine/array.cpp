// Array: opening and creating arrays, and running reads and writes chunk by chunk.
//
// A request is planned first (ChunkPlan: which chunks, which part of each, where it goes)
// and the chunk tasks then run on the shared thread pool. Each task owns one chunk key, so
// tasks never touch the same key or the same output elements. Chunks whose codec chain has
// a partial codec (PreparedChain::partial: sharding) are read and written in part through
// it; the others whole (chunk_read.h for reads).
#include "zarrkit/array.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "core/key_locks.h"
#include "core/partial_chunk_codec.h"
#include "core/strided_copy.h"
#include "engine/cached_reads.h"
#include "engine/chunk_read.h"
#include "engine/device_read_hook.h"
#include "engine/fetched_reads.h"
#include "engine/indexer.h"
#include "engine/node_io.h"
#include "engine/read_limits.h"
#include "engine/chunk_io.h"
#include "engine/stored_chunks.h"
#include "engine/task_copy.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {

void require_fixed_size(const DataType& dtype) {
  if (dtype.is_variable_length() || dtype.size() == 0) {
    fail_unsupported("arrays of the variable-length type {} have no fixed-size elements: use read_var and "
                     "write_var (vlen.h)",
                     dtype.name());
  }
}

// Reads whose output is at most this many bytes copy their cache hits on the calling thread.
constexpr std::uint64_t kCopyOnCallerBytes = std::uint64_t{4} << 20;

// Runs task(0..n-1) on the shared pool with at most `at_once` of them running at a time.
void run_at_most(std::size_t at_once, std::size_t n, const std::function<void(std::size_t)>& task) {
  ThreadPool& pool = shared_thread_pool();
  if (at_once >= pool.size() || at_once >= n) return pool.parallel_for(n, task);
  std::atomic<std::size_t> next{0};
  pool.parallel_for(at_once, [&](std::size_t) {
    for (std::size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) task(i);
  });
}

}  // namespace

Array::Array(std::shared_ptr<Store> store, std::string path, std::shared_ptr<const ArrayMetadata> m)
    : store_(std::move(store)),
      path_(std::move(path)),
      metadata_(std::move(m)),
      cache_state_(detail::make_array_cache_state(current_config())) {}

Array Array::open(std::shared_ptr<Store> store, std::string_view path_in, const CodecRegistry* registry) {
  if (!store) fail_invalid("Array::open: no store given");
  const std::string path = normalize_node_path(path_in);
  const CodecRegistry& codecs = registry != nullptr ? *registry : CodecRegistry::builtin();
  const std::string context = fmt::format("array '{}' in {}", display_path(path), store->describe());
  try {
    if (auto doc = read_json(*store, join_key(path, kZarrJson))) {
      if (declared_node_type(*doc) == "group") {
        fail_invalid("zarr.json describes a group, not an array");
      }
      auto m = std::make_shared<const ArrayMetadata>(parse_array_metadata_v3(*doc, codecs));
      return Array(std::move(store), path, std::move(m));
    }
    if (auto zarray = read_json(*store, join_key(path, kZarray))) {
      const auto zattrs = read_json(*store, join_key(path, kZattrs));
      auto m = std::make_shared<const ArrayMetadata>(parse_array_metadata_v2(*zarray, zattrs, codecs));
      return Array(std::move(store), path, std::move(m));
    }
    if (store->exists(join_key(path, kZgroup))) fail_invalid("there is a v2 group (.zgroup), not an array");
  } catch (const Error& e) {
    rethrow_with_context(e, context);
  } catch (const nlohmann::json::exception& e) {
    // A safety net: metadata of an unexpected shape must never escape as a JSON library error.
    fail_invalid("{}: malformed metadata: {}", context, e.what());
  }
  fail_not_found("no array at '{}' in {}: neither zarr.json nor .zarray exists there",
                 display_path(path), store->describe());
}

Array Array::create(std::shared_ptr<Store> store, std::string_view path_in,
                    const ArrayMetadata& metadata, bool overwrite, MetadataWrite when) {
  if (!store) fail_invalid("Array::create: no store given");
  const std::string path = normalize_node_path(path_in);
  try {
    if (metadata.zarr_format != 2 && metadata.zarr_format != 3) {
      fail_invalid("zarr_format must be 2 or 3, got {}", metadata.zarr_format);
    }
    validate_new_node_path(path);
    if (!metadata.codecs) fail_invalid("the metadata has no codec chain");
    if (metadata.chunk_shape.size() != metadata.shape.size()) {
      fail_invalid("chunk shape [{}] does not match shape [{}]", fmt::join(metadata.chunk_shape, ", "),
                   fmt::join(metadata.shape, ", "));
    }
    for (auto c : metadata.chunk_shape) {
      if (c == 0) fail_invalid("chunk shape [{}] has a zero", fmt::join(metadata.chunk_shape, ", "));
    }
    if (metadata.rectilinear_grid) {
      if (metadata.zarr_format != 3) fail_invalid("rectilinear chunk grids are a Zarr v3 feature");
      metadata.rectilinear_grid->check_covers(metadata.shape);
      if (metadata.rectilinear_grid->largest_chunk() != metadata.chunk_shape) {
        fail_invalid("chunk_shape must be the rectilinear grid's largest chunk");
      }
    }
    if (!store->capabilities().writable) fail_invalid("the store is read-only");
    if (const auto existing = probe_node(*store, path)) {
      if (!overwrite) {
        fail_invalid("a {} (zarr v{}) already exists there; pass overwrite to replace it",
                     existing->type == NodeType::kArray ? "array" : "group", existing->zarr_format);
      }
      erase_node(*store, path);
    }
    ensure_ancestor_groups(*store, path, metadata.zarr_format);
    Array array(store, path, std::make_shared<const ArrayMetadata>(metadata));
    if (when == MetadataWrite::kFirst) array.write_metadata();
    return array;
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("cannot create array '{}' in {}", display_path(path), store->describe()));
  }
}

void Array::write_metadata() const {
  const ArrayMetadata& m = *metadata_;
  if (m.zarr_format == 3) {
    write_json(*store_, join_key(path_, kZarrJson), array_metadata_to_v3_json(m));
  } else {
    // zarr-python writes .zattrs for every v2 node, "{}" when there are no attributes.
    write_json(*store_, join_key(path_, kZarray), array_metadata_to_v2_json(m));
    write_json(*store_, join_key(path_, kZattrs), m.attributes);
  }
}

Shape Array::selection_shape(const Selection& selection) const {
  return normalize_selection(selection, metadata_->shape).output_shape;
}

NDBuffer Array::read(const Selection& selection) const {
  require_fixed_size(dtype());
  Shape shape = selection_shape(selection);
  // No allocator can satisfy more than PTRDIFF_MAX bytes; refuse before asking (a size
  // near 2^64 could otherwise wrap around in an allocator's alignment arithmetic).
  std::optional<std::uint64_t> nbytes = dtype().size();
  for (auto d : shape) nbytes = nbytes ? try_mul(*nbytes, d) : std::nullopt;
  if (!nbytes || *nbytes > static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max())) {
    fail_resource("array '{}' in {}: reading [{}] of {} needs more memory than can be allocated",
                  display_path(path_), store_->describe(), fmt::join(shape, ", "), dtype().name());
  }
  // The result holds native-order elements: drop the v2 storage byte order tag.
  NDBuffer out = NDBuffer::allocate(std::move(shape), dtype().with_storage_endian(std::nullopt),
                                    default_prototype());
  read_into(selection, out.view());
  return out;
}

void Array::read_into(const Selection& selection, const NDView& out) const {
  const ArrayMetadata& m = *metadata_;
  require_fixed_size(m.dtype);
  if (!(out.dtype == m.dtype)) {
    fail_invalid("cannot read array '{}' of {} into a buffer of {}", display_path(path_), m.dtype.name(),
                 out.dtype.name());
  }
  if (!is_host_accessible(out.kind)) return read_into_device(*this, selection, out);  // the GPU path
  const ChunkPlan plan(m.shape, m.chunk_grid(), selection);
  const NDView region = expand_to_region(out, plan.selection());
  // A v2 null fill value reads as zeros; FillValue::null already holds zero bytes.
  if (m.fill_value.bytes().size() != m.dtype.size()) {
    fail_invalid("array '{}': the fill value has {} bytes, {} needs {}", display_path(path_),
                 m.fill_value.bytes().size(), m.dtype.name(), m.dtype.size());
  }
  // Set for chains read in part (sharding): see core/partial_chunk_codec.h.
  const PartialChunkCodec* const partial = m.prepared_chain().partial();
  const PartialIoSettings partial_settings = partial != nullptr ? PartialIoSettings::current() : PartialIoSettings{};
  // Large outputs: pages faulted in just before they are written, tasks taken so that
  // threads write to pages of their own where they can (output_faults.h).
  const std::size_t threads = shared_thread_pool().size();
  OutputFaults faults(out, threads);
  const std::string context = fmt::format("array '{}' in {}", display_path(path_), store_->describe());
  // Fewer chunks decode at once where the request's memory budget asks for it.
  const std::size_t at_once =
      plan.num_tasks() == 0 ? threads
                            : chunks_decoded_at_once(decoded_unit_bytes(m.prepared_chain()), threads, current_config(),
                                                     context, m.chunk_key(plan.task(0).chunk_coords));
  // A sparse array's absent chunks are filled at once, not asked for one by one.
  const std::optional<std::vector<std::uint64_t>> stored = stored_tasks_if_sparse(*store_, path_, m, plan);
  if (stored) fill_strided(region.shape, region.data, region.byte_strides, m.fill_value.bytes());
  // With a decoded-chunk cache, the chunks it holds are copied from it first; the others
  // are read below, through it (cached_reads.h).
  const ReadCache cache(*this);
  std::optional<std::vector<std::uint64_t>> uncached;
  if (cache) {
    ChunkReadRequest request(*store_, m, region);
    request.faults = &faults;
    const std::size_t count = stored ? stored->size() : to_size(plan.num_tasks());
    std::vector<char> hit(count, 0);
    auto look_up = [&](std::size_t index) {
      ChunkTask task;
      plan.task(stored ? (*stored)[index] : index, task);
      const std::string key = join_key(path_, m.chunk_key(task.chunk_coords));
      // A rectilinear grid's chunks differ in shape: each has the chain prepared for its own.
      const PreparedChain* const own_chain = m.is_rectilinear() ? &m.prepared_chain(task.chunk_coords) : nullptr;
      const PartialChunkCodec* const task_partial = own_chain != nullptr ? own_chain->partial() : partial;
      if (task_partial != nullptr) {
        if (faults.active()) {
          const auto [begin, end] = OutputFaults::task_span(task, region);
          faults.before_write(begin, end);
        }
        const PartialRequest from_cache{*store_, m.shape, region, partial_settings, cache.view()};
        hit[index] = task_partial->read_from_cache(from_cache, key, task);
      } else if (own_chain != nullptr) {
        ChunkReadRequest own_request(*store_, m, region, *own_chain);
        own_request.faults = &faults;
        hit[index] = read_chunk_task_from_cache(own_request, cache.view(), key, task);
      } else {
        hit[index] = read_chunk_task_from_cache(request, cache.view(), key, task);
      }
    };
    // A hit is a copy out of memory. For a small output (a window, a patch) the whole read
    // is a fraction of a millisecond, and waking the pool's threads for it costs more than
    // they take off: on a busy machine a woken thread may wait for a core longer than the
    // copy lasts, and the caller waits for it.
    std::uint64_t out_bytes = m.dtype.size();
    for (const std::uint64_t d : out.shape) out_bytes *= d;
    if (count == 1 || out_bytes <= kCopyOnCallerBytes) {
      for (std::size_t index = 0; index < count; ++index) look_up(index);
    } else {
      shared_thread_pool().parallel_for(count, look_up);
    }
    uncached.emplace();
    for (std::size_t index = 0; index < count; ++index) {
      if (!hit[index]) uncached->push_back(stored ? (*stored)[index] : index);
    }
  }
  const std::vector<std::uint64_t>* const subset = uncached ? &*uncached : stored ? &*stored : nullptr;
  auto plan_index = [&](std::size_t index) -> std::uint64_t { return subset != nullptr ? (*subset)[index] : index; };
  const std::size_t n = subset != nullptr ? subset->size() : to_size(plan.num_tasks());
  if (cache && n == 0) return;  // everything came from the cache

  auto read_task = [&](const ChunkReadRequest& request, std::size_t index) {
    ChunkTask task;
    plan.task(plan_index(index), task);
    const std::string key = m.chunk_key(task.chunk_coords);
    try {
      // A rectilinear grid's chunks differ in shape: each has the chain prepared for its own.
      const PreparedChain* const own_chain = m.is_rectilinear() ? &m.prepared_chain(task.chunk_coords) : nullptr;
      const PartialChunkCodec* const task_partial = own_chain != nullptr ? own_chain->partial() : partial;
      if (task_partial != nullptr) {
        if (request.faults != nullptr && request.faults->active()) {
          const auto [begin, end] = OutputFaults::task_span(task, region);
          request.faults->before_write(begin, end);
        }
        return task_partial->read(PartialRequest{request.store, m.shape, region, partial_settings, cache.view()},
                                  join_key(path_, key), task);
      }
      if (own_chain != nullptr) {
        ChunkReadRequest own_request(request.store, m, region, *own_chain);
        own_request.faults = request.faults;
        if (cache) return read_chunk_task_cached(own_request, cache.view(), join_key(path_, key), task);
        return read_chunk_task(own_request, join_key(path_, key), task);
      }
      if (cache) return read_chunk_task_cached(request, cache.view(), join_key(path_, key), task);
      read_chunk_task(request, join_key(path_, key), task);  // chunk_read.h: straight into `region` where it can
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("array '{}' in {}, chunk '{}'", display_path(path_),
                                          store_->describe(), key));
    } catch (const std::bad_alloc&) {
      fail_resource("array '{}' in {}, chunk '{}': out of memory", display_path(path_),
                    store_->describe(), key);
    }
  };
  if (store_->capabilities().batched_gets) {
    // Whole chunks and whole shards are fetched in batches and read as they arrive
    // (fetched_reads.h); a chunk read in part (a shard) reads its index and inner chunks itself.
    auto key_of = [&](std::size_t index) {
      ChunkTask task;
      plan.task(plan_index(index), task);
      if (partial != nullptr && !task.covers_whole_chunk) return std::string();
      return join_key(path_, m.chunk_key(task.chunk_coords));
    };
    faults.fault_all();  // fetched chunks are read in the order they arrive
    return read_fetched_as_they_arrive(store_, m, region, n, context, key_of, read_task);
  }
  ChunkReadRequest request(*store_, m, region);
  request.faults = &faults;
  if (stored) {
    // The stored chunks only, in order; the output is already filled (and faulted in).
    request.faults = nullptr;
    return run_at_most(at_once, n, [&](std::size_t i) { read_task(request, i); });
  }
  if (subset != nullptr) return run_at_most(at_once, n, [&](std::size_t i) { read_task(request, i); });
  const ReadOrder order = plan_read_order(plan, out, threads);
  run_at_most(at_once, n, [&](std::size_t i) { read_task(request, order.task(i, n)); });
}

void Array::write(const Selection& selection, const NDView& data) {
  const ArrayMetadata& m = *metadata_;
  require_fixed_size(m.dtype);
  if (!(data.dtype == m.dtype)) {
    fail_invalid("cannot write a buffer of {} to array '{}' of {}", data.dtype.name(), display_path(path_),
                 m.dtype.name());
  }
  if (!is_host_accessible(data.kind)) return write_from_device(*this, selection, data);  // the GPU path
  const ChunkPlan plan(m.shape, m.chunk_grid(), selection);
  const NDView input = broadcast_to_region(data, plan.selection());
  const std::size_t itemsize = m.dtype.size();
  if (m.fill_value.bytes().size() != itemsize) {
    fail_invalid("array '{}': the fill value has {} bytes, {} needs {}", display_path(path_),
                 m.fill_value.bytes().size(), m.dtype.name(), itemsize);
  }
  // Settings are per thread (ScopedConfig): read them here, not inside the pool's workers.
  const bool write_empty_chunks = current_config().write_empty_chunks;
  const BufferPrototype host = BufferPrototype::host();
  // Set for chains written in part (sharding): see core/partial_chunk_codec.h.
  const PartialChunkCodec* const partial = m.prepared_chain().partial();
  const PartialIoSettings partial_settings = partial != nullptr ? PartialIoSettings::current() : PartialIoSettings{};
  const std::string store_name = store_->describe();  // names the write locks (key_locks.h)
  // A large write of a sparse or new array would otherwise erase every absent chunk it
  // leaves as the fill value, one by one: those known to be absent are left alone.
  const std::optional<std::vector<std::uint64_t>> stored =
      !write_empty_chunks && partial == nullptr ? stored_tasks_for_erase(*store_, path_, m, plan) : std::nullopt;
  auto may_be_stored = [&](std::uint64_t index) {
    return !stored || std::binary_search(stored->begin(), stored->end(), index);
  };

  auto run = [&](std::size_t index) {
    ChunkTask task;
    plan.task(index, task);
    const std::string key = m.chunk_key(task.chunk_coords);
    const std::string store_key = join_key(path_, key);
    try {
      // The chain of this chunk's shape (one for every chunk of a regular grid).
      const PreparedChain& chain = m.prepared_chain(task.chunk_coords);
      const Shape& chunk_shape = chain.spec().shape;
      const std::span<const std::int64_t> chunk_c_strides = chain.strides();
      const std::uint64_t chunk_bytes = chain.chunk_bytes();
      if (partial != nullptr) {
        return chain.partial()->write(PartialRequest{*store_, m.shape, input, partial_settings}, store_key, task);
      }
      NDBuffer chunk;
      if (!task.covers_whole_chunk) {
        // Written in part: the old chunk is read, merged and written back so that concurrent
        // writes to other parts of it lose no update: under the key's lock among this
        // process's threads, and the store's update (Store::update: a lock among processes,
        // or a conditional write retried with the newer value).
        const std::lock_guard read_modify_write(key_write_mutex(store_name, store_key));
        store_->update(store_key, [&](std::optional<Buffer> existing) -> std::optional<Buffer> {
          NDBuffer merged;
          if (existing) {
            // The decoded buffer is ours: codecs return fresh memory.
            merged = chain.decode(existing->view(), host);
            if (merged.nbytes() != chunk_bytes || merged.shape() != chunk_shape) {
              fail_data_loss("the codec chain decoded {} bytes, the chunk needs {}", merged.nbytes(), chunk_bytes);
            }
          } else {
            merged = NDBuffer::filled(chunk_shape, m.dtype, m.fill_value, host);
          }
          copy_region_to_chunk(task, input.data, input.byte_strides, merged.data(), chunk_c_strides, itemsize);
          // zarr-python does not store chunks that hold only the fill value (see below).
          if (!write_empty_chunks && all_equal_fill(merged.buffer().view(), m.dtype, m.fill_value)) return std::nullopt;
          return chain.encode(merged);
        });
        return;
      }
      if (task.is_entire_chunk && region_matches_chunk_layout(task, input.byte_strides, chunk_c_strides)) {
        const std::byte* src = input.data + task_region_offset(task, input.byte_strides);
        // The caller's block already is the chunk: encode it in place, without a copy.
        chunk = NDBuffer(Buffer::wrap(nullptr, const_cast<std::byte*>(src), to_size(chunk_bytes)),
                         chunk_shape, m.dtype);
      } else {
        if (task.is_entire_chunk) {
          chunk = NDBuffer::allocate(chunk_shape, m.dtype, host);
        } else {
          // A ragged edge chunk: the padding past the array's edge gets the fill value.
          chunk = NDBuffer::filled(chunk_shape, m.dtype, m.fill_value, host);
        }
        copy_region_to_chunk(task, input.data, input.byte_strides, chunk.data(), chunk_c_strides, itemsize);
      }
      // zarr-python does not store chunks that hold only the fill value (and removes an
      // existing one), unless write_empty_chunks is set.
      if (!write_empty_chunks && all_equal_fill(chunk.buffer().view(), m.dtype, m.fill_value)) {
        if (may_be_stored(index)) store_->erase(store_key);
        return;
      }
      const Buffer encoded = chain.encode(chunk);
      store_->set(store_key, encoded.view());
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("array '{}' in {}, chunk '{}'", display_path(path_),
                                          store_->describe(), key));
    } catch (const std::bad_alloc&) {
      fail_resource("array '{}' in {}, chunk '{}': out of memory", display_path(path_),
                    store_->describe(), key);
    }
  };
  shared_thread_pool().parallel_for(to_size(plan.num_tasks()), run);
}

void Array::set_attributes(const nlohmann::json& attributes) {
  if (!attributes.is_object()) fail_invalid("attributes must be a JSON object, got {}", attributes.type_name());
  auto updated = std::make_shared<ArrayMetadata>(*metadata_);
  updated->attributes = attributes;
  try {
    if (updated->zarr_format == 3) {
      write_json(*store_, join_key(path_, kZarrJson), array_metadata_to_v3_json(*updated));
    } else {
      write_json(*store_, join_key(path_, kZattrs), attributes);
    }
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("array '{}' in {}: writing attributes", display_path(path_),
                                        store_->describe()));
  }
  metadata_ = std::move(updated);
}

StorageInfo Array::storage_info() const {
  const ArrayMetadata& m = *metadata_;
  StorageInfo info;
  info.chunks_total = m.num_chunks();
  if (!m.dtype.is_variable_length()) info.bytes_logical = checked_nbytes(m.shape, m.dtype);
  for (const ListedChunk& chunk : list_chunks(*store_, path_, m)) {
    if (const auto size = store_->size(chunk.key)) {
      ++info.chunks_stored;
      info.bytes_stored += *size;
    }
  }
  return info;
}

}  // namespace zarrkit
