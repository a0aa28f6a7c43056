// Writing from device memory: the GPU batch writer behind Array::write.
//
// Per batch of chunks: the selected data is gathered on the device into whole chunks in
// their stored layout (edge chunks padded with the fill value), checked against the fill
// value, byte-swapped where the bytes codec stores big-endian, shuffled, LZ4-encoded (a
// warp per segment of 64 KiB) and framed on the device (write_frames.cuh: blosc headers,
// numcodecs' size prefix, the values one after another); the device computes each
// frame's CRC-32C. Only the stored values come back, in one copy into pinned memory; the
// host fills in the crc32c fields from the returned checksums and the thread pool stores
// the values straight from there. Several batches are in flight: while the pool stores one
// batch, the GPU encodes the next ones and the copy engine brings back the one after.
// Requests the device cannot encode (other codecs, or chunks only partly written, which
// need the old chunk) copy the data to the host and take the CPU path, so every write works.
#include "gpu/device_write.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "core/checked_math.h"
#include "engine/indexer.h"
#include "engine/node_io.h"
#include "gpu/batch_support.h"
#include "gpu/device_codecs.cuh"
#include "gpu/device_read.h"
#include "gpu/device_scope.h"
#include "gpu/device_settings.h"
#include "gpu/write_kernels.h"
#include "gpu/write_plan.h"
#include "zarrkit/config.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit::gpu {
namespace {

// 0: compare bits; else the NaN kind of a NaN fill value (see launch_fill_check).
int nan_mode(const DataType& dtype, ByteView fill) {
  if (dtype.kind() != DataTypeKind::kFloat && dtype.kind() != DataTypeKind::kBFloat16) return 0;
  if (fill.size() == 4) {
    float f;
    std::memcpy(&f, fill.data(), 4);
    return std::isnan(f) ? 1 : 0;
  }
  if (fill.size() == 8) {
    double d;
    std::memcpy(&d, fill.data(), 8);
    return std::isnan(d) ? 2 : 0;
  }
  if (fill.size() == 2) {
    const unsigned v = static_cast<unsigned>(fill[0]) | static_cast<unsigned>(fill[1]) << 8;
    if (dtype.kind() == DataTypeKind::kBFloat16) return (v & 0x7F80u) == 0x7F80u && (v & 0x7Fu) != 0 ? 4 : 0;
    return (v & 0x7C00u) == 0x7C00u && (v & 0x3FFu) != 0 ? 3 : 0;
  }
  return 0;
}

// One batch in flight: its stream, device memory, pinned memory and chunks.
struct WriteSlot {
  cudaStream_t stream = nullptr;
  cudaEvent_t results_ready = nullptr;  // frames, checksums and the total are on the host
  cudaEvent_t bytes_ready = nullptr;    // the packed values are on the host
  DeviceBuffer chunks, scratch, rest, packed, tables, work;
  std::unique_ptr<PinnedArena> small;  // the job tables up, then the results back
  std::unique_ptr<PinnedArena> bytes;  // the stored values back
  std::vector<ChunkTask> tasks;
  std::uint32_t count = 0;
  enum class State { kIdle, kLaunched, kCopying } state = State::kIdle;
  // Views into `small` once the results are back.
  const ChunkFrame* frames = nullptr;
  const std::uint32_t* crcs = nullptr;
  const std::uint64_t* total_at = nullptr;
  std::uint64_t total = 0;
};

class DeviceWriter {
 public:
  DeviceWriter(Array& array, const ChunkPlan& plan, const NDView& input, WritePlan wp)
      : array_(array), m_(array.metadata()), plan_(plan), input_(input), wp_(std::move(wp)),
        itemsize_(static_cast<std::uint32_t>(m_.dtype.size())), slot_(align_up(wp_.chunk_bytes)),
        write_empty_(current_config().write_empty_chunks) {
    const ByteView fill = m_.fill_value.bytes();
    fill_.assign(fill.begin(), fill.end());
    nan_mode_ = nan_mode(m_.dtype, fill);
    // A batch holds about 4x its chunks' bytes of device memory: the chunks, their shuffled
    // copies, the LZ4 rest area and the packed values.
    per_batch_ = std::clamp<std::uint64_t>(device_settings().batch_budget_bytes / std::max<std::uint64_t>(slot_, 1), 1, 16384);
    crc_segments_per_chunk_ = wp_.checksums.empty() ? 0 : static_cast<std::uint32_t>(ceil_div(wp_.frame.max_stored_bytes, kCrcSegmentBytes));
    const std::uint64_t batches = ceil_div(plan_.num_tasks(), per_batch_);
    slots_.resize(std::clamp<std::uint64_t>(batches, 1, kMaxSlots));
  }
  ~DeviceWriter() {
    for (WriteSlot& s : slots_) {
      if (s.stream == nullptr) continue;
      cudaStreamSynchronize(s.stream);
      for (DeviceBuffer* b : {&s.chunks, &s.scratch, &s.rest, &s.packed, &s.tables, &s.work}) b->release(s.stream);
      cudaStreamSynchronize(s.stream);
      if (s.results_ready != nullptr) cudaEventDestroy(s.results_ready);
      if (s.bytes_ready != nullptr) cudaEventDestroy(s.bytes_ready);
      cudaStreamDestroy(s.stream);
      arena_pool().give(std::move(s.small));
      arena_pool().give(std::move(s.bytes));
    }
    if (template_stream_ != nullptr) {
      template_.release(template_stream_);
      cudaStreamSynchronize(template_stream_);
      cudaStreamDestroy(template_stream_);
    }
    cudaGetLastError();
  }

