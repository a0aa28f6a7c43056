#include "gpu/device_read.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "engine/indexer.h"
#include "engine/node_io.h"
#include "gpu/batch_support.h"
#include "gpu/chunk_plan.h"
#include "gpu/cuda_check.h"
#include "gpu/device_codecs.cuh"
#include "gpu/device_settings.h"
#include "gpu/kernels.h"
#include "gpu/nvcomp_runtime.h"
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
// The largest staging a batch has needed so far (a starting size for later requests).
std::atomic<std::uint64_t> g_arena_hint{16u << 20};
}

namespace {

struct HostChunk {
  ChunkTask task;
  std::string key;  // the chunk's key; for an inner chunk, its shard's
  std::uint32_t shard = 0;      // sharded arrays: the batch's shard this inner chunk is in
  std::uint64_t ordinal = 0;    // and its place in that shard's index
  bool fetched = false;         // sharded arrays: `original` holds the inner chunk's bytes
  bool nvcomp = false;          // decoded by nvCOMP into its slot (no CPU stage, no streams)
  bool present = false;
  bool on_gpu = false;
  bool direct = false;          // read by the GDS store straight into the slot's direct area
  Buffer original;  // the stored value
  Buffer staged;    // owns the bytes to upload
  const std::byte* upload = nullptr;
  std::uint64_t upload_size = 0;
  ChunkJobs jobs;
  std::uint64_t input_offset = 0;
  std::uint64_t decoded_offset = 0;
};

struct Slot {
  cudaStream_t stream = nullptr;
  std::unique_ptr<PinnedArena> arena;   // chunk bytes
  std::unique_ptr<PinnedArena> tables;  // job tables, then the status read-back
  DeviceBuffer input, decoded, scratch, table_memory, status, partial, nvcomp_temp, nvcomp_state;
  DeviceBuffer direct;  // chunks a GDS store read straight into device memory (gds_direct_)
  std::vector<HostChunk> chunks;
  const std::int32_t* host_status = nullptr;
  // nvCOMP chunks of the batch (indices into chunks) and, read back, per chunk: its status
  // and the decoded size. nvcomp_launch_failed: the launch itself failed (all on the CPU).
  std::vector<std::uint32_t> nvcomp_chunks;
  const std::byte* host_nvcomp_state = nullptr;
  bool nvcomp_launch_failed = false;
  bool in_flight = false;
};

class DeviceReader {
 public:
  DeviceReader(const Array& array, const Selection& selection, const NDView& out)
      : array_(array),
        m_(array.metadata()),
        sharded_(plan_sharded_read(m_)),
        grid_(sharded_ ? sharded_->inner : m_),
        plan_(m_.shape, grid_.chunk_shape, selection),
        region_(expand_to_region(out, plan_.selection())),
        chain_(plan_chain(grid_)),
        spec_(grid_.chunk_spec()),
        itemsize_(static_cast<std::uint32_t>(m_.dtype.size())) {
    const ByteView fill = m_.fill_value.bytes();
    if (fill.size() != itemsize_) {
      fail_invalid("the fill value has {} bytes, {} needs {}", fill.size(), m_.dtype.name(), itemsize_);
    }
    fill_.assign(fill.begin(), fill.end());
    slot_bytes_ = align_up(chain_.chunk_bytes);
    per_batch_ = std::clamp<std::uint64_t>(settings_.batch_budget_bytes / slot_bytes_, 1, 16384);
    if (std::min(per_batch_, plan_.num_tasks()) >= settings_.nvcomp_min_chunks) {
      nvcomp_codec_ = nvcomp_codec_for(chain_, settings_.nvcomp_decode);
    }
    // Chunks stored as they are laid out (no codec but bytes and transposes) need nothing
    // parsed on the host: a GDS store reads them straight into device memory.
    if (settings_.gds_direct && !sharded_ && !nvcomp_codec_ && !chain_.cpu_whole_chain && chain_.cpu_stages.empty() &&
        chain_.gpu_stages.empty()) {
      gds_ = dynamic_cast<GdsStore*>(array.store().get());
    }
  }

  ~DeviceReader() {
    for (Slot& s : slots_) {
      if (s.stream == nullptr) continue;
      cudaStreamSynchronize(s.stream);  // nothing may still write into the caller's output
      for (DeviceBuffer* b : {&s.input, &s.decoded, &s.scratch, &s.table_memory, &s.status, &s.partial,
                              &s.nvcomp_temp, &s.nvcomp_state, &s.direct}) {
        b->release(s.stream);
      }
      cudaStreamSynchronize(s.stream);
      cudaStreamDestroy(s.stream);
      s.chunks.clear();  // drop buffers that point into the arenas before returning them
      arena_pool().give(std::move(s.arena));
      arena_pool().give(std::move(s.tables));
    }
    cudaGetLastError();
  }

