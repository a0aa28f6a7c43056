// Writing from device memory: the GPU batch writer behind Array::write.
//
// Per batch of chunks: the selected data is gathered on the device into whole chunks in
// their stored layout (edge chunks padded with the fill value), checked against the fill
// value, byte-swapped where the bytes codec stores big-endian, shuffled and LZ4-encoded
// (one thread per blosc split or LZ4 block); the encoded blocks are packed, copied back in
// one transfer, framed on the host (blosc headers, numcodecs' size prefix, crc32c) and
// stored by the thread pool. Requests the device cannot encode (other codecs, or chunks
// only partly written, which need the old chunk) copy the data to the host and take the
// CPU path, so every write works.
#include "gpu/device_write.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/checked_math.h"
#include "engine/indexer.h"
#include "engine/node_io.h"
#include "gpu/batch_support.h"
#include "gpu/device_codecs.cuh"
#include "gpu/device_read.h"
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

// Copies a device view (any strides) into contiguous host memory.
Buffer view_to_host(const NDView& view, cudaStream_t stream) {
  const std::uint32_t itemsize = static_cast<std::uint32_t>(view.dtype.size());
  const std::uint64_t bytes = checked_nbytes(view.shape, view.dtype);
  Buffer host = Buffer::allocate(to_size(bytes));
  if (bytes == 0) return host;
  DeviceBuffer packed, table;
  packed.ensure(bytes, stream, "allocating device memory");
  const auto c_strides = NDView::c_strides(view.shape, itemsize);
  std::vector<CopyDim> dims(view.ndim());
  for (std::size_t a = 0; a < view.ndim(); ++a) dims[a] = {view.shape[a], view.byte_strides[a], c_strides[a]};
  std::vector<CopyJob> jobs;
  add_copy_jobs(jobs, reinterpret_cast<std::uint64_t>(view.data), reinterpret_cast<std::uint64_t>(packed.ptr), dims,
                kNoChunk, itemsize);
  table.ensure(jobs.size() * sizeof(CopyJob), stream, "allocating device memory");
  const char* what = "copying device data to the host";
  check_cuda(cudaMemcpyAsync(table.ptr, jobs.data(), jobs.size() * sizeof(CopyJob), cudaMemcpyHostToDevice, stream), what);
  check_cuda(launch_copy_regions(reinterpret_cast<const CopyJob*>(table.ptr), static_cast<std::uint32_t>(jobs.size()),
                                 itemsize, 1, nullptr, nullptr, stream),
             what);
  check_cuda(cudaMemcpyAsync(host.data(), packed.ptr, bytes, cudaMemcpyDeviceToHost, stream), what);
  packed.release(stream);
  table.release(stream);
  check_cuda(cudaStreamSynchronize(stream), what);
  return host;
}

class DeviceWriter {
 public:
  DeviceWriter(Array& array, const ChunkPlan& plan, const NDView& input, WritePlan wp)
      : array_(array), m_(array.metadata()), plan_(plan), input_(input), wp_(std::move(wp)),
        itemsize_(static_cast<std::uint32_t>(m_.dtype.size())), slot_(align_up(wp_.chunk_bytes)),
        write_empty_(current_config().write_empty_chunks) {
    const ByteView fill = m_.fill_value.bytes();
    fill_.assign(fill.begin(), fill.end());
    nan_mode_ = nan_mode(m_.dtype, fill);
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creating a CUDA stream");
  }
  ~DeviceWriter() {
    cudaStreamSynchronize(stream_);
    for (DeviceBuffer* b : {&chunks_, &scratch_, &encoded_, &packed_, &tables_, &sizes_, &differs_, &lz4_tables_}) {
      b->release(stream_);
    }
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
    arena_pool().give(std::move(staging_));
    cudaGetLastError();
  }

  void run() {
    keep_freed_device_memory_pooled();
    const std::uint64_t per_batch = std::clamp<std::uint64_t>(batch_budget() / slot_, 1, 16384);
    for (std::uint64_t first = 0; first < plan_.num_tasks(); first += per_batch) {
      batch(first, std::min(per_batch, plan_.num_tasks() - first));
    }
  }

 private:
  std::byte* staging(std::uint64_t bytes) {
    if (!staging_ || staging_->capacity() < bytes) {
      // Copies may still read the old block: let them finish before it goes back.
      check_cuda(cudaStreamSynchronize(stream_), "encoding chunks on the GPU");
      arena_pool().give(std::move(staging_));
      staging_ = arena_pool().take(std::max<std::uint64_t>(bytes + bytes / 4, 1u << 20));
    }
    return staging_->base();
  }

