#include "gpu/device_batches.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "core/run_on_threads.h"
#include "gpu/cuda_check.h"
#include "gpu/device_codecs.cuh"
#include "gpu/device_read.h"
#include "gpu/device_scope.h"
#include "gpu/kernels.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit::gpu {
namespace {

// The largest staging a batch has needed so far (a starting size for later requests).
std::atomic<std::uint64_t> g_arena_hint{16u << 20};

std::uint64_t elapsed_ns(std::chrono::steady_clock::time_point since) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count());
}

}  // namespace

struct DeviceBatches::Slot {
  cudaStream_t stream = nullptr;
  std::unique_ptr<PinnedArena> arena;   // chunk bytes
  std::unique_ptr<PinnedArena> tables;  // job tables, then the status read-back
  DeviceBuffer input, decoded, table_memory, status;
  DeviceBuffer driver_area;  // Batch::device_area
  std::vector<DeviceChunk> chunks;
  BatchWorks works;  // the batch's device work, by kind (device_codec.h)
  std::vector<std::uint64_t> input_offsets, slot_index;
  const std::int32_t* host_status = nullptr;
  bool in_flight = false;
};

DeviceBatches::DeviceBatches(std::shared_ptr<const PreparedChain> prepared, ByteView fill, std::uint64_t num_chunks,
                             std::function<std::string(const DeviceChunk&)> describe)
    : prepared_(std::move(prepared)),
      spec_(prepared_->spec()),
      itemsize_(static_cast<std::uint32_t>(spec_.dtype.size())),
      chunk_bytes_(prepared_->chunk_bytes()),
      slot_bytes_(align_up(std::max<std::uint64_t>(chunk_bytes_, 1))),
      num_chunks_(num_chunks),
      per_batch_(std::clamp<std::uint64_t>(settings_.batch_budget_bytes / slot_bytes_, 1, 16384)),
      chain_(prepared_, std::min(per_batch_, num_chunks), settings_, CodecRegistry::builtin(), num_chunks),
      describe_(std::move(describe)) {
  if (fill.size() != itemsize_) {
    fail_invalid("the fill value has {} bytes, {} needs {}", fill.size(), spec_.dtype.name(), itemsize_);
  }
  fill_.assign(fill.begin(), fill.end());
  const std::size_t depth =
      std::min<std::uint64_t>(settings_.pipeline_depth, std::max<std::uint64_t>(1, ceil_div(num_chunks, per_batch_)));
  for (std::size_t k = 0; k < depth; ++k) slots_.push_back(std::make_unique<Slot>());
}

DeviceBatches::~DeviceBatches() {
  for (auto& slot : slots_) {
    Slot& s = *slot;
    if (s.stream == nullptr) continue;
    cudaStreamSynchronize(s.stream);  // nothing may still write into the caller's output
    for (DeviceBuffer* b : {&s.input, &s.decoded, &s.table_memory, &s.status, &s.driver_area}) b->release(s.stream);
    s.works.release(s.stream);
    cudaStreamSynchronize(s.stream);
    stream_pool().give(s.stream);
    s.chunks.clear();  // drop buffers that point into the arenas before returning them
    arena_pool().give(std::move(s.arena));
    arena_pool().give(std::move(s.tables));
  }
  cudaGetLastError();
}

bool DeviceBatches::stages_stored_bytes() const {
  return !chain_.host_whole_chain() && chain_.host_stages().empty();
}

std::uint64_t DeviceBatches::staging_bytes(std::uint64_t count) const {
  // What the host stages is the decoded chunks where the host decodes them (the stored
  // bytes are read into ordinary memory then); chunks the device decodes rarely take more
  // room encoded than decoded, and usually much less: start from half and from what earlier
  // batches needed, and grow when a batch overflows.
  const std::uint64_t decoded = count * slot_bytes_ + (1u << 20);
  if (!stages_stored_bytes() || chain_.stored_as_laid_out()) return decoded;
  // A chunk the host decodes (a long LZ4 block) stages its decoded bytes beside its stored
  // ones: what batches that overflowed needed (the hint) may exceed the decoded size.
  return std::max(decoded / 2 + 1, std::min(g_arena_hint.load(), 2 * decoded));
}