  void run() {
    const std::uint64_t tasks = plan_.num_tasks();
    if (tasks == 0) return;
    keep_freed_device_memory_pooled();
    for (Slot& s : slots_) {
      check_cuda(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "creating a CUDA stream");
    }
    std::uint64_t batch = 0;
    for (std::uint64_t first = 0; first < tasks; first += per_batch_, ++batch) {
      Slot& slot = slots_[batch % slots_.size()];
      finish(slot);
      const auto t0 = std::chrono::steady_clock::now();
      prepare(slot, first, std::min(per_batch_, tasks - first));
      launch(slot);
      read_stats().host_phase_ns.fetch_add(static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count()));
    }
    // The older batches first.
    for (std::size_t k = 0; k < slots_.size(); ++k) finish(slots_[(batch + k) % slots_.size()]);
  }

 private:
  std::string context(const std::string& key) const {
    return fmt::format("array '{}' in {}, chunk '{}'", display_path(array_.path()), array_.store()->describe(), key);
  }
  std::string context(const HostChunk& c) const {
    if (!sharded_) return context(c.key);
    return fmt::format("array '{}' in {}, shard '{}', inner chunk {} of its index", display_path(array_.path()),
                       array_.store()->describe(), c.key, c.ordinal);
  }

  // The CPU decode of one (inner) chunk, C order.
  NDBuffer decode_on_cpu(ByteView bytes, const BufferPrototype& prototype) const {
    return grid_.codecs->decode(bytes, spec_, prototype);
  }

  // Copies `bytes` into the batch's arena unless they are already there; `owner` keeps
  // them alive until the batch is done.
  static void stage(HostChunk& c, PinnedArena& arena, Buffer owner, ByteView bytes) {
    if (!bytes.empty() && arena.contains(bytes.data())) {
      c.staged = std::move(owner);
      c.upload = bytes.data();
    } else {
      Buffer copy = Buffer::allocate(bytes.size(), arena);
      if (!bytes.empty()) std::memcpy(copy.data(), bytes.data(), bytes.size());
      c.upload = copy.data();
      c.staged = std::move(copy);
    }
    c.upload_size = bytes.size();
  }

  // nvCOMP takes the chain's only CPU stage when it is zstd or gzip, nothing follows it on
  // the GPU but the scatter, nvCOMP decoding is switched on (Config::gpu.nvcomp_decode) and
  // loads, and chunks are small enough for its batched decoders to beat the host's threads.
  static std::optional<NvcompCodec> nvcomp_codec_for(const ChainPlan& chain, bool nvcomp_decode) {
    if (!nvcomp_decode || chain.cpu_whole_chain || chain.cpu_stages.size() != 1 ||
        !chain.gpu_stages.empty() || chain.chunk_bytes > kNvcompMaxChunkBytes) {
      return std::nullopt;
    }
    const CpuStage& stage = chain.cpu_stages.front();
    if (!stage.output.exact || stage.output.bytes != chain.chunk_bytes) return std::nullopt;
    const std::string_view name = stage.codec->name();
    if (name != "zstd" && name != "gzip") return std::nullopt;
    if (Nvcomp::get() == nullptr) return std::nullopt;
    return name == "zstd" ? NvcompCodec::kZstd : NvcompCodec::kGzip;
  }

  // Chunks with a compressed stream of more than kLongLz4BlockBytes (one long LZ4 block)
  // decode on the host's threads (device_read.h says why).
  static bool has_long_stream(const ChunkJobs& jobs) {
    return std::any_of(jobs.streams.begin(), jobs.streams.end(), [](const StreamJob& s) {
      return s.codec != StreamCodec::kCopy && s.dst_size > kLongLz4BlockBytes;
    });
  }

