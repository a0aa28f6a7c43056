// Reading an array's selection into device memory: the driver that feeds the engine's plan
// of the request to the device's batches (device_batches.h). It plans the chunks of the
// request (engine/indexer.h), reads each batch's chunks from the store on the shared pool
// (straight into the pinned arena, or, on a GDS store whose chunks need no decoding, into
// device memory), and hands them to DeviceBatches.
#include "gpu/device_read.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <new>
#include <optional>

#include <fmt/format.h>

#include "core/checked_math.h"
#include "core/partial_chunk_codec.h"
#include "engine/cached_reads.h"
#include "engine/indexer.h"
#include "engine/node_io.h"
#include "gpu/batch_support.h"
#include "gpu/cuda_check.h"
#include "gpu/device_batches.h"
#include "gpu/device_scope.h"
#include "zarrkit/error.h"
#include "zarrkit/gpu.h"
#include "zarrkit/stores/gds_store.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit::gpu {

ReadStats& read_stats() {
  static ReadStats stats;
  return stats;
}

namespace {

// Fetch whole shards when at least this share of their inner chunks is wanted; otherwise
// the index and each wanted inner chunk as byte ranges.
constexpr double kWholeShardShare = 0.5;

class ArrayDeviceRead {
 public:
  ArrayDeviceRead(const Array& array, const Selection& selection, const NDView& out)
      : array_(array),
        cache_(array, device_chunk_cache(current_device(), current_config().cache.device_bytes)),
        m_(array.metadata()),
        partial_(m_.prepared_chain().partial()),
        plan_(m_.shape, m_.chunk_shape, selection),
        region_(expand_to_region(out, plan_.selection())) {
    // The device decodes chunks, or, where chunks are shards (a partial codec), their inner
    // chunks: the leaves of the plan. The metadata outlives the read, so its prepared chain
    // needs no owner here.
    std::shared_ptr<const PreparedChain> leaf(std::shared_ptr<void>(), &m_.prepared_chain());
    std::uint64_t leaves = plan_.num_tasks();
    if (partial_ != nullptr) {
      leaf = partial_->inner_chain();
      count_inner_chunks();
      leaves = inner_first_.back();
    }
    batches_ = std::make_unique<DeviceBatches>(leaf, m_.fill_value.bytes(), leaves,
                                               [this](const DeviceChunk& c) { return describe(c); });
    // Chunks stored as they are laid out (no codec but bytes and transposes) need nothing
    // parsed on the host: a GDS store reads them straight into device memory.
    if (batches_->settings().gds_direct && partial_ == nullptr && batches_->chain().stored_as_laid_out()) {
      gds_ = dynamic_cast<GdsStore*>(array.store().get());
    }
    // The device's decoded-chunk cache: what the device decodes is kept there once its
    // batch is done (in the stored layout the scatter reads, so a hit is a direct chunk).
    if (cache_) {
      batches_->on_kept = [this](const DeviceChunk& c, Buffer decoded) {
        const std::string store_key = join_key(array_.path(), c.key);
        cache_.view().cache->insert(cache_key(store_key, c), CachedChunk{true, std::move(decoded)}, c.cache_ticket);
      };
    }
    // Chunks read by the store, and shards (prepare_shards fetches, for each batch, what
    // that batch needs of its shards): a batch's host phase needs nothing from another's.
    if (gds_ == nullptr) batches_->allow_concurrent_host_phases();
    if (gds_ != nullptr) {
      batches_->reread_direct = [this](const DeviceChunk& c) {
        auto bytes = array_.store()->get(join_key(array_.path(), c.key));
        if (!bytes) fail_data_loss("the chunk was deleted while it was read");
        return std::move(*bytes);
      };
    }
  }

  void run() {
    batches_->run([this](DeviceBatches::Batch& batch) {
      if (partial_ != nullptr) {
        prepare_shards(batch);
      } else if (gds_ != nullptr) {
        prepare_direct(batch);
      } else {
        prepare(batch);
      }
    });
  }

 private:
  std::string describe(const std::string& key) const {
    return fmt::format("array '{}' in {}, chunk '{}'", display_path(array_.path()), array_.store()->describe(), key);
  }
  std::string describe(const DeviceChunk& c) const {
    if (partial_ == nullptr) return describe(c.key);
    return fmt::format("array '{}' in {}, shard '{}', inner chunk {} of its index", display_path(array_.path()),
                       array_.store()->describe(), c.key, c.ordinal);
  }