void DeviceBatches::warm_up() {
  keep_freed_device_memory_pooled();
  chain_.load_kernels();
  load_kernels();
  const std::uint64_t count = std::min(per_batch_, num_chunks_);
  std::vector<std::unique_ptr<PinnedArena>> arenas;
  std::vector<cudaStream_t> streams;
  // Staging as large as the decoded batch, the most the host stages (chunks the device
  // decodes rarely take more room encoded than decoded): the read's batches then fit
  // whatever the stored sizes turn out to be, and no pinned memory is made during it.
  const std::uint64_t staging = std::max(staging_bytes(count), count * slot_bytes_ + (1u << 20));
  for (std::size_t k = 0; k < slots_.size(); ++k) {
    arenas.push_back(arena_pool().take(staging));
    arenas.push_back(arena_pool().take(1u << 20));  // the tables
    streams.push_back(stream_pool().take());
  }
  // Device memory: the pool keeps what was freed (keep_freed_device_memory_pooled), so
  // one allocation of what the batches in flight use grows it once.
  const std::uint64_t device_bytes = slots_.size() * (2 * count * slot_bytes_ + staging_bytes(count));
  void* p = nullptr;
  check_cuda(cudaMallocAsync(&p, std::max<std::uint64_t>(device_bytes, 1), streams.front()),
             "allocating device memory ahead of reads");
  check_cuda(cudaFreeAsync(p, streams.front()), "allocating device memory ahead of reads");
  check_cuda(cudaStreamSynchronize(streams.front()), "allocating device memory ahead of reads");
  for (auto& a : arenas) arena_pool().give(std::move(a));
  for (cudaStream_t s : streams) stream_pool().give(s);
}

void DeviceBatches::allow_concurrent_host_phases() {
  if (concurrent_ || num_chunks_ == 0) return;
  concurrent_ = true;
  // Twice the batches in flight, each smaller: about 32 MiB, but at least enough chunks that
  // the slots' host phases together keep every pool thread busy, and no more than gives every
  // slot a batch. Small batches shorten the pipeline's fill and drain (the first upload waits
  // for a whole host phase, the last host phase for nothing); bench/results/MULTI-GPU.md has
  // the sizes tried. Device stages that need many chunks per launch to fill the device (a
  // warp per chunk) keep that many, within the batch budget.
  const std::uint64_t slots = std::min<std::uint64_t>(8, 2 * settings_.pipeline_depth);
  const std::uint64_t by_bytes = std::max<std::uint64_t>(1, (32u << 20) / slot_bytes_);
  const std::uint64_t by_threads = ceil_div(shared_thread_pool().size(), slots);
  const std::uint64_t small = std::min(std::max(by_bytes, by_threads), ceil_div(num_chunks_, slots));
  per_batch_ = std::clamp<std::uint64_t>(std::max(small, chain_.min_chunks_per_batch()), 1, per_batch_);
  const std::uint64_t wanted = std::min<std::uint64_t>(slots, ceil_div(num_chunks_, per_batch_));
  while (slots_.size() < wanted) slots_.push_back(std::make_unique<Slot>());
}