  // One stored (inner) chunk: CPU-only codecs, then the GPU's job tables (or the whole
  // decode on the CPU when a header asks for it), staged in the arena.
  void process(HostChunk& c, PinnedArena& arena, Buffer encoded) const {
    const BufferPrototype host = BufferPrototype::host();
    c.present = true;
    c.original = encoded;
    if (nvcomp_codec_) {
      c.jobs = ChunkJobs{};
      c.jobs.uses_slot = true;
      c.nvcomp = true;
      stage(c, arena, encoded, encoded.view());
      read_stats().chunks_decoded_on_gpu.fetch_add(1);
      read_stats().chunks_decoded_by_nvcomp.fetch_add(1);
      return;
    }
    if (chain_.cpu_whole_chain) {
      const NDBuffer decoded = decode_on_cpu(encoded.view(), host);
      if (decoded.nbytes() != chain_.chunk_bytes || decoded.shape() != grid_.chunk_shape) {
        fail_data_loss("the codec chain decoded {} bytes of shape [{}], the chunk needs {} bytes of shape [{}]",
                       decoded.nbytes(), fmt::join(decoded.shape(), ", "), chain_.chunk_bytes,
                       fmt::join(grid_.chunk_shape, ", "));
      }
      stage(c, arena, decoded.buffer(), decoded.buffer().view());
      read_stats().chunks_decoded_on_cpu.fetch_add(1);
      return;
    }
    Buffer owned = c.original;
    ByteView current = owned.view();
    for (const CpuStage& s : chain_.cpu_stages) {
      Buffer decoded = s.codec->decode(current, s.output, chain_.ab_spec);
      if (s.output.exact ? decoded.size() != s.output.bytes : decoded.size() > s.output.bytes) {
        fail_data_loss("codec '{}' decoded {} bytes, expected {} {}", s.codec->name(), decoded.size(),
                       s.output.exact ? "exactly" : "at most", s.output.bytes);
      }
      owned = std::move(decoded);
      current = owned.view();
    }
    auto jobs = plan_chunk_jobs(chain_, current);
    if (jobs && has_long_stream(*jobs)) jobs.reset();
    if (jobs) {
      c.jobs = std::move(*jobs);
      c.on_gpu = true;
      stage(c, arena, owned, current);
      read_stats().chunks_decoded_on_gpu.fetch_add(1);
    } else {
      Buffer decoded = decode_gpu_stages_on_cpu(chain_, current);
      c.jobs = ChunkJobs{};
      stage(c, arena, decoded, decoded.view());
      read_stats().chunks_decoded_on_cpu.fetch_add(1);
    }
  }