  // The device cache's key of chunk `c` (whose store key is `store_key`): the chunk, or its
  // inner chunk (c.ordinal) of the shard.
  ChunkCache::Key cache_key(const std::string& store_key, const DeviceChunk& c) const {
    return cache_.view().key(store_key, partial_ != nullptr ? c.ordinal : ChunkCache::kWholeChunk);
  }

  // A chunk the device cache holds: a direct chunk whose bytes are the cached copy (held
  // by the chunk until its batch is done), or the fill value.
  static void use_cached(DeviceChunk& c, CachedChunk hit) {
    read_stats().chunks_from_cache.fetch_add(1);
    if (!hit.stored) return;
    c.present = true;
    c.direct = true;
    c.direct_address = reinterpret_cast<std::uint64_t>(hit.bytes.data());
    c.cached = std::move(hit.bytes);
  }

  // Takes the chunk from the device cache where it is there (true); otherwise takes the
  // cache's ticket (before anything is fetched) and marks the chunk to be kept once decoded.
  bool from_cache(DeviceChunk& c) {
    if (!cache_) return false;
    ChunkCache& cache = *cache_.view().cache;
    const std::string store_key = join_key(array_.path(), c.key);
    const ChunkCache::Key key = cache_key(store_key, c);
    c.cache_ticket = cache.ticket(key);
    if (std::optional<CachedChunk> hit = cache.find(key)) {
      cache.count(1, 0);
      use_cached(c, std::move(*hit));
      return true;
    }
    cache.count(0, 1);
    c.keep = true;
    return false;
  }

  // A chunk found absent from the store: the cache remembers it (the fill value).
  void absent(const DeviceChunk& c) {
    if (!cache_ || !c.keep) return;
    const std::string store_key = join_key(array_.path(), c.key);
    cache_.view().cache->insert(cache_key(store_key, c), CachedChunk{}, c.cache_ticket);
  }

  // The batch's chunks read from the store on the pool, each processed as it arrives.
  void prepare(DeviceBatches::Batch& batch) {
    Store& store = *array_.store();
    shared_thread_pool().parallel_for(batch.chunks.size(), [&](std::size_t i) {
      DeviceChunk& c = batch.chunks[i];
      c.region = &region_;
      plan_.task(batch.first + i, c.task);
      c.runs = task_runs(c.task);
      c.key = m_.chunk_key(c.task.chunk_coords);
      try {
        if (from_cache(c)) return;
        auto encoded = store.get(join_key(array_.path(), c.key), batch.staging);
        if (!encoded) {
          read_stats().chunks_missing.fetch_add(1);
          absent(c);
          return;
        }
        batches_->process(c, static_cast<std::uint32_t>(i), batch.arena, std::move(*encoded));
      } catch (const Error& e) {
        rethrow_with_context(e, describe(c.key));
      } catch (const std::bad_alloc&) {
        fail_resource("{}: out of memory", describe(c.key));
      }
    });
  }

  // Sharded arrays: how many inner chunks each shard task touches (the partial codec says,
  // reading nothing), so that batches count inner chunks. inner_first_[t] is the index of
  // task t's first inner chunk among all.
  void count_inner_chunks() {
    const std::uint64_t tasks = plan_.num_tasks();
    std::vector<std::uint64_t> counts(to_size(tasks));
    shared_thread_pool().parallel_for(counts.size(), [&](std::size_t t) {
      ChunkTask task;
      plan_.task(t, task);
      counts[t] = partial_->select(task_runs(task), chunk_valid_extent(task, m_.chunk_shape, m_.shape)).chunks.size();
    });
    inner_first_.assign(counts.size() + 1, 0);
    for (std::size_t t = 0; t < counts.size(); ++t) inner_first_[t + 1] = inner_first_[t] + counts[t];
  }