void DeviceBatches::run_batch(Slot& slot, std::uint64_t first, const HostPhase& host_phase) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t count = std::min(per_batch_, num_chunks_ - first);
  std::uint64_t wanted_arena = staging_bytes(count);
  {
    std::lock_guard lock(arena_mutex_);
    wanted_arena = std::max(next_arena_size_, wanted_arena);
  }
  if (!slot.arena || slot.arena->capacity() < wanted_arena) {
    slot.chunks.clear();
    arena_pool().give(std::move(slot.arena));
    slot.arena = arena_pool().take(wanted_arena);
  }
  slot.arena->reset();
  slot.chunks.clear();
  slot.chunks.resize(to_size(count));
  // Stores read the chunks' bytes into the arena where they go to the device as stored;
  // where the host decodes them first, into ordinary memory: the arena then holds what the
  // host's decode makes, and is sized for that alone.
  const BufferPrototype staging = stages_stored_bytes() ? BufferPrototype(*slot.arena) : BufferPrototype::host();
  Batch b{slot.chunks, staging, *slot.arena, slot.stream, slot.driver_area, first};
  host_phase(b);
  // A batch that overflowed its arena: the next batches, and later reads (the hint), get
  // arenas with room to spare. A batch that fitted changes nothing, so that the arenas made
  // ahead (warm_up) or by earlier reads stay the ones taken.
  const std::uint64_t requested = slot.arena->requested();
  if (requested > slot.arena->capacity()) {
    std::lock_guard lock(arena_mutex_);
    next_arena_size_ = std::max<std::uint64_t>(next_arena_size_, requested + requested / 4);
    std::uint64_t hint = g_arena_hint.load();
    while (next_arena_size_ > hint && !g_arena_hint.compare_exchange_weak(hint, next_arena_size_)) {
    }
  }
  launch(slot);
  read_stats().host_phase_ns.fetch_add(elapsed_ns(t0));
}