  void run() {
    keep_freed_device_memory_pooled();
    upload_template();
    for (WriteSlot& s : slots_) {
      check_cuda(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "creating a CUDA stream");
      check_cuda(cudaEventCreateWithFlags(&s.results_ready, cudaEventDisableTiming), "creating a CUDA event");
      check_cuda(cudaEventCreateWithFlags(&s.bytes_ready, cudaEventDisableTiming), "creating a CUDA event");
    }
    const std::uint64_t batches = ceil_div(plan_.num_tasks(), per_batch_);
    std::uint64_t launched = 0;
    auto launch_next = [&] {
      const std::uint64_t first = launched * per_batch_;
      launch(slots_[launched % slots_.size()], first, std::min(per_batch_, plan_.num_tasks() - first));
      ++launched;
    };
    while (launched < std::min<std::uint64_t>(batches, slots_.size())) launch_next();
    for (std::uint64_t b = 0; b < batches; ++b) {
      WriteSlot& slot = slots_[b % slots_.size()];
      start_copy_back(slot, true);
      // The next batch's copy back runs while this one is stored, when it is ready.
      if (b + 1 < launched) start_copy_back(slots_[(b + 1) % slots_.size()], false);
      store(slot);
      if (launched < batches) launch_next();  // into the slot just freed
    }
  }

 private:
  static constexpr std::uint64_t kMaxSlots = 3;

  // The frame template's streams and segments, once for the whole request.
  void upload_template() {
    check_cuda(cudaStreamCreateWithFlags(&template_stream_, cudaStreamNonBlocking), "creating a CUDA stream");
    std::vector<std::byte> bytes;
    at_streams_ = append_table(bytes, wp_.streams);
    at_segments_ = append_table(bytes, wp_.segments);
    template_.ensure(std::max<std::size_t>(bytes.size(), 1), template_stream_, "allocating device memory for the frame plan");
    check_cuda(cudaMemcpyAsync(template_.ptr, bytes.data(), bytes.size(), cudaMemcpyHostToDevice, template_stream_),
               "copying the frame plan to the device");
    check_cuda(cudaStreamSynchronize(template_stream_), "copying the frame plan to the device");
  }

  static std::byte* pinned(std::unique_ptr<PinnedArena>& arena, std::uint64_t bytes) {
    if (!arena || arena->capacity() < bytes) {
      arena_pool().give(std::move(arena));
      arena = arena_pool().take(std::max<std::uint64_t>(bytes + bytes / 4, 1u << 20));
    }
    return arena->base();
  }