  // Sharded arrays: the shards that hold the batch's inner chunks, each fetched once (whole,
  // or its index and the wanted inner chunks as byte ranges) and its inner chunks located by
  // the partial codec; then every inner chunk processed like a chunk.
  void prepare_shards(DeviceBatches::Batch& batch) {
    const std::uint64_t first = batch.first;
    const std::uint64_t end = first + batch.chunks.size();
    const auto task_of = [&](std::uint64_t leaf) {
      return static_cast<std::uint64_t>(std::upper_bound(inner_first_.begin(), inner_first_.end(), leaf) -
                                        inner_first_.begin() - 1);
    };
    const std::uint64_t first_task = task_of(first);
    const std::uint64_t last_task = task_of(end - 1);
    Store& store = *array_.store();
    shared_thread_pool().parallel_for(to_size(last_task - first_task + 1), [&](std::size_t k) {
      const std::uint64_t t = first_task + k;
      ChunkTask task;
      plan_.task(t, task);
      const std::string key = m_.chunk_key(task.chunk_coords);
      try {
        fetch_shard(batch, store, task, key, t);
      } catch (const Error& e) {
        rethrow_with_context(e, fmt::format("array '{}' in {}, shard '{}'", display_path(array_.path()),
                                            store.describe(), key));
      } catch (const std::bad_alloc&) {
        fail_resource("array '{}', shard '{}': out of memory", display_path(array_.path()), key);
      }
    });
    shared_thread_pool().parallel_for(batch.chunks.size(), [&](std::size_t i) {
      DeviceChunk& c = batch.chunks[i];
      if (!c.fetched) {
        read_stats().chunks_missing.fetch_add(1);
        return;
      }
      try {
        batches_->process(c, static_cast<std::uint32_t>(i), batch.arena, c.original);
      } catch (const Error& e) {
        rethrow_with_context(e, describe(c));
      } catch (const std::bad_alloc&) {
        fail_resource("{}: out of memory", describe(c));
      }
    });
  }

  // Shard task `t` of a batch: its inner chunks [begin, end) (those that fall in this batch)
  // get their geometry and, where stored, their bytes; those the device cache holds come
  // from there (when it holds all of them, the shard is not read at all).
  void fetch_shard(DeviceBatches::Batch& batch, Store& store, const ChunkTask& task, const std::string& key,
                   std::uint64_t t) {
    const std::uint64_t task_first = inner_first_[to_size(t)];
    const std::uint64_t task_count = inner_first_[to_size(t) + 1] - task_first;
    const std::uint64_t begin = std::max(batch.first, task_first) - task_first;
    const std::uint64_t end = std::min(batch.first + batch.chunks.size(), task_first + task_count) - task_first;
    if (begin >= end) return;
    const BlockRuns runs = task_runs(task);
    const Shape valid = chunk_valid_extent(task, m_.chunk_shape, m_.shape);
    const std::string store_key = join_key(array_.path(), key);
    auto chunk_of = [&](std::uint64_t k) -> DeviceChunk& { return batch.chunks[to_size(task_first + k - batch.first)]; };
    // Sets the geometry of inner chunk k from `owner`'s selection.
    auto place = [&](std::uint64_t k, const std::shared_ptr<LocatedChunks>& owner) {
      DeviceChunk& c = chunk_of(k);
      const InnerChunkRef& ref = owner->selection.chunks[to_size(k)];
      c.region = &region_;
      c.runs = ref.runs();
      c.runs_owner = owner;
      c.key = key;
      c.ordinal = ref.ordinal;
    };
    std::vector<char> cached(to_size(end - begin), 0);
    std::uint64_t wanted = end - begin;
    if (cache_) {
      auto selected = std::make_shared<LocatedChunks>();
      selected->selection = partial_->select(runs, valid);
      for (std::uint64_t k = begin; k < end; ++k) {
        place(k, selected);
        if (from_cache(chunk_of(k))) {
          cached[to_size(k - begin)] = 1;
          --wanted;
        }
      }
      if (wanted == 0) return;
    }
    auto located = std::make_shared<LocatedChunks>();
    std::optional<Buffer> value;
    const bool whole = static_cast<double>(wanted) >= kWholeShardShare * static_cast<double>(partial_->num_inner_chunks());
    if (whole) {
      value = store.get(store_key, batch.staging);
      if (value) {
        *located = partial_->locate(ChunkSource{&store, store_key, 0, value->size(), value->view()}, runs, valid);
      } else {
        located->selection = partial_->select(runs, valid);  // no shard: the fill value
      }
    } else {
      *located = partial_->locate(ChunkSource{&store, store_key, 0, std::nullopt, std::nullopt}, runs, valid);
    }
    if (located->selection.chunks.size() != task_count) {
      throw InternalError("the partial codec located another number of inner chunks than it selected");
    }
    // Inner chunks read as byte ranges: all of the batch's at once.
    std::vector<ByteRange> ranges;
    std::vector<std::uint64_t> ranged;
    if (!whole && located->stored) {
      for (std::uint64_t k = begin; k < end; ++k) {
        const InnerChunkBytes& b = located->bytes[to_size(k)];
        if (!b.stored || cached[to_size(k - begin)]) continue;
        ranges.push_back(ByteRange::range(b.offset, b.offset + b.nbytes));
        ranged.push_back(k);
      }
    }
    std::optional<std::vector<Buffer>> parts;
    if (!ranges.empty()) parts = store.get_ranges(store_key, ranges, batch.staging);
    for (std::uint64_t k = begin; k < end; ++k) {
      if (cached[to_size(k - begin)]) continue;
      place(k, located);
      DeviceChunk& c = chunk_of(k);
      const bool stored = located->stored && located->bytes[to_size(k)].stored;
      if (!stored) absent(c);
      if (whole && value && stored) {
        const InnerChunkBytes& b = located->bytes[to_size(k)];
        c.original = value->slice(to_size(b.offset), to_size(b.nbytes));  // checked by locate
        c.fetched = true;
      }
    }
    if (!parts) return;  // absent (deleted since the index was read): the fill value
    for (std::size_t r = 0; r < ranged.size(); ++r) {
      const std::uint64_t k = ranged[r];
      const InnerChunkBytes& b = located->bytes[to_size(k)];
      Buffer& bytes = (*parts)[r];
      if (bytes.size() != b.nbytes) {
        fail_data_loss("bytes [{}, {}) of the shard hold inner chunk {}, but the shard ends at byte {}", b.offset,
                       b.offset + b.nbytes, located->selection.chunks[to_size(k)].ordinal, b.offset + bytes.size());
      }
      DeviceChunk& c = chunk_of(k);
      c.original = std::move(bytes);
      c.fetched = true;
    }
  }