void DeviceBatches::run(const HostPhase& host_phase) {
  if (num_chunks_ == 0) return;
  keep_freed_device_memory_pooled();
  for (auto& s : slots_) s->stream = stream_pool().take();
  if (!concurrent_ || slots_.size() == 1) {
    std::uint64_t batch = 0;
    for (std::uint64_t first = 0; first < num_chunks_; first += per_batch_, ++batch) {
      Slot& slot = *slots_[batch % slots_.size()];
      finish(slot);
      run_batch(slot, first, host_phase);
    }
    // The older batches first.
    for (std::size_t k = 0; k < slots_.size(); ++k) finish(*slots_[(batch + k) % slots_.size()]);
    return;
  }
  // Concurrent host phases: each slot on a thread of its own (run_on_threads: the first on
  // this one, all under this thread's settings; the device made current here) takes the next
  // batch, waits for its own previous one and runs the host phase, so that the host phases
  // of several batches share the pool at once.
  const int device = current_device();
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> stop{false};
  const auto errors = run_on_threads(slots_.size(), [&](std::size_t k) {
    try {
      const ScopedDevice on_device(device);
      Slot& slot = *slots_[k];
      while (!stop.load()) {
        const std::uint64_t first = next.fetch_add(1) * per_batch_;
        if (first >= num_chunks_) break;
        finish(slot);
        run_batch(slot, first, host_phase);
      }
      finish(slot);
    } catch (...) {
      stop.store(true);
      throw;
    }
  });
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

namespace {

// Copies `bytes` into the batch's arena unless they are already there; `owner` keeps them
// alive until the batch is done.
void stage(DeviceChunk& c, PinnedArena& arena, Buffer owner, ByteView bytes) {
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

}  // namespace

void DeviceBatches::process(DeviceChunk& c, std::uint32_t index, PinnedArena& arena, Buffer encoded) const {
  c.present = true;
  c.original = encoded;
  if (chain_.host_whole_chain()) {
    const NDBuffer decoded = prepared_->decode(encoded.view(), BufferPrototype::host());
    if (decoded.nbytes() != chunk_bytes_ || decoded.shape() != spec_.shape) {
      fail_data_loss("the codec chain decoded {} bytes of shape [{}], the chunk needs {} bytes of shape [{}]",
                     decoded.nbytes(), fmt::join(decoded.shape(), ", "), chunk_bytes_, fmt::join(spec_.shape, ", "));
    }
    stage(c, arena, decoded.buffer(), decoded.buffer().view());
    c.decoded = ChunkBytes{ChunkBytes::Area::kInput, 0, chunk_bytes_};
    read_stats().chunks_decoded_on_cpu.fetch_add(1);
    return;
  }
  Buffer bytes = chain_.decode_host_stages(std::move(encoded), BufferPrototype(arena));
  const ByteView view = bytes.view();
  if (auto where = chain_.plan_chunk(index, view, c.works)) {
    c.decoded = *where;
    stage(c, arena, bytes, view);
    read_stats().chunks_decoded_on_gpu.fetch_add(1);
  } else {
    c.works.clear();
    Buffer decoded = chain_.decode_device_stages_on_host(view, BufferPrototype(arena));
    stage(c, arena, decoded, decoded.view());
    c.decoded = ChunkBytes{ChunkBytes::Area::kInput, 0, chunk_bytes_};
    chain_.plan_passes(index, c.works);
    read_stats().chunks_decoded_on_cpu.fetch_add(1);
  }
}

void DeviceBatches::abandon(DeviceChunk& c) {
  c.abandoned = true;
  c.present = false;
  c.direct = false;
  c.works.clear();
  c.staged = Buffer();
  c.original = Buffer();
  c.upload = nullptr;
  c.upload_size = 0;
}

// Device phase: lay the batch out, upload it and queue the kernels.
void DeviceBatches::launch(Slot& slot) {
  PinnedArena& arena = *slot.arena;
  const cudaStream_t stream = slot.stream;
  const auto count = static_cast<std::uint32_t>(slot.chunks.size());

  // Where each chunk's bytes and decoded slot go.
  std::uint64_t input_bytes = align_up(arena.used());
  std::uint64_t slots_used = 0;
  slot.input_offsets.assign(count, 0);
  slot.slot_index.assign(count, 0);
  for (std::uint32_t i = 0; i < count; ++i) {
    DeviceChunk& c = slot.chunks[i];
    if (!c.present || c.direct) continue;
    if (c.upload_size > 0 && arena.contains(c.upload)) {
      c.input_offset = static_cast<std::uint64_t>(c.upload - arena.base());
    } else {
      c.input_offset = input_bytes;
      input_bytes += align_up(c.upload_size);
    }
    slot.input_offsets[i] = c.input_offset;
    if (c.decoded.area == ChunkBytes::Area::kSlot) slot.slot_index[i] = slots_used++;
  }
  slot.input.ensure(input_bytes, stream, "allocating device memory for chunk bytes");
  slot.decoded.ensure(slots_used * slot_bytes_, stream, "allocating device memory for decoded chunks");
  slot.status.ensure(std::size_t{count} * sizeof(std::int32_t), stream, "allocating device memory");

  // The device stages' work, gathered from the chunks, and its tables.
  slot.works.clear();
  for (DeviceChunk& c : slot.chunks) slot.works.absorb(c.works);
  BatchAddresses addresses;
  addresses.input = reinterpret_cast<const std::uint8_t*>(slot.input.ptr);
  addresses.slots = reinterpret_cast<std::uint8_t*>(slot.decoded.ptr);
  addresses.slot_bytes = slot_bytes_;
  addresses.slots_used = slots_used;
  addresses.input_offset = &slot.input_offsets;
  addresses.slot_index = &slot.slot_index;
  addresses.stream = stream;
  const std::vector<BatchWork*> works = slot.works.in_phase_order();
  TableWriter tables;
  for (BatchWork* w : works) w->write_tables(addresses, tables);

  // The scatter: every chunk's selected elements from its stored layout into its output.
  std::vector<CopyJob> copies;
  for (std::uint32_t i = 0; i < count; ++i) {
    const DeviceChunk& c = slot.chunks[i];
    if (c.abandoned) continue;
    const NDView& region = *c.region;
    const auto region_base = reinterpret_cast<std::uint64_t>(region.data);
    const std::uint64_t chunk_base = !c.present ? kNoSource : c.direct ? c.direct_address : addresses.address(i, c.decoded);
    for_each_box(c.runs, chain_.stored_strides(), region.byte_strides,
                 [&](const std::vector<CopyDim>& dims, std::int64_t src_offset, std::int64_t dst_offset) {
                   add_copy_jobs(copies, c.present ? chunk_base + static_cast<std::uint64_t>(src_offset) : kNoSource,
                                 region_base + static_cast<std::uint64_t>(dst_offset), dims, c.present ? i : kNoChunk,
                                 itemsize_);
                 });
  }
  if (copies.size() > std::numeric_limits<std::uint32_t>::max()) {
    fail_resource("a batch needs more GPU copy jobs than one launch takes");
  }
  const std::uint64_t at_copies = tables.append(copies);
  const std::uint64_t at_fill = tables.append(fill_);

  const std::uint64_t tables_bytes = align_up(tables.bytes().size());
  const std::uint64_t status_bytes = align_up(std::uint64_t{count} * sizeof(std::int32_t));
  const std::uint64_t pinned_bytes = tables_bytes + status_bytes;
  if (!slot.tables || slot.tables->capacity() < pinned_bytes) {
    arena_pool().give(std::move(slot.tables));
    slot.tables = arena_pool().take(std::max<std::uint64_t>(pinned_bytes + pinned_bytes / 2, 1u << 20));
  }
  if (!tables.bytes().empty()) std::memcpy(slot.tables->base(), tables.bytes().data(), tables.bytes().size());
  slot.host_status = reinterpret_cast<const std::int32_t*>(slot.tables->base() + tables_bytes);
  slot.table_memory.ensure(tables_bytes, stream, "allocating device memory for job tables");
  const std::byte* t = slot.table_memory.ptr;

  // Upload: the arena in one copy, anything that did not fit after it, then the tables.
  const char* what = "copying a batch of chunks to the device";
  if (arena.used() > 0) {
    check_cuda(cudaMemcpyAsync(slot.input.ptr, arena.base(), arena.used(), cudaMemcpyHostToDevice, stream), what);
    read_stats().bytes_uploaded_pinned.fetch_add(arena.used());
  }
  for (const DeviceChunk& c : slot.chunks) {
    if (c.present && !c.direct && c.upload_size > 0 && !arena.contains(c.upload)) {
      read_stats().bytes_uploaded_pageable.fetch_add(c.upload_size);
      check_cuda(
          cudaMemcpyAsync(slot.input.ptr + c.input_offset, c.upload, c.upload_size, cudaMemcpyHostToDevice, stream),
          what);
    }
  }
  check_cuda(cudaMemcpyAsync(slot.table_memory.ptr, slot.tables->base(), tables_bytes, cudaMemcpyHostToDevice, stream),
             what);
  auto* status = reinterpret_cast<std::int32_t*>(slot.status.ptr);
  check_cuda(cudaMemsetAsync(status, 0, std::size_t{count} * sizeof(std::int32_t), stream), what);

  addresses.status = status;
  for (BatchWork* w : works) w->launch(addresses, t);
  check_cuda(launch_copy_regions(reinterpret_cast<const CopyJob*>(t + at_copies),
                                 static_cast<std::uint32_t>(copies.size()), itemsize_, chain_.swap_unit(),
                                 reinterpret_cast<const std::uint8_t*>(t + at_fill), status, stream),
             "launching the scatter kernel");
  check_cuda(cudaMemcpyAsync(const_cast<std::int32_t*>(slot.host_status), status,
                             std::size_t{count} * sizeof(std::int32_t), cudaMemcpyDeviceToHost, stream),
             "reading chunk status from the device");
  slot.in_flight = true;
  read_stats().batches.fetch_add(1);
}

// Waits for a batch and deals with chunks the device refused.
void DeviceBatches::finish(Slot& slot) {
  if (!slot.in_flight) return;
  slot.in_flight = false;
  const auto t0 = std::chrono::steady_clock::now();
  check_cuda(cudaStreamSynchronize(slot.stream), "decoding chunks on the GPU");
  read_stats().gpu_wait_ns.fetch_add(elapsed_ns(t0));
  std::vector<std::uint32_t> rejected;
  for (std::uint32_t i = 0; i < slot.chunks.size(); ++i) {
    if (slot.host_status[i] != kDecodeOk) rejected.push_back(i);
  }
  // Works with result tables of their own (nvCOMP: a status other than success, or another
  // decoded size).
  for (const BatchWork* w : slot.works.in_phase_order()) w->rejected_chunks(rejected);
  std::sort(rejected.begin(), rejected.end());
  rejected.erase(std::unique(rejected.begin(), rejected.end()), rejected.end());
  if (on_kept) keep_copies(slot, rejected);
  for (const std::uint32_t i : rejected) {
    if (!on_chunk_error) {
      recover(slot, slot.chunks[i]);
      continue;
    }
    try {
      recover(slot, slot.chunks[i]);
    } catch (const Error&) {
      on_chunk_error(slot.chunks[i], std::current_exception());
    }
  }
}

// Copies of the decoded bytes of the batch's chunks marked `keep` (in the decode area, or a
// direct chunk's), each in stream-ordered device memory of its own, freed when the last
// holder lets go; handed to on_kept once all are complete.
void DeviceBatches::keep_copies(Slot& slot, const std::vector<std::uint32_t>& rejected) {
  BatchAddresses addresses;
  addresses.input = reinterpret_cast<const std::uint8_t*>(slot.input.ptr);
  addresses.slots = reinterpret_cast<std::uint8_t*>(slot.decoded.ptr);
  addresses.slot_bytes = slot_bytes_;
  addresses.input_offset = &slot.input_offsets;
  addresses.slot_index = &slot.slot_index;
  const int device = current_device();
  const char* what = "copying decoded chunks to keep on the device";
  std::vector<std::pair<std::uint32_t, Buffer>> kept;
  for (std::uint32_t i = 0; i < slot.chunks.size(); ++i) {
    const DeviceChunk& c = slot.chunks[i];
    if (!c.keep || !c.present || c.abandoned || std::binary_search(rejected.begin(), rejected.end(), i)) continue;
    void* p = nullptr;
    check_cuda(cudaMallocAsync(&p, std::max<std::uint64_t>(chunk_bytes_, 1), slot.stream), what);
    // Freed wherever the last holder lets go: on that device, in stream order after
    // whatever was queued there (every read that used it has waited for its batch).
    std::shared_ptr<void> owner(p, [device](void* q) {
      int previous = device;
      cudaGetDevice(&previous);
      if (previous != device) cudaSetDevice(device);
      cudaFreeAsync(q, cudaStreamPerThread);
      if (previous != device) cudaSetDevice(previous);
      cudaGetLastError();
    });
    const std::uint64_t from = c.direct ? c.direct_address : addresses.address(i, c.decoded);
    check_cuda(cudaMemcpyAsync(p, reinterpret_cast<const void*>(from), chunk_bytes_, cudaMemcpyDeviceToDevice,
                               slot.stream),
               what);
    kept.emplace_back(i, Buffer::wrap(std::move(owner), static_cast<std::byte*>(p), to_size(chunk_bytes_),
                                      MemoryKind::kDevice));
  }
  if (kept.empty()) return;
  check_cuda(cudaStreamSynchronize(slot.stream), what);
  for (auto& [i, copy] : kept) on_kept(slot.chunks[i], std::move(copy));
}

// The host decodes a refused chunk again: it reports the error it finds (naming the chunk),
// or its values go to their places.
void DeviceBatches::recover(Slot& slot, const DeviceChunk& c) {
  NDBuffer decoded;
  try {
    Buffer original = c.original;
    if (c.direct) {
      if (!reread_direct) throw InternalError("a chunk read straight into device memory cannot be read again");
      original = reread_direct(c);
    }
    decoded = prepared_->decode(original.view(), BufferPrototype::host());
    if (decoded.nbytes() != chunk_bytes_) {
      fail_data_loss("the codec chain decoded {} bytes, the chunk needs {}", decoded.nbytes(), chunk_bytes_);
    }
  } catch (const Error& e) {
    rethrow_with_context(e, describe_(c));
  }
  read_stats().gpu_rejections_recovered.fetch_add(1);
  // Place the host's values: they are in C order, native byte order.
  DeviceBuffer values, table;
  values.ensure(decoded.nbytes(), slot.stream, "allocating device memory");
  std::vector<CopyJob> jobs;
  const NDView& region = *c.region;
  for_each_box(c.runs, NDView::c_strides(spec_.shape, itemsize_), region.byte_strides,
               [&](const std::vector<CopyDim>& dims, std::int64_t src_offset, std::int64_t dst_offset) {
                 add_copy_jobs(jobs, reinterpret_cast<std::uint64_t>(values.ptr) + static_cast<std::uint64_t>(src_offset),
                               reinterpret_cast<std::uint64_t>(region.data) + static_cast<std::uint64_t>(dst_offset),
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

}  // namespace zarrkit::gpu