  // Queues the batch's work on its stream: gather, fill check, byte order, shuffle, frames,
  // checksums, and the copy back of the small results.
  void launch(WriteSlot& slot, std::uint64_t first, std::uint64_t count64) {
    const auto count = static_cast<std::uint32_t>(count64);
    const char* what = "encoding chunks on the GPU";
    const cudaStream_t stream = slot.stream;
    slot.count = count;
    slot.tasks.resize(count);
    for (std::uint32_t c = 0; c < count; ++c) plan_.task(first + c, slot.tasks[c]);
    const FrameTemplate& t = wp_.frame;
    slot.chunks.ensure(count * slot_, stream, "allocating device memory for chunks");
    if (!wp_.layout.shuffles.empty()) slot.scratch.ensure(count * slot_, stream, "allocating device memory");
    slot.rest.ensure(std::max<std::uint64_t>(count * t.rest_bytes, 1), stream, "allocating device memory");
    slot.packed.ensure(count * t.max_stored_bytes, stream, "allocating device memory for encoded chunks");
    const auto chunks_base = reinterpret_cast<std::uint64_t>(slot.chunks.ptr);
    const auto input_base = reinterpret_cast<std::uint64_t>(input_.data);

    // Gather the data into stored-layout chunks; edge chunks get the fill value first.
    std::vector<CopyJob> fills, gathers;
    for (std::uint32_t c = 0; c < count; ++c) {
      const ChunkTask& task = slot.tasks[c];
      const std::uint64_t chunk = chunks_base + c * slot_;
      if (!task.is_entire_chunk) {
        const auto item = static_cast<std::int64_t>(itemsize_);
        add_copy_jobs(fills, kNoSource, chunk, {{wp_.chunk_bytes / itemsize_, item, item}}, kNoChunk, itemsize_);
      }
      for_each_box(task, wp_.stored_strides, input_.byte_strides,
                   [&](const std::vector<CopyDim>& dims, std::int64_t chunk_offset, std::int64_t region_offset) {
                     std::vector<CopyDim> reversed(dims.size());
                     for (std::size_t a = 0; a < dims.size(); ++a) reversed[a] = {dims[a].count, dims[a].dst, dims[a].src};
                     add_copy_jobs(gathers, input_base + static_cast<std::uint64_t>(region_offset),
                                   chunk + static_cast<std::uint64_t>(chunk_offset), reversed, kNoChunk, itemsize_);
                   });
    }
    std::vector<BlockJob> shuffles;
    for (std::uint32_t c = 0; c < count; ++c) {
      for (BlockJob b : wp_.layout.shuffles) {
        b.offset += c * slot_;
        shuffles.push_back(b);
      }
    }
    std::vector<std::uint32_t> crc_segment_jobs(std::uint64_t{count} * crc_segments_per_chunk_);
    for (std::uint64_t s = 0; s < crc_segment_jobs.size(); ++s) crc_segment_jobs[s] = static_cast<std::uint32_t>(s / crc_segments_per_chunk_);

    std::vector<std::byte> table_bytes;
    const std::uint64_t at_fills = append_table(table_bytes, fills);
    const std::uint64_t at_gathers = append_table(table_bytes, gathers);
    const std::uint64_t at_shuffles = append_table(table_bytes, shuffles);
    const std::uint64_t at_fill = append_table(table_bytes, fill_);
    const std::uint64_t at_crc_segments = append_table(table_bytes, crc_segment_jobs);
    slot.tables.ensure(table_bytes.size(), stream, "allocating device memory for job tables");
    const std::byte* tables = slot.tables.ptr;

    // Per-chunk working tables, one device allocation.
    const std::uint64_t segments = std::uint64_t{count} * t.num_segments, streams = std::uint64_t{count} * t.num_streams;
    std::uint64_t work = 0;
    auto take = [&](std::uint64_t bytes) {
      const std::uint64_t at = work;
      work = align_up(work + std::max<std::uint64_t>(bytes, 1));
      return at;
    };
    const std::uint64_t w_differs = take(count * sizeof(std::uint32_t));
    const std::uint64_t w_encoded = take(segments * sizeof(Lz4Segment));
    const std::uint64_t w_pieces = take(segments * sizeof(Lz4Piece));
    const std::uint64_t w_places = take(streams * sizeof(StreamPlace));
    const std::uint64_t w_crc_jobs = take(count * sizeof(CrcJob));
    const std::uint64_t w_partial = take(crc_segment_jobs.size() * sizeof(std::uint32_t));
    // Read back together: frames, checksums, total.
    const std::uint64_t back_frames = 0;
    const std::uint64_t back_crcs = align_up(count * sizeof(ChunkFrame), 16);
    const std::uint64_t back_total = align_up(back_crcs + count * sizeof(std::uint32_t), 16);
    const std::uint64_t back_bytes = back_total + sizeof(std::uint64_t);
    const std::uint64_t w_back = take(back_bytes);
    slot.work.ensure(work, stream, "allocating device memory");
    std::byte* w = slot.work.ptr;
    const std::uint64_t results_at = align_up(table_bytes.size());
    std::byte* small = pinned(slot.small, results_at + back_bytes);
    std::memcpy(small, table_bytes.data(), table_bytes.size());
    check_cuda(cudaMemcpyAsync(slot.tables.ptr, small, table_bytes.size(), cudaMemcpyHostToDevice, stream), what);
    auto* differs = reinterpret_cast<std::uint32_t*>(w + w_differs);

    const auto* fill = reinterpret_cast<const std::uint8_t*>(tables + at_fill);
    auto* chunk_bytes = reinterpret_cast<std::uint8_t*>(slot.chunks.ptr);
    check_cuda(launch_copy_regions(reinterpret_cast<const CopyJob*>(tables + at_fills), static_cast<std::uint32_t>(fills.size()),
                                   itemsize_, 1, fill, nullptr, stream),
               what);
    read_old_values(slot);
    check_cuda(launch_copy_regions(reinterpret_cast<const CopyJob*>(tables + at_gathers),
                                   static_cast<std::uint32_t>(gathers.size()), itemsize_, 1, fill, nullptr, stream),
               what);
    check_cuda(cudaMemsetAsync(differs, 0, count * sizeof(std::uint32_t), stream), what);
    check_cuda(launch_fill_check(chunk_bytes, count, wp_.chunk_bytes, slot_, itemsize_, fill, nan_mode_, differs, stream), what);
    if (wp_.swap_unit > 1) check_cuda(launch_swap_units(chunk_bytes, count * slot_, wp_.swap_unit, stream), what);
    check_cuda(launch_shuffle_blocks(reinterpret_cast<const BlockJob*>(tables + at_shuffles),
                                     static_cast<std::uint32_t>(shuffles.size()), chunk_bytes,
                                     reinterpret_cast<std::uint8_t*>(slot.scratch.ptr), stream),
               what);
    FrameBatch b;
    b.frame = t;
    b.streams = reinterpret_cast<const WriteStream*>(template_.ptr + at_streams_);
    b.segments = reinterpret_cast<const WriteSegment*>(template_.ptr + at_segments_);
    b.count = count;
    b.slot = slot_;
    b.chunks = chunk_bytes;
    b.scratch = reinterpret_cast<const std::uint8_t*>(slot.scratch.ptr);
    b.differs = differs;
    b.write_empty = write_empty_ ? 1 : 0;
    b.encoded = reinterpret_cast<Lz4Segment*>(w + w_encoded);
    b.pieces = reinterpret_cast<Lz4Piece*>(w + w_pieces);
    b.places = reinterpret_cast<StreamPlace*>(w + w_places);
    b.rest = reinterpret_cast<std::uint8_t*>(slot.rest.ptr);
    b.frames = reinterpret_cast<ChunkFrame*>(w + w_back + back_frames);
    b.crcs = reinterpret_cast<CrcJob*>(w + w_crc_jobs);
    b.crc_segments_per_chunk = crc_segments_per_chunk_;
    b.total = reinterpret_cast<std::uint64_t*>(w + w_back + back_total);
    b.packed = reinterpret_cast<std::uint8_t*>(slot.packed.ptr);
    check_cuda(launch_plan_frames(b, stream), what);
    check_cuda(launch_write_frames(b, stream), what);
    auto* crc_results = reinterpret_cast<std::uint32_t*>(w + w_back + back_crcs);
    if (!wp_.checksums.empty()) {
      check_cuda(launch_crc32c(b.crcs, count, reinterpret_cast<const std::uint32_t*>(tables + at_crc_segments),
                               static_cast<std::uint32_t>(crc_segment_jobs.size()), b.packed,
                               reinterpret_cast<std::uint32_t*>(w + w_partial), nullptr, stream, crc_results),
                 "computing checksums on the GPU");
    }
    std::byte* host = small + results_at;
    check_cuda(cudaMemcpyAsync(host, w + w_back, back_bytes, cudaMemcpyDeviceToHost, stream), what);
    check_cuda(cudaEventRecord(slot.results_ready, stream), what);
    slot.frames = reinterpret_cast<const ChunkFrame*>(host + back_frames);
    slot.crcs = reinterpret_cast<const std::uint32_t*>(host + back_crcs);
    slot.total_at = reinterpret_cast<const std::uint64_t*>(host + back_total);
    slot.state = WriteSlot::State::kLaunched;
  }