  template <typename T>
  const T* table_at(const std::vector<T>&, std::uint64_t at) const {
    return reinterpret_cast<const T*>(tables_.ptr + at);
  }

  void batch(std::uint64_t first, std::uint64_t count64) {
    const auto count = static_cast<std::uint32_t>(count64);
    const char* what = "encoding chunks on the GPU";
    std::vector<ChunkTask> tasks(count);
    for (std::uint32_t c = 0; c < count; ++c) plan_.task(first + c, tasks[c]);
    chunks_.ensure(count * slot_, stream_, "allocating device memory for chunks");
    const auto chunks_base = reinterpret_cast<std::uint64_t>(chunks_.ptr);
    const auto input_base = reinterpret_cast<std::uint64_t>(input_.data);

    // Gather the data into stored-layout chunks; edge chunks get the fill value first.
    std::vector<CopyJob> fills, gathers;
    for (std::uint32_t c = 0; c < count; ++c) {
      const std::uint64_t chunk = chunks_base + c * slot_;
      if (!tasks[c].is_entire_chunk) {
        const auto item = static_cast<std::int64_t>(itemsize_);
        add_copy_jobs(fills, kNoSource, chunk, {{wp_.chunk_bytes / itemsize_, item, item}}, kNoChunk, itemsize_);
      }
      for_each_box(tasks[c], wp_.stored_strides, input_.byte_strides,
                   [&](const std::vector<CopyDim>& dims, std::int64_t chunk_offset, std::int64_t region_offset) {
                     std::vector<CopyDim> reversed(dims.size());
                     for (std::size_t a = 0; a < dims.size(); ++a) reversed[a] = {dims[a].count, dims[a].dst, dims[a].src};
                     add_copy_jobs(gathers, input_base + static_cast<std::uint64_t>(region_offset),
                                   chunk + static_cast<std::uint64_t>(chunk_offset), reversed, kNoChunk, itemsize_);
                   });
    }
    // The encode jobs.
    std::vector<BlockJob> shuffles;
    std::vector<EncodeJob> encodes;
    std::vector<std::uint32_t> jobs_of_chunk(count + 1, 0);  // encode jobs of chunk c: [jobs_of_chunk[c], ...[c+1])
    const bool blosc = wp_.compressor == WritePlan::Compressor::kBlosc;
    const std::uint64_t lz4_capacity = align_up(wp_.chunk_bytes + wp_.chunk_bytes / 255 + 16);
    const std::uint64_t out_slot = wp_.compressor == WritePlan::Compressor::kLz4 ? lz4_capacity : slot_;
    if (wp_.compressor != WritePlan::Compressor::kNone) encoded_.ensure(count * out_slot, stream_, "allocating device memory");
    if (blosc && !wp_.layout.shuffles.empty()) scratch_.ensure(count * slot_, stream_, "allocating device memory");
    std::vector<bool> block_shuffled(wp_.layout.splits_per_block.size(), false);
    for (const BlockJob& b : wp_.layout.shuffles) block_shuffled[b.offset / wp_.layout.blocksize] = true;
    const auto scratch_base = reinterpret_cast<std::uint64_t>(scratch_.ptr);
    const auto encoded_base = reinterpret_cast<std::uint64_t>(encoded_.ptr);
    for (std::uint32_t c = 0; c < count; ++c) {
      jobs_of_chunk[c] = static_cast<std::uint32_t>(encodes.size());
      if (wp_.compressor == WritePlan::Compressor::kLz4) {
        encodes.push_back({chunks_base + c * slot_, encoded_base + c * out_slot, static_cast<std::uint32_t>(wp_.chunk_bytes),
                           static_cast<std::uint32_t>(lz4_capacity), 0, 0});
      } else if (blosc) {
        for (BlockJob b : wp_.layout.shuffles) {
          b.offset += c * slot_;
          shuffles.push_back(b);
        }
        for (const BloscSplit& split : wp_.layout.splits) {
          const bool shuffled = block_shuffled[split.offset / wp_.layout.blocksize];
          encodes.push_back({(shuffled ? scratch_base : chunks_base) + c * slot_ + split.offset,
                             encoded_base + c * out_slot + split.offset, split.size, split.size, 1,
                             static_cast<std::uint8_t>(wp_.blosc.compress ? 0 : 1)});
        }
      }
    }
    jobs_of_chunk[count] = static_cast<std::uint32_t>(encodes.size());

    std::vector<std::byte> table_bytes;
    const std::uint64_t at_fills = append_table(table_bytes, fills);
    const std::uint64_t at_gathers = append_table(table_bytes, gathers);
    const std::uint64_t at_shuffles = append_table(table_bytes, shuffles);
    const std::uint64_t at_encodes = append_table(table_bytes, encodes);
    const std::uint64_t at_fill = append_table(table_bytes, fill_);
    tables_.ensure(table_bytes.size(), stream_, "allocating device memory for job tables");
    std::byte* pinned = staging(table_bytes.size());
    std::memcpy(pinned, table_bytes.data(), table_bytes.size());
    check_cuda(cudaMemcpyAsync(tables_.ptr, pinned, table_bytes.size(), cudaMemcpyHostToDevice, stream_), what);
    const auto* fill = reinterpret_cast<const std::uint8_t*>(tables_.ptr + at_fill);
    auto* chunk_bytes = reinterpret_cast<std::uint8_t*>(chunks_.ptr);

    check_cuda(launch_copy_regions(table_at(fills, at_fills), static_cast<std::uint32_t>(fills.size()), itemsize_, 1, fill,
                                   nullptr, stream_),
               what);
    check_cuda(launch_copy_regions(table_at(gathers, at_gathers), static_cast<std::uint32_t>(gathers.size()), itemsize_, 1,
                                   fill, nullptr, stream_),
               what);
    differs_.ensure(count * sizeof(std::uint32_t), stream_, "allocating device memory");
    check_cuda(cudaMemsetAsync(differs_.ptr, 0, count * sizeof(std::uint32_t), stream_), what);
    check_cuda(launch_fill_check(chunk_bytes, count, wp_.chunk_bytes, slot_, itemsize_, fill, nan_mode_,
                                 reinterpret_cast<std::uint32_t*>(differs_.ptr), stream_),
               what);
    if (wp_.swap_unit > 1) check_cuda(launch_swap_units(chunk_bytes, count * slot_, wp_.swap_unit, stream_), what);
    check_cuda(launch_shuffle_blocks(table_at(shuffles, at_shuffles), static_cast<std::uint32_t>(shuffles.size()),
                                     chunk_bytes, reinterpret_cast<std::uint8_t*>(scratch_.ptr), stream_),
               what);
    sizes_.ensure(std::max<std::size_t>(encodes.size(), 1) * sizeof(std::uint32_t), stream_, "allocating device memory");
    if (!encodes.empty()) {
      lz4_tables_.ensure(encodes.size() * (std::uint64_t{1} << kLz4HashBits) * sizeof(std::uint32_t), stream_,
                         "allocating device memory for LZ4 hash tables");
      check_cuda(launch_encode_lz4(table_at(encodes, at_encodes), static_cast<std::uint32_t>(encodes.size()),
                                   reinterpret_cast<std::uint32_t*>(lz4_tables_.ptr),
                                   reinterpret_cast<std::uint32_t*>(sizes_.ptr), stream_),
                 what);
    }
    // Sizes and fill flags back, then pack the blocks of the chunks that are stored.
    const std::uint64_t small = (encodes.size() + count) * sizeof(std::uint32_t);
    pinned = staging(small);
    auto* sizes = reinterpret_cast<std::uint32_t*>(pinned);
    auto* differs = sizes + encodes.size();
    if (!encodes.empty()) {
      check_cuda(cudaMemcpyAsync(sizes, sizes_.ptr, encodes.size() * 4, cudaMemcpyDeviceToHost, stream_), what);
    }
    check_cuda(cudaMemcpyAsync(differs, differs_.ptr, count * 4, cudaMemcpyDeviceToHost, stream_), what);
    check_cuda(cudaStreamSynchronize(stream_), what);
    const std::vector<std::uint32_t> block_sizes(sizes, sizes + encodes.size());
    const std::vector<std::uint32_t> chunk_differs(differs, differs + count);

    std::vector<PackJob> packs;
    std::vector<std::uint64_t> packed_at;  // per encode job (or per chunk without a compressor)
    std::uint64_t total = 0;
    for (std::uint32_t c = 0; c < count; ++c) {
      const bool stored = chunk_differs[c] != 0 || write_empty_;
      if (wp_.compressor == WritePlan::Compressor::kNone) {
        packed_at.push_back(total);
        if (stored) {
          packs.push_back({chunks_base + c * slot_, total, wp_.chunk_bytes});
          total += align_up(wp_.chunk_bytes, 16);
        }
        continue;
      }
      for (std::uint32_t j = jobs_of_chunk[c]; j < jobs_of_chunk[c + 1]; ++j) {
        if (block_sizes[j] == 0) throw InternalError("the GPU LZ4 encoder ran out of room for a block");
        packed_at.push_back(total);
        if (stored) {
          packs.push_back({encodes[j].dst, total, block_sizes[j]});
          total += align_up(block_sizes[j], 16);
        }
      }
    }
    packed_.ensure(std::max<std::uint64_t>(total, 1), stream_, "allocating device memory");
    for (PackJob& p : packs) p.dst += reinterpret_cast<std::uint64_t>(packed_.ptr);
    std::vector<std::byte> pack_table;
    append_table(pack_table, packs);
    tables_.ensure(std::max<std::size_t>(pack_table.size(), 1), stream_, "allocating device memory for job tables");
    pinned = staging(pack_table.size() + total);
    std::memcpy(pinned, pack_table.data(), pack_table.size());
    std::byte* host_blocks = pinned + align_up(pack_table.size());
    if (!packs.empty()) {
      check_cuda(cudaMemcpyAsync(tables_.ptr, pinned, pack_table.size(), cudaMemcpyHostToDevice, stream_), what);
      check_cuda(launch_pack(reinterpret_cast<const PackJob*>(tables_.ptr), static_cast<std::uint32_t>(packs.size()), stream_),
                 what);
      check_cuda(cudaMemcpyAsync(host_blocks, packed_.ptr, total, cudaMemcpyDeviceToHost, stream_), what);
    }
    check_cuda(cudaStreamSynchronize(stream_), what);

    // Frame and store, chunk by chunk, on the pool.
    Store& store = *array_.store();
    shared_thread_pool().parallel_for(count, [&](std::size_t c) {
      const std::string key = m_.chunk_key(tasks[c].chunk_coords);
      const std::string store_key = join_key(array_.path(), key);
      try {
        if (chunk_differs[c] == 0 && !write_empty_) {
          store.erase(store_key);
          return;
        }
        Buffer frame;
        switch (wp_.compressor) {
          case WritePlan::Compressor::kNone:
            frame = Buffer::copy_of({host_blocks + packed_at[c], to_size(wp_.chunk_bytes)});
            break;
          case WritePlan::Compressor::kLz4: {
            const std::uint32_t j = jobs_of_chunk[c];
            frame = Buffer::allocate(4 + std::size_t{block_sizes[j]});
            for (int i = 0; i < 4; ++i) frame.data()[i] = static_cast<std::byte>(wp_.chunk_bytes >> (8 * i));
            std::memcpy(frame.data() + 4, host_blocks + packed_at[j], block_sizes[j]);
            break;
          }
          case WritePlan::Compressor::kBlosc: {
            std::vector<ByteView> payloads;
            for (std::uint32_t j = jobs_of_chunk[c]; j < jobs_of_chunk[c + 1]; ++j) {
              payloads.push_back({host_blocks + packed_at[j], block_sizes[j]});
            }
            frame = blosc_frame(wp_.layout, payloads);
            break;
          }
        }
        frame = add_checksums(wp_, std::move(frame));
        store.set(store_key, frame.view());
      } catch (const Error& e) {
        rethrow_with_context(e, fmt::format("array '{}' in {}, chunk '{}'", display_path(array_.path()),
                                            store.describe(), key));
      }
    });
    read_stats().chunks_encoded_on_gpu.fetch_add(count);
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
  cudaStream_t stream_ = nullptr;
  DeviceBuffer chunks_, scratch_, encoded_, packed_, tables_, sizes_, differs_, lz4_tables_;
  std::unique_ptr<PinnedArena> staging_;
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
  const ChunkPlan plan(m.shape, m.chunk_shape, selection);
  if (plan.num_tasks() == 0) return;
  const NDView input = broadcast_to_region(data, plan.selection());
  WritePlan wp = plan_write(m);
  // Whole chunks only (a partly written chunk needs its old values), each selected once per
  // axis (one run), so that no element is written twice within a launch.
  bool whole_chunks = wp.on_gpu;
  ChunkTask task;
  for (std::uint64_t i = 0; whole_chunks && i < plan.num_tasks(); ++i) {
    plan.task(i, task);
    whole_chunks = task.covers_whole_chunk;
    for (const auto& axis : task.axes) whole_chunks = whole_chunks && axis.runs().size() == 1;
  }
  if (!whole_chunks) {
    // The CPU path: the data goes to the host once, as the caller gave it.
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
    return;
  }
  DeviceWriter writer(array, plan, input, std::move(wp));
  writer.run();
}

}  // namespace zarrkit::gpu
