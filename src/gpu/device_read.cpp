// Reading an array's selection into device memory: the driver that feeds the engine's plan
// of the request to the device's batches (device_batches.h). It plans the chunks of the
// request (engine/indexer.h), reads each batch's chunks from the store on the shared pool
// (straight into the pinned arena, or, on a GDS store whose chunks need no decoding, into
// device memory), and hands them to DeviceBatches.
#include "gpu/device_read.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <optional>

#include <fmt/format.h>

#include "core/checked_math.h"
#include "engine/indexer.h"
#include "engine/node_io.h"
#include "gpu/batch_support.h"
#include "gpu/cuda_check.h"
#include "gpu/device_batches.h"
#include "gpu/sharded_plan.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/gds_store.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit::gpu {

ReadStats& read_stats() {
  static ReadStats stats;
  return stats;
}

namespace {
std::atomic<std::uint64_t> g_batch_budget{256ull << 20};
std::atomic<std::size_t> g_pipeline_depth{4};
}

void set_batch_budget(std::uint64_t bytes) { g_batch_budget.store(std::max<std::uint64_t>(bytes, 1)); }
std::uint64_t batch_budget() { return g_batch_budget.load(); }
void set_pipeline_depth(std::size_t batches) { g_pipeline_depth.store(std::clamp<std::size_t>(batches, 1, 8)); }
std::size_t pipeline_depth() { return g_pipeline_depth.load(); }

namespace {
std::atomic<bool>& nvcomp_switch() {
  static std::atomic<bool> enabled{[] {
    const char* v = std::getenv("ZARRKIT_NVCOMP_DECODE");
    return v != nullptr && std::string_view(v) == "1";
  }()};
  return enabled;
}
}  // namespace

namespace {
std::atomic<std::uint64_t> g_nvcomp_min_chunks{kNvcompMinChunks};
}

namespace {
std::atomic<bool>& gds_direct_switch() {
  static std::atomic<bool> enabled{[] {
    const char* v = std::getenv("ZARRKIT_GDS_DIRECT");
    return v == nullptr || std::string_view(v) != "0";
  }()};
  return enabled;
}
}  // namespace

void set_gds_direct(bool enabled) { gds_direct_switch().store(enabled); }
bool gds_direct_enabled() { return gds_direct_switch().load(); }

void set_nvcomp_decode(bool enabled, std::uint64_t min_chunks) {
  g_nvcomp_min_chunks.store(std::max<std::uint64_t>(min_chunks, 1));
  nvcomp_switch().store(enabled);
}
bool nvcomp_decode_enabled() { return nvcomp_switch().load(); }
std::uint64_t nvcomp_min_chunks() { return g_nvcomp_min_chunks.load(); }