  // Once the batch's results are back: queue the copy of its stored values into pinned
  // memory. Without `wait`, only if they are back already.
  void start_copy_back(WriteSlot& slot, bool wait) {
    if (slot.state != WriteSlot::State::kLaunched) return;
    const char* what = "encoding chunks on the GPU";
    if (wait) {
      const auto t0 = std::chrono::steady_clock::now();
      check_cuda(cudaEventSynchronize(slot.results_ready), what);
      add_ns(read_stats().write_gpu_wait_ns, t0);
    } else {
      const cudaError_t e = cudaEventQuery(slot.results_ready);
      if (e == cudaErrorNotReady) return;
      check_cuda(e, what);
    }
    for (std::uint32_t c = 0; c < slot.count; ++c) {
      if (slot.frames[c].status != 0) throw InternalError("the GPU LZ4 encoder wrote a block larger than LZ4's bound");
    }
    slot.total = *slot.total_at;
    std::byte* host = pinned(slot.bytes, slot.total);
    if (slot.total > 0) {
      check_cuda(cudaMemcpyAsync(host, slot.packed.ptr, slot.total, cudaMemcpyDeviceToHost, slot.stream),
                 "copying encoded chunks to the host");
    }
    check_cuda(cudaEventRecord(slot.bytes_ready, slot.stream), what);
    slot.state = WriteSlot::State::kCopying;
  }