  // Sharded arrays: the batch's inner chunks grouped by shard; each shard fetched once
  // (whole, or its index and the wanted inner chunks as ranges), then every inner chunk
  // processed like a chunk.
  void prepare_sharded(Slot& slot, std::uint64_t first, std::uint64_t count, const BufferPrototype& staging) {
    const ShardedRead& sh = *sharded_;
    struct ShardFetch {
      std::string key;
      std::vector<std::uint32_t> chunks;
    };
    std::vector<ShardFetch> shards;
    std::map<std::vector<std::uint64_t>, std::uint32_t> shard_of;
    shared_thread_pool().parallel_for(to_size(count), [&](std::size_t i) { plan_.task(first + i, slot.chunks[i].task); });
    for (std::uint32_t i = 0; i < count; ++i) {
      HostChunk& c = slot.chunks[i];
      InnerChunkPlace place = place_inner_chunk(sh, c.task.chunk_coords);
      auto [it, added] = shard_of.try_emplace(std::move(place.shard_coords), static_cast<std::uint32_t>(shards.size()));
      if (added) shards.push_back({m_.chunk_key(it->first), {}});
      shards[it->second].chunks.push_back(i);
      c.shard = it->second;
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
            HostChunk& c = slot.chunks[i];
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
          HostChunk& c = slot.chunks[i];
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
      HostChunk& c = slot.chunks[i];
      if (!c.fetched) {
        read_stats().chunks_missing.fetch_add(1);
        return;
      }
      try {
        process(c, *slot.arena, c.original);
      } catch (const Error& e) {
        rethrow_with_context(e, context(c));
      } catch (const std::bad_alloc&) {
        fail_resource("{}: out of memory", context(c));
      }
    });
  }

  // Chunks laid out as stored, on a GDS store: read straight into the slot's direct area,
  // one slot per chunk; a value of another size than the chunk's goes the usual way (it is
  // decoded on the CPU or reported as the CPU path reports it).
  void prepare_direct(Slot& slot, std::uint64_t first, std::uint64_t count, const BufferPrototype& staging) {
    std::vector<std::string> keys(to_size(count));
    shared_thread_pool().parallel_for(to_size(count), [&](std::size_t i) {
      HostChunk& c = slot.chunks[i];
      plan_.task(first + i, c.task);
      c.key = m_.chunk_key(c.task.chunk_coords);
      keys[i] = join_key(array_.path(), c.key);
    });
    slot.direct.ensure(count * slot_bytes_, slot.stream, "allocating device memory for chunk bytes");
    // Other streams (the store's) write the area: its allocation must be complete.
    check_cuda(cudaStreamSynchronize(slot.stream), "allocating device memory for chunk bytes");
    std::vector<MutableByteView> dests;
    dests.reserve(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) dests.emplace_back(slot.direct.ptr + i * slot_bytes_, chain_.chunk_bytes);
    const std::vector<std::optional<std::uint64_t>> sizes = gds_->read_values_into(keys, dests, MemoryKind::kDevice);
    std::vector<std::size_t> others;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      HostChunk& c = slot.chunks[i];
      if (!sizes[i]) {
        read_stats().chunks_missing.fetch_add(1);
      } else if (*sizes[i] == chain_.chunk_bytes) {
        c.present = true;
        c.direct = true;
        c.on_gpu = true;
        c.jobs = ChunkJobs{};
        c.input_offset = i * slot_bytes_;
        read_stats().chunks_decoded_on_gpu.fetch_add(1);
        read_stats().chunks_read_direct.fetch_add(1);
      } else {
        others.push_back(i);
      }
    }
    Store& store = *array_.store();
    shared_thread_pool().parallel_for(others.size(), [&](std::size_t k) {
      HostChunk& c = slot.chunks[others[k]];
      try {
        auto encoded = store.get(keys[others[k]], staging);
        if (!encoded) {
          read_stats().chunks_missing.fetch_add(1);
          return;
        }
        process(c, *slot.arena, std::move(*encoded));
      } catch (const Error& e) {
        rethrow_with_context(e, context(c.key));
      }
    });
  }

  // Host phase: read the batch's chunks (in parallel) and parse their headers.
  void prepare(Slot& slot, std::uint64_t first, std::uint64_t count) {
    // Chunks rarely take more room encoded than decoded; start from what earlier batches
    // needed, and grow when a batch overflowed.
    const std::uint64_t estimate = std::min<std::uint64_t>(g_arena_hint.load(), count * slot_bytes_ + (1u << 20));
    const std::uint64_t wanted_arena = std::max<std::uint64_t>({16u << 20, next_arena_size_, estimate});
    if (!slot.arena || slot.arena->capacity() < wanted_arena) {
      slot.chunks.clear();
      arena_pool().give(std::move(slot.arena));
      slot.arena = arena_pool().take(wanted_arena);
    }
    slot.arena->reset();
    slot.chunks.assign(count, HostChunk{});
    PinnedArena& arena = *slot.arena;
    const BufferPrototype staging(arena);
    Store& store = *array_.store();
    if (sharded_) {
      prepare_sharded(slot, first, count, staging);
    } else if (gds_ != nullptr) {
      prepare_direct(slot, first, count, staging);
    } else {
      shared_thread_pool().parallel_for(to_size(count), [&](std::size_t i) {
        HostChunk& c = slot.chunks[i];
        plan_.task(first + i, c.task);
        c.key = m_.chunk_key(c.task.chunk_coords);
        try {
          auto encoded = store.get(join_key(array_.path(), c.key), staging);
          if (!encoded) {
            read_stats().chunks_missing.fetch_add(1);
            return;
          }
          process(c, arena, std::move(*encoded));
        } catch (const Error& e) {
          rethrow_with_context(e, context(c.key));
        } catch (const std::bad_alloc&) {
          fail_resource("{}: out of memory", context(c.key));
        }
      });
    }
    next_arena_size_ = std::max<std::uint64_t>(next_arena_size_, arena.requested() + arena.requested() / 4);
    std::uint64_t hint = g_arena_hint.load();
    while (next_arena_size_ > hint && !g_arena_hint.compare_exchange_weak(hint, next_arena_size_)) {
    }
  }

  // Device phase: lay the batch out, upload it and queue the kernels.
  void launch(Slot& slot) {
    PinnedArena& arena = *slot.arena;
    const cudaStream_t stream = slot.stream;
    const auto count = static_cast<std::uint32_t>(slot.chunks.size());

    // Where each chunk's bytes and decoded slot go.
    const std::uint64_t arena_bytes = align_up(arena.used());
    std::uint64_t input_bytes = arena_bytes;
    std::uint64_t slots_used = 0;
    bool any_blocks = false;
    for (HostChunk& c : slot.chunks) {
      if (!c.present || c.direct) continue;
      if (c.upload_size > 0 && arena.contains(c.upload)) {
        c.input_offset = static_cast<std::uint64_t>(c.upload - arena.base());
      } else {
        c.input_offset = input_bytes;
        input_bytes += align_up(c.upload_size);
      }
      if (c.jobs.uses_slot) c.decoded_offset = slots_used++ * slot_bytes_;
      any_blocks = any_blocks || !c.jobs.blocks.empty();
    }
    slot.input.ensure(input_bytes, stream, "allocating device memory for chunk bytes");
    slot.decoded.ensure(slots_used * slot_bytes_, stream, "allocating device memory for decoded chunks");
    if (any_blocks) slot.scratch.ensure(slots_used * slot_bytes_, stream, "allocating device scratch memory");
    slot.status.ensure(std::size_t{count} * sizeof(std::int32_t), stream, "allocating device memory");

    // The job tables, with offsets made absolute.
    std::vector<StreamJob> streams;
    std::vector<BlockJob> blocks;
    std::vector<CrcJob> crcs;
    std::vector<std::uint32_t> segment_jobs;
    std::vector<CopyJob> copies;
    const auto input_base = reinterpret_cast<std::uint64_t>(slot.input.ptr);
    const auto direct_base = reinterpret_cast<std::uint64_t>(slot.direct.ptr);
    const auto decoded_base = reinterpret_cast<std::uint64_t>(slot.decoded.ptr);
    const auto region_base = reinterpret_cast<std::uint64_t>(region_.data);
    for (std::uint32_t i = 0; i < count; ++i) {
      HostChunk& c = slot.chunks[i];
      if (!c.present) {
        for_each_box(c.task, chain_.stored_strides, region_.byte_strides,
                     [&](const std::vector<CopyDim>& dims, std::int64_t, std::int64_t dst_offset) {
                       add_copy_jobs(copies, kNoSource, region_base + static_cast<std::uint64_t>(dst_offset), dims,
                                     kNoChunk, itemsize_);
                     });
        continue;
      }
      for (CrcJob job : c.jobs.crcs) {
        job.src += c.input_offset;
        job.chunk = i;
        job.first_segment = static_cast<std::uint32_t>(segment_jobs.size());
        job.num_segments = static_cast<std::uint32_t>(ceil_div(job.size, kCrcSegmentBytes));
        segment_jobs.insert(segment_jobs.end(), job.num_segments, static_cast<std::uint32_t>(crcs.size()));
        crcs.push_back(job);
      }
      for (StreamJob job : c.jobs.streams) {
        job.src += c.input_offset;
        job.dst += c.decoded_offset;
        job.chunk = i;
        streams.push_back(job);
      }
      for (BlockJob job : c.jobs.blocks) {
        job.offset += c.decoded_offset;
        job.chunk = i;
        blocks.push_back(job);
      }
      const std::uint64_t chunk_base = c.direct          ? direct_base + c.input_offset
                                       : c.jobs.uses_slot ? decoded_base + c.decoded_offset
                                                          : input_base + c.input_offset + c.jobs.passthrough_offset;
      for_each_box(c.task, chain_.stored_strides, region_.byte_strides,
                   [&](const std::vector<CopyDim>& dims, std::int64_t src_offset, std::int64_t dst_offset) {
                     add_copy_jobs(copies, chunk_base + static_cast<std::uint64_t>(src_offset),
                                   region_base + static_cast<std::uint64_t>(dst_offset), dims, i, itemsize_);
                   });
    }
    if (segment_jobs.size() > std::numeric_limits<std::uint32_t>::max() ||
        copies.size() > std::numeric_limits<std::uint32_t>::max() ||
        streams.size() > std::numeric_limits<std::uint32_t>::max()) {
      fail_resource("array '{}': a batch needs more GPU jobs than one launch takes", array_.path());
    }
    slot.partial.ensure(segment_jobs.size() * sizeof(std::uint32_t), stream, "allocating device memory");

    // nvCOMP's tables: device addresses and sizes of each nvCOMP chunk's bytes and slot.
    std::vector<std::uint64_t> nv_inputs, nv_input_sizes, nv_outputs, nv_output_sizes;
    slot.nvcomp_chunks.clear();
    slot.nvcomp_launch_failed = false;
    for (std::uint32_t i = 0; i < count; ++i) {
      const HostChunk& c = slot.chunks[i];
      if (!c.present || !c.nvcomp) continue;
      slot.nvcomp_chunks.push_back(i);
      nv_inputs.push_back(input_base + c.input_offset);
      nv_input_sizes.push_back(c.upload_size);
      nv_outputs.push_back(decoded_base + c.decoded_offset);
      nv_output_sizes.push_back(chain_.chunk_bytes);
    }
    const std::size_t nv_count = slot.nvcomp_chunks.size();

    std::vector<std::byte> tables;
    const std::uint64_t at_streams = append_table(tables, streams);
    const std::uint64_t at_blocks = append_table(tables, blocks);
    const std::uint64_t at_crcs = append_table(tables, crcs);
    const std::uint64_t at_segments = append_table(tables, segment_jobs);
    const std::uint64_t at_copies = append_table(tables, copies);
    const std::uint64_t at_fill = append_table(tables, fill_);
    const std::uint64_t at_nv_inputs = append_table(tables, nv_inputs);
    const std::uint64_t at_nv_input_sizes = append_table(tables, nv_input_sizes);
    const std::uint64_t at_nv_outputs = append_table(tables, nv_outputs);
    const std::uint64_t at_nv_output_sizes = append_table(tables, nv_output_sizes);
    const std::uint64_t tables_bytes = align_up(tables.size());
    const std::uint64_t status_bytes = align_up(std::uint64_t{count} * sizeof(std::int32_t));
    const std::uint64_t pinned_bytes = tables_bytes + status_bytes + nvcomp_state_bytes(nv_count);
    if (!slot.tables || slot.tables->capacity() < pinned_bytes) {
      arena_pool().give(std::move(slot.tables));
      slot.tables = arena_pool().take(std::max<std::uint64_t>(pinned_bytes + pinned_bytes / 2, 1u << 20));
    }
    std::memcpy(slot.tables->base(), tables.data(), tables.size());
    slot.host_status = reinterpret_cast<const std::int32_t*>(slot.tables->base() + tables_bytes);
    slot.host_nvcomp_state = slot.tables->base() + tables_bytes + status_bytes;
    slot.table_memory.ensure(tables_bytes, stream, "allocating device memory for job tables");
    const std::byte* t = slot.table_memory.ptr;

    // Upload: the arena in one copy, anything that did not fit after it, then the tables.
    const char* what = "copying a batch of chunks to the device";
    if (arena.used() > 0) check_cuda(cudaMemcpyAsync(slot.input.ptr, arena.base(), arena.used(), cudaMemcpyHostToDevice, stream), what);
    for (const HostChunk& c : slot.chunks) {
      if (c.present && !c.direct && c.upload_size > 0 && !arena.contains(c.upload)) {
        check_cuda(cudaMemcpyAsync(slot.input.ptr + c.input_offset, c.upload, c.upload_size, cudaMemcpyHostToDevice,
                                   stream),
                   what);
      }
    }
    check_cuda(cudaMemcpyAsync(slot.table_memory.ptr, slot.tables->base(), tables_bytes, cudaMemcpyHostToDevice, stream),
               what);
    auto* status = reinterpret_cast<std::int32_t*>(slot.status.ptr);
    check_cuda(cudaMemsetAsync(status, 0, std::size_t{count} * sizeof(std::int32_t), stream), what);

    const auto* input = reinterpret_cast<const std::uint8_t*>(slot.input.ptr);
    auto* decoded = reinterpret_cast<std::uint8_t*>(slot.decoded.ptr);
    auto* scratch = reinterpret_cast<std::uint8_t*>(slot.scratch.ptr);
    check_cuda(launch_crc32c(reinterpret_cast<const CrcJob*>(t + at_crcs), static_cast<std::uint32_t>(crcs.size()),
                             reinterpret_cast<const std::uint32_t*>(t + at_segments),
                             static_cast<std::uint32_t>(segment_jobs.size()), input,
                             reinterpret_cast<std::uint32_t*>(slot.partial.ptr), status, stream),
               "launching the crc32c kernels");
    check_cuda(launch_decode_streams(reinterpret_cast<const StreamJob*>(t + at_streams),
                                     static_cast<std::uint32_t>(streams.size()), input, decoded, scratch, status,
                                     stream),
               "launching the decode kernel");
    check_cuda(launch_unshuffle_blocks(reinterpret_cast<const BlockJob*>(t + at_blocks),
                                       static_cast<std::uint32_t>(blocks.size()), scratch, decoded, status, stream),
               "launching the unshuffle kernel");
    if (nv_count > 0) launch_nvcomp(slot, t, at_nv_inputs, at_nv_input_sizes, at_nv_outputs, at_nv_output_sizes);
    check_cuda(launch_copy_regions(reinterpret_cast<const CopyJob*>(t + at_copies),
                                   static_cast<std::uint32_t>(copies.size()), itemsize_, chain_.swap_unit,
                                   reinterpret_cast<const std::uint8_t*>(t + at_fill), status, stream),
               "launching the scatter kernel");
    check_cuda(cudaMemcpyAsync(const_cast<std::int32_t*>(slot.host_status), status,
                               std::size_t{count} * sizeof(std::int32_t), cudaMemcpyDeviceToHost, stream),
               "reading chunk status from the device");
    if (nv_count > 0 && !slot.nvcomp_launch_failed) {
      check_cuda(cudaMemcpyAsync(const_cast<std::byte*>(slot.host_nvcomp_state), slot.nvcomp_state.ptr,
                                 nvcomp_state_bytes(nv_count), cudaMemcpyDeviceToHost, stream),
                 "reading nvCOMP's results from the device");
    }
    slot.in_flight = true;
    read_stats().batches.fetch_add(1);
  }

  // nvCOMP's results on the device (and read back): n statuses (int), then n decoded sizes.
  static std::uint64_t nvcomp_sizes_offset(std::size_t n) { return align_up(n * sizeof(std::int32_t), 8); }
  static std::uint64_t nvcomp_state_bytes(std::size_t n) { return nvcomp_sizes_offset(n) + n * sizeof(std::uint64_t); }

  // Queues nvCOMP's batched decode of the batch's nvCOMP chunks into their slots.
  void launch_nvcomp(Slot& slot, const std::byte* tables, std::uint64_t at_inputs, std::uint64_t at_input_sizes,
                     std::uint64_t at_outputs, std::uint64_t at_output_sizes) {
    const Nvcomp& nv = *Nvcomp::get();
    const std::size_t n = slot.nvcomp_chunks.size();
    const std::size_t temp_bytes = nv.temp_bytes(*nvcomp_codec_, n, chain_.chunk_bytes, n * chain_.chunk_bytes);
    if (temp_bytes == static_cast<std::size_t>(-1)) {
      slot.nvcomp_launch_failed = true;
      return;
    }
    slot.nvcomp_temp.ensure(std::max<std::size_t>(temp_bytes, 1), slot.stream, "allocating nvCOMP's device memory");
    slot.nvcomp_state.ensure(nvcomp_state_bytes(n), slot.stream, "allocating nvCOMP's device memory");
    std::byte* state = slot.nvcomp_state.ptr;
    const int result = nv.decompress(
        *nvcomp_codec_, reinterpret_cast<const void* const*>(tables + at_inputs),
        reinterpret_cast<const std::size_t*>(tables + at_input_sizes),
        reinterpret_cast<const std::size_t*>(tables + at_output_sizes),
        reinterpret_cast<std::size_t*>(state + nvcomp_sizes_offset(n)), n, slot.nvcomp_temp.ptr, temp_bytes,
        reinterpret_cast<void* const*>(tables + at_outputs), reinterpret_cast<int*>(state), slot.stream);
    if (result != 0) slot.nvcomp_launch_failed = true;
  }

  // Waits for a batch and deals with chunks the GPU refused: the CPU decodes them again, and
  // either reports the error it finds (with the chunk key) or supplies the values.
  void finish(Slot& slot) {
    if (!slot.in_flight) return;
    slot.in_flight = false;
    const auto t0 = std::chrono::steady_clock::now();
    check_cuda(cudaStreamSynchronize(slot.stream), "decoding chunks on the GPU");
    read_stats().gpu_wait_ns.fetch_add(static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count()));
    for (std::size_t i = 0; i < slot.chunks.size(); ++i) {
      if (slot.host_status[i] == kDecodeOk) continue;
      recover(slot, slot.chunks[i], slot.host_status[i]);
    }
    // nvCOMP's chunks: a status other than success, or another decoded size, sends the chunk
    // to the CPU codec (its error, with the key, or its values).
    const std::size_t nv_count = slot.nvcomp_chunks.size();
    for (std::size_t k = 0; k < nv_count; ++k) {
      bool ok = !slot.nvcomp_launch_failed;
      if (ok) {
        std::int32_t status = 0;
        std::uint64_t size = 0;
        std::memcpy(&status, slot.host_nvcomp_state + k * sizeof(std::int32_t), sizeof status);
        std::memcpy(&size, slot.host_nvcomp_state + nvcomp_sizes_offset(nv_count) + k * sizeof(std::uint64_t),
                    sizeof size);
        ok = status == 0 && size == chain_.chunk_bytes;
      }
      if (!ok) recover(slot, slot.chunks[slot.nvcomp_chunks[k]], kDecodeOk);
    }
  }

  void recover(Slot& slot, const HostChunk& c, std::int32_t code) {
    NDBuffer decoded;
    try {
      Buffer original = c.original;
      if (c.direct) {  // read straight into device memory: read it again on the host
        auto bytes = array_.store()->get(join_key(array_.path(), c.key));
        if (!bytes) fail_data_loss("the chunk was deleted while it was read");
        original = std::move(*bytes);
      }
      decoded = decode_on_cpu(original.view(), BufferPrototype::host());
      if (decoded.nbytes() != chain_.chunk_bytes) {
        fail_data_loss("the codec chain decoded {} bytes, the chunk needs {}", decoded.nbytes(), chain_.chunk_bytes);
      }
    } catch (const Error& e) {
      rethrow_with_context(e, context(c));
    }
    (void)code;
    read_stats().gpu_rejections_recovered.fetch_add(1);
    // Place the CPU's values: they are in C order, native byte order.
    DeviceBuffer values, table;
    values.ensure(decoded.nbytes(), slot.stream, "allocating device memory");
    std::vector<CopyJob> jobs;
    for_each_box(c.task, NDView::c_strides(m_.chunk_shape, itemsize_), region_.byte_strides,
                 [&](const std::vector<CopyDim>& dims, std::int64_t src_offset, std::int64_t dst_offset) {
                   add_copy_jobs(jobs, reinterpret_cast<std::uint64_t>(values.ptr) + static_cast<std::uint64_t>(src_offset),
                                 reinterpret_cast<std::uint64_t>(region_.data) + static_cast<std::uint64_t>(dst_offset),
                                 dims, kNoChunk, itemsize_);
                 });
    table.ensure(jobs.size() * sizeof(CopyJob) + itemsize_, slot.stream, "allocating device memory");
    const char* what = "placing a chunk decoded on the CPU";
    check_cuda(cudaMemcpyAsync(values.ptr, decoded.data(), decoded.nbytes(), cudaMemcpyHostToDevice, slot.stream), what);
    check_cuda(cudaMemcpyAsync(table.ptr, jobs.data(), jobs.size() * sizeof(CopyJob), cudaMemcpyHostToDevice, slot.stream),
               what);
    check_cuda(cudaMemcpyAsync(table.ptr + jobs.size() * sizeof(CopyJob), fill_.data(), itemsize_,
                               cudaMemcpyHostToDevice, slot.stream),
               what);
    check_cuda(launch_copy_regions(reinterpret_cast<const CopyJob*>(table.ptr), static_cast<std::uint32_t>(jobs.size()),
                                   itemsize_, 1, reinterpret_cast<const std::uint8_t*>(table.ptr + jobs.size() * sizeof(CopyJob)),
                                   reinterpret_cast<const std::int32_t*>(slot.status.ptr), slot.stream),
               what);
    values.release(slot.stream);
    table.release(slot.stream);
    check_cuda(cudaStreamSynchronize(slot.stream), what);
  }

  const Array& array_;
  const ArrayMetadata& m_;
  const std::optional<ShardedRead> sharded_;
  const ArrayMetadata& grid_;  // the chunk grid and chain the GPU decodes: m_, or its inner chunks
  const ChunkPlan plan_;
  const NDView region_;
  const ChainPlan chain_;
  const ChunkSpec spec_;
  const std::uint32_t itemsize_;
  std::vector<std::byte> fill_;
  const DeviceSettings settings_ = device_settings();  // read on the thread that starts the read
  std::uint64_t slot_bytes_ = 0;
  std::uint64_t per_batch_ = 1;
  std::uint64_t next_arena_size_ = 0;
  std::optional<NvcompCodec> nvcomp_codec_;
  GdsStore* gds_ = nullptr;  // the array's store, when its chunks are read straight into device memory
  std::vector<Slot> slots_ = std::vector<Slot>(settings_.pipeline_depth);
};

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
    DeviceReader reader(array, selection, out);
    reader.run();
  } catch (const Error& e) {
    // Chunk errors already name the array and the key; others get the array here.
    if (std::string_view(e.what()).find(where) == std::string_view::npos) rethrow_with_context(e, where);
    throw;
  }
}

}  // namespace zarrkit::gpu