  // Chunks laid out as stored, on a GDS store: read straight into the direct area, one
  // slot per chunk; a value of another size than the chunk's goes the usual way (it is
  // decoded on the CPU or reported as the CPU path reports it).
  void prepare_direct(DeviceBatches::Batch& batch) {
    const std::uint64_t first = batch.first;
    const std::uint64_t count = batch.chunks.size();
    const BufferPrototype& staging = batch.staging;
    std::vector<std::string> keys(to_size(count));
    std::vector<char> cached(to_size(count), 0);  // from the device cache: not read
    shared_thread_pool().parallel_for(to_size(count), [&](std::size_t i) {
      DeviceChunk& c = batch.chunks[i];
      c.region = &region_;
      plan_.task(first + i, c.task);
      c.runs = task_runs(c.task);
      c.key = m_.chunk_key(c.task.chunk_coords);
      keys[i] = join_key(array_.path(), c.key);
      cached[i] = from_cache(c);
    });
    std::vector<std::size_t> read;  // the chunks read here, by their index in the batch
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (!cached[i]) read.push_back(i);
    }
    if (read.empty()) return;
    const std::uint64_t slot_bytes = batches_->slot_bytes();
    DeviceBuffer& direct = batch.device_area;
    direct.ensure(count * slot_bytes, batch.stream, "allocating device memory for chunk bytes");
    // Other streams (the store's) write the area: its allocation must be complete.
    check_cuda(cudaStreamSynchronize(batch.stream), "allocating device memory for chunk bytes");
    std::vector<std::string> read_keys;
    std::vector<MutableByteView> dests;
    read_keys.reserve(read.size());
    dests.reserve(read.size());
    for (const std::size_t i : read) {
      read_keys.push_back(keys[i]);
      dests.emplace_back(direct.ptr + i * slot_bytes, batches_->chunk_bytes());
    }
    const std::vector<std::optional<std::uint64_t>> sizes = gds_->read_values_into(read_keys, dests, MemoryKind::kDevice);
    std::vector<std::size_t> others;
    for (std::size_t r = 0; r < read.size(); ++r) {
      const std::size_t i = read[r];
      DeviceChunk& c = batch.chunks[i];
      if (!sizes[r]) {
        read_stats().chunks_missing.fetch_add(1);
        absent(c);
      } else if (*sizes[r] == batches_->chunk_bytes()) {
        c.present = true;
        c.direct = true;
        c.direct_address = reinterpret_cast<std::uint64_t>(direct.ptr) + i * slot_bytes;
        read_stats().chunks_decoded_on_gpu.fetch_add(1);
        read_stats().chunks_read_direct.fetch_add(1);
      } else {
        others.push_back(i);
      }
    }
    Store& store = *array_.store();
    shared_thread_pool().parallel_for(others.size(), [&](std::size_t k) {
      DeviceChunk& c = batch.chunks[others[k]];
      try {
        auto encoded = store.get(keys[others[k]], staging);
        if (!encoded) {
          read_stats().chunks_missing.fetch_add(1);
          absent(c);
          return;
        }
        batches_->process(c, static_cast<std::uint32_t>(others[k]), batch.arena, std::move(*encoded));
      } catch (const Error& e) {
        rethrow_with_context(e, describe(c));
      }
    });
  }