  // Waits for the batch's values, fills in the checksums and stores them on the pool.
  void store(WriteSlot& slot) {
    auto t0 = std::chrono::steady_clock::now();
    check_cuda(cudaEventSynchronize(slot.bytes_ready), "copying encoded chunks to the host");
    add_ns(read_stats().write_gpu_wait_ns, t0);
    t0 = std::chrono::steady_clock::now();
    Store& store = *array_.store();
    std::byte* values = slot.bytes->base();
    const std::uint64_t reserve = wp_.frame.reserve_start + wp_.frame.reserve_end;
    shared_thread_pool().parallel_for(slot.count, [&](std::size_t c) {
      const std::string key = m_.chunk_key(slot.tasks[c].chunk_coords);
      const std::string store_key = join_key(array_.path(), key);
      try {
        const ChunkFrame& frame = slot.frames[c];
        if (!frame.stored) {
          store.erase(store_key);
          return;
        }
        std::byte* value = values + frame.at;
        fill_checksums(wp_, slot.crcs[c], frame.frame_bytes, value);
        store.set(store_key, ByteView{value, to_size(reserve + frame.frame_bytes)});
      } catch (const Error& e) {
        rethrow_with_context(e, fmt::format("array '{}' in {}, chunk '{}'", display_path(array_.path()),
                                            store.describe(), key));
      }
    });
    add_ns(read_stats().write_store_ns, t0);
    read_stats().chunks_encoded_on_gpu.fetch_add(slot.count);
    slot.state = WriteSlot::State::kIdle;
  }

  static void add_ns(std::atomic<std::uint64_t>& counter, std::chrono::steady_clock::time_point since) {
    counter.fetch_add(static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count()));
  }