namespace {

class ArrayDeviceRead {
 public:
  ArrayDeviceRead(const Array& array, const Selection& selection, const NDView& out)
      : array_(array),
        m_(array.metadata()),
        sharded_(plan_sharded_read(m_)),
        grid_(sharded_ ? sharded_->inner : m_),
        plan_(m_.shape, grid_.chunk_shape, selection),
        region_(expand_to_region(out, plan_.selection())) {
    batches_ = std::make_unique<DeviceBatches>(*grid_.codecs, grid_.chunk_spec(), m_.fill_value.bytes(),
                                               plan_.num_tasks(), [this](const DeviceChunk& c) { return describe(c); });
    // Chunks stored as they are laid out (no codec but bytes and transposes) need nothing
    // parsed on the host: a GDS store reads them straight into device memory.
    if (gds_direct_enabled() && !sharded_ && batches_->chain().stored_as_laid_out()) {
      gds_ = dynamic_cast<GdsStore*>(array.store().get());
    }
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
      if (sharded_) {
        prepare_sharded(batch);
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
    if (!sharded_) return describe(c.key);
    return fmt::format("array '{}' in {}, shard '{}', inner chunk {} of its index", display_path(array_.path()),
                       array_.store()->describe(), c.key, c.ordinal);
  }

  // The batch's chunks read from the store on the pool, each processed as it arrives.
  void prepare(DeviceBatches::Batch& batch) {
    Store& store = *array_.store();
    shared_thread_pool().parallel_for(batch.chunks.size(), [&](std::size_t i) {
      DeviceChunk& c = batch.chunks[i];
      c.region = &region_;
      plan_.task(batch.first + i, c.task);
      c.key = m_.chunk_key(c.task.chunk_coords);
      try {
        auto encoded = store.get(join_key(array_.path(), c.key), batch.staging);
        if (!encoded) {
          read_stats().chunks_missing.fetch_add(1);
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

  // Sharded arrays: the batch's inner chunks grouped by shard; each shard fetched once
  // (whole, or its index and the wanted inner chunks as ranges), then every inner chunk
  // processed like a chunk.
  void prepare_sharded(DeviceBatches::Batch& batch) {
    const std::uint64_t first = batch.first;
    const std::uint64_t count = batch.chunks.size();
    const BufferPrototype& staging = batch.staging;
    const ShardedRead& sh = *sharded_;
    struct ShardFetch {
      std::string key;
      std::vector<std::uint32_t> chunks;
    };
    std::vector<ShardFetch> shards;
    std::map<std::vector<std::uint64_t>, std::uint32_t> shard_of;
    shared_thread_pool().parallel_for(to_size(count), [&](std::size_t i) {
      batch.chunks[i].region = &region_;
      plan_.task(first + i, batch.chunks[i].task);
    });
    for (std::uint32_t i = 0; i < count; ++i) {
      DeviceChunk& c = batch.chunks[i];
      InnerChunkPlace place = place_inner_chunk(sh, c.task.chunk_coords);
      auto [it, added] = shard_of.try_emplace(std::move(place.shard_coords), static_cast<std::uint32_t>(shards.size()));
      if (added) shards.push_back({m_.chunk_key(it->first), {}});
      shards[it->second].chunks.push_back(i);
      c.group = it->second;
      c.ordinal = place.ordinal;
      c.key = shards[it->second].key;
    }
    Store& store = *array_.store();
    const ShardingCodec& codec = *sh.codec;
    const ShardLayout& layout = sh.layout;
    shared_thread_pool().parallel_for(shards.size(), [&](std::size_t s) {
      const ShardFetch& shard = shards[s];
      const std::string key = join_key(array_.path(), shard.key);
      try {
        const bool whole = static_cast<double>(shard.chunks.size()) >=
                           kWholeShardShare * static_cast<double>(layout.num_inner_chunks);
        if (whole) {
          const auto value = store.get(key, staging);
          if (!value) return;  // no shard: every inner chunk is the fill value
          if (value->size() < layout.index_size) {
            fail_data_loss("the shard has {} bytes, its index alone takes {}", value->size(), layout.index_size);
          }
          const ByteView all = value->view();
          const ByteView index = codec.index_location() == ShardIndexLocation::kEnd
                                     ? all.subspan(all.size() - to_size(layout.index_size))
                                     : all.subspan(0, to_size(layout.index_size));
          const std::vector<ShardIndexEntry> entries = codec.decode_index(index, layout, value->size());
          for (const std::uint32_t i : shard.chunks) {
            DeviceChunk& c = batch.chunks[i];
            const ShardIndexEntry& e = entries[to_size(c.ordinal)];
            if (e.is_empty()) continue;
            c.original = value->slice(to_size(e.offset), to_size(e.nbytes));  // checked by decode_index
            c.fetched = true;
          }
          return;
        }
        const auto index = store.get(key, BufferPrototype::host(), codec.index_byte_range(layout));
        if (!index) return;
        if (index->size() != layout.index_size) {
          fail_data_loss("the shard's index has {} bytes, {} expected", index->size(), layout.index_size);
        }
        const std::vector<ShardIndexEntry> entries = codec.decode_index(index->view(), layout, std::nullopt);
        for (const std::uint32_t i : shard.chunks) {
          DeviceChunk& c = batch.chunks[i];
          const ShardIndexEntry& e = entries[to_size(c.ordinal)];
          if (e.is_empty()) continue;
          auto bytes = store.get(key, staging, ByteRange::range(e.offset, e.offset + e.nbytes));
          if (!bytes) continue;  // deleted since the index was read: the fill value
          if (bytes->size() != e.nbytes) {
            fail_data_loss("bytes [{}, {}) of the shard hold inner chunk {}, but the shard ends at byte {}", e.offset,
                           e.offset + e.nbytes, c.ordinal, e.offset + bytes->size());
          }
          c.original = std::move(*bytes);
          c.fetched = true;
        }
      } catch (const Error& e) {
        rethrow_with_context(e, fmt::format("array '{}' in {}, shard '{}'", display_path(array_.path()),
                                            array_.store()->describe(), shard.key));
      } catch (const std::bad_alloc&) {
        fail_resource("array '{}', shard '{}': out of memory", display_path(array_.path()), shard.key);
      }
    });
    shared_thread_pool().parallel_for(to_size(count), [&](std::size_t i) {
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

  // Chunks laid out as stored, on a GDS store: read straight into the direct area, one
  // slot per chunk; a value of another size than the chunk's goes the usual way (it is
  // decoded on the CPU or reported as the CPU path reports it).
  void prepare_direct(DeviceBatches::Batch& batch) {
    const std::uint64_t first = batch.first;
    const std::uint64_t count = batch.chunks.size();
    const BufferPrototype& staging = batch.staging;
    std::vector<std::string> keys(to_size(count));
    shared_thread_pool().parallel_for(to_size(count), [&](std::size_t i) {
      DeviceChunk& c = batch.chunks[i];
      c.region = &region_;
      plan_.task(first + i, c.task);
      c.key = m_.chunk_key(c.task.chunk_coords);
      keys[i] = join_key(array_.path(), c.key);
    });
    const std::uint64_t slot_bytes = batches_->slot_bytes();
    DeviceBuffer& direct = batch.device_area;
    direct.ensure(count * slot_bytes, batch.stream, "allocating device memory for chunk bytes");
    // Other streams (the store's) write the area: its allocation must be complete.
    check_cuda(cudaStreamSynchronize(batch.stream), "allocating device memory for chunk bytes");
    std::vector<MutableByteView> dests;
    dests.reserve(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) dests.emplace_back(direct.ptr + i * slot_bytes, batches_->chunk_bytes());
    const std::vector<std::optional<std::uint64_t>> sizes = gds_->read_values_into(keys, dests, MemoryKind::kDevice);
    std::vector<std::size_t> others;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      DeviceChunk& c = batch.chunks[i];
      if (!sizes[i]) {
        read_stats().chunks_missing.fetch_add(1);
      } else if (*sizes[i] == batches_->chunk_bytes()) {
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
          return;
        }
        batches_->process(c, static_cast<std::uint32_t>(others[k]), batch.arena, std::move(*encoded));
      } catch (const Error& e) {
        rethrow_with_context(e, describe(c));
      }
    });
  }

  const Array& array_;
  const ArrayMetadata& m_;
  const std::optional<ShardedRead> sharded_;
  const ArrayMetadata& grid_;  // the chunk grid and chain the device decodes: m_, or its inner chunks
  const ChunkPlan plan_;
  const NDView region_;
  std::unique_ptr<DeviceBatches> batches_;
  GdsStore* gds_ = nullptr;  // the array's store, when its chunks are read straight into device memory
};

}  // namespace

void warm_up_reads(const Array& array, const Selection& selection) {
  require_device("warming up device reads");
  const ArrayMetadata& m = array.metadata();
  if (m.dtype.is_variable_length() || m.dtype.size() == 0) return;
  const std::optional<ShardedRead> sharded = plan_sharded_read(m);
  const ArrayMetadata& grid = sharded ? sharded->inner : m;
  const ChunkPlan plan(m.shape, grid.chunk_shape, selection);
  DeviceBatches batches(*grid.codecs, grid.chunk_spec(), m.fill_value.bytes(), plan.num_tasks(),
                        [](const DeviceChunk& c) { return c.key; });
  batches.warm_up();
}

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
    ArrayDeviceRead reader(array, selection, out);
    reader.run();
  } catch (const Error& e) {
    // Chunk errors already name the array and the key; others get the array here.
    if (std::string_view(e.what()).find(where) == std::string_view::npos) rethrow_with_context(e, where);
    throw;
  }
}

}  // namespace zarrkit::gpu