  const Array& array_;
  const ReadCache cache_;  // the device's decoded-chunk cache, where there is one
  const ArrayMetadata& m_;
  const PartialChunkCodec* partial_;  // where chunks are shards: the inner chunks are decoded
  const ChunkPlan plan_;  // the engine's plan of the request: chunks, or shards
  std::vector<std::uint64_t> inner_first_;  // sharded arrays: see count_inner_chunks
  const NDView region_;
  std::unique_ptr<DeviceBatches> batches_;
  GdsStore* gds_ = nullptr;  // the array's store, when its chunks are read straight into device memory
};

}  // namespace

void warm_up_reads(const Array& array, const Selection& selection) {
  require_device("warming up device reads");
  const ArrayMetadata& m = array.metadata();
  // Rectilinear grids are read on the host (read_into_device): nothing to size.
  if (m.dtype.is_variable_length() || m.dtype.size() == 0 || m.is_rectilinear()) return;
  // Sized as a read of the whole selection sizes its batches: for sharded arrays, by inner
  // chunks (as many as the shards selected hold, at most).
  const ChunkPlan plan(m.shape, m.chunk_shape, selection);
  std::shared_ptr<const PreparedChain> leaf(std::shared_ptr<void>(), &m.prepared_chain());
  std::uint64_t leaves = plan.num_tasks();
  if (const PartialChunkCodec* partial = m.prepared_chain().partial()) {
    leaf = partial->inner_chain();
    leaves = checked_mul(leaves, partial->num_inner_chunks(), "inner chunks of the selection");
  }
  DeviceBatches batches(leaf, m.fill_value.bytes(), leaves, [](const DeviceChunk& c) { return c.key; });
  // Sized as the read will be (ArrayDeviceRead: plain chunks not read by a GDS store).
  const bool direct = batches.settings().gds_direct && batches.chain().stored_as_laid_out() &&
                      dynamic_cast<const GdsStore*>(array.store().get()) != nullptr;
  if (!direct) batches.allow_concurrent_host_phases();
  batches.warm_up();
}

namespace {
void read_on_host_then_upload(const Array& array, const Selection& selection, const NDView& out) {
  Buffer host = Buffer::allocate(to_size(checked_nbytes(out.shape, out.dtype)), pinned_host_allocator());
  array.read_into(selection, NDView{host.data(), out.shape, NDView::c_strides(out.shape, out.dtype.size()), out.dtype,
                                    MemoryKind::kHost});
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "creating a CUDA stream");
  try {
    host_to_view(host.view(), out, stream);
  } catch (...) {
    cudaStreamDestroy(stream);
    throw;
  }
  cudaStreamDestroy(stream);
  read_stats().device_reads_on_cpu.fetch_add(1);
}
}  // namespace

void read_into_device(const Array& array, const Selection& selection, const NDView& out) {
  const ArrayMetadata& m = array.metadata();
  const std::string where = fmt::format("array '{}' in {}", display_path(array.path()), array.store()->describe());
  if (out.kind != MemoryKind::kDevice) {
    fail_invalid("{}: read_into_device needs a device view, got {} memory", where, memory_kind_name(out.kind));
  }
  require_device("reading into device memory");
  if (m.dtype.is_variable_length() || m.dtype.size() == 0) {
    fail_unsupported("{}: reading the variable-length type {} into device memory is not supported", where,
                     m.dtype.name());
  }
  try {
    // The output's device runs the read (an empty output: the current one).
    std::optional<ScopedDevice> its_device;
    if (out.num_elements() != 0) its_device.emplace(device_holding(out.data, where));
    if (m.is_rectilinear()) {
      // The device batches hold chunks of one shape; a rectilinear grid's chunks differ, so
      // the host reads (each chunk with the chain prepared for its own shape) and the values
      // cross once.
      read_on_host_then_upload(array, selection, out);
      return;
    }
    ArrayDeviceRead reader(array, selection, out);
    reader.run();
  } catch (const Error& e) {
    // Chunk errors already name the array and the key; others get the array here.
    if (std::string_view(e.what()).find(where) == std::string_view::npos) rethrow_with_context(e, where);
    throw;
  }
}

}  // namespace zarrkit::gpu