  // Chunks the batch writes in part: their old values (the fill value where absent) are read
  // into their slots, laid out as stored, before the new values are gathered over them.
  void read_old_values(WriteSlot& slot) {
    bool any = false;
    for (std::uint32_t c = 0; c < slot.count && !any; ++c) any = !slot.tasks[c].covers_whole_chunk;
    if (!any) return;
    // The device reader works on streams of its own: the slot's memory and its fill must be
    // in place first.
    check_cuda(cudaStreamSynchronize(slot.stream), "writing chunks in part from device memory");
    for (std::uint32_t c = 0; c < slot.count; ++c) {
      const ChunkTask& task = slot.tasks[c];
      if (task.covers_whole_chunk) continue;
      Selection box;
      Shape extent;
      for (std::size_t a = 0; a < m_.ndim(); ++a) {
        const std::uint64_t begin = task.chunk_coords[a] * m_.chunk_shape[a];
        const std::uint64_t end = std::min(begin + m_.chunk_shape[a], m_.shape[a]);
        box.push_back(Slice{static_cast<std::int64_t>(begin), static_cast<std::int64_t>(end), 1});
        extent.push_back(end - begin);
      }
      const NDView old_values{slot.chunks.ptr + c * slot_, extent, wp_.stored_strides, m_.dtype, MemoryKind::kDevice};
      read_into_device(array_, box, old_values);
      read_stats().chunks_merged_on_gpu.fetch_add(1);
    }
  }

  Array& array_;
  const ArrayMetadata& m_;
  const ChunkPlan& plan_;
  const NDView input_;
  const WritePlan wp_;
  const std::uint32_t itemsize_;
  const std::uint64_t slot_;
  const bool write_empty_;
  std::vector<std::byte> fill_;
  int nan_mode_ = 0;
  std::uint64_t per_batch_ = 1;
  std::uint32_t crc_segments_per_chunk_ = 0;
  cudaStream_t template_stream_ = nullptr;
  DeviceBuffer template_;
  std::uint64_t at_streams_ = 0, at_segments_ = 0;
  std::vector<WriteSlot> slots_;
};

}  // namespace

void write_from_device(Array& array, const Selection& selection, const NDView& data) {
  const ArrayMetadata& m = array.metadata();
  const std::string where = fmt::format("array '{}' in {}", display_path(array.path()), array.store()->describe());
  if (data.kind != MemoryKind::kDevice) fail_invalid("{}: write_from_device needs a device view", where);
  require_device("writing from device memory");
  if (m.dtype.is_variable_length() || m.dtype.size() == 0) {
    fail_unsupported("{}: writing the variable-length type {} from device memory is not supported", where, m.dtype.name());
  }
  // The CPU path: the data goes to the host once, as the caller gave it.
  const auto write_through_host = [&] {
    cudaStream_t stream;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "creating a CUDA stream");
    Buffer host;
    try {
      host = view_to_host(data, stream);
    } catch (...) {
      cudaStreamDestroy(stream);
      throw;
    }
    cudaStreamDestroy(stream);
    read_stats().device_writes_on_cpu.fetch_add(1);
    array.write(selection, NDView{host.data(), data.shape, NDView::c_strides(data.shape, data.dtype.size()), data.dtype,
                                  MemoryKind::kHost});
  };
  std::optional<ScopedDevice> its_device;  // the data's device runs the write
  if (data.num_elements() != 0) its_device.emplace(device_holding(data.data, where));
  // The device batches encode chunks of one shape: a rectilinear grid's chunks differ, so its
  // writes take the host's path (each chunk with the chain prepared for its own shape).
  if (m.is_rectilinear()) {
    write_through_host();
    return;
  }
  const ChunkPlan plan(m.shape, m.chunk_shape, selection);
  if (plan.num_tasks() == 0) return;
  WritePlan wp = plan_write(m);
  // Each chunk selected once per axis (one run), so that no element is written twice within
  // a launch; chunks written in part get their old values read into device memory first.
  bool on_device = wp.on_gpu;
  ChunkTask task;
  for (std::uint64_t i = 0; on_device && i < plan.num_tasks(); ++i) {
    plan.task(i, task);
    for (const auto& axis : task.axes) on_device = on_device && axis.runs().size() == 1;
  }
  if (!on_device) {
    write_through_host();
    return;
  }
  const NDView input = broadcast_to_region(data, plan.selection());
  DeviceWriter writer(array, plan, input, std::move(wp));
  writer.run();
}

}  // namespace zarrkit::gpu
