// Pieces shared by the GPU batch reader and writer: pinned staging arenas (the store's
// allocator during a batch), stream-ordered device buffers, and the copy geometry of a
// chunk task (the strided boxes the scatter and gather kernels move).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "core/block_runs.h"
#include "gpu/cuda_check.h"
#include "gpu/kernels.h"
#include "zarrkit/buffer.h"
#include "zarrkit/error.h"
#include "zarrkit/ndbuffer.h"

namespace zarrkit::gpu {

constexpr std::uint64_t kAlign = 256;
inline std::uint64_t align_up(std::uint64_t v, std::uint64_t a = kAlign) { return (v + a - 1) / a * a; }

// ---- Pinned staging -----------------------------------------------------------------------

// A bump allocator over one pinned block: stores read chunk values straight into it (it is
// the prototype's allocator), so a batch goes to the device in one copy. What does not fit
// comes from the ordinary heap and is copied separately; the next batch gets a larger arena.
class PinnedArena final : public Allocator {
 public:
  explicit PinnedArena(std::size_t capacity) : capacity_(capacity) {
    void* p = nullptr;
    check_cuda(cudaHostAlloc(&p, std::max<std::size_t>(capacity, 1), cudaHostAllocPortable),
               "allocating pinned staging memory");
    base_ = static_cast<std::byte*>(p);
  }
  ~PinnedArena() override { cudaFreeHost(base_); }
  PinnedArena(const PinnedArena&) = delete;
  PinnedArena& operator=(const PinnedArena&) = delete;

  MemoryKind kind() const override { return MemoryKind::kPinnedHost; }
  void* allocate(std::size_t bytes) override {
    if (bytes > static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max())) {
      fail_resource("cannot stage {} bytes", bytes);
    }
    const std::size_t rounded = align_up(std::max<std::size_t>(bytes, 1), 64);
    const std::size_t offset = used_.fetch_add(rounded);
    if (offset <= capacity_ && rounded <= capacity_ - offset) return base_ + offset;
    void* p = ::operator new(rounded, std::align_val_t{64}, std::nothrow);
    if (p == nullptr) fail_resource("cannot allocate {} bytes of host memory for staging", bytes);
    return p;
  }
  void deallocate(void* p, std::size_t) noexcept override {
    if (!contains(p)) ::operator delete(p, std::align_val_t{64});
  }

  bool contains(const void* p) const {
    const auto* b = static_cast<const std::byte*>(p);
    return b >= base_ && b < base_ + capacity_;
  }
  std::byte* base() const { return base_; }
  std::size_t capacity() const { return capacity_; }
  std::size_t used() const { return std::min(used_.load(), capacity_); }
  std::size_t requested() const { return used_.load(); }
  void reset() { used_.store(0); }

 private:
  std::byte* base_ = nullptr;
  std::size_t capacity_;
  std::atomic<std::size_t> used_{0};
};

// Pinned allocations are slow (milliseconds, and they stall other threads' CUDA calls), so
// arenas are kept for later requests: up to kKeepCount arenas and kKeepBytes of them for
// every device that reads. A read holds two per batch in flight (8 in flight when its host
// phases run at once), and several reads may run at once (Dask workers' threads, the parts
// of a multi-device read), so the pool keeps what a few concurrent reads hold rather than
// one read's worth; past the limits the smallest go first, then the largest.
class ArenaPool {
 public:
  std::unique_ptr<PinnedArena> take(std::size_t min_capacity) {
    int device = 0;
    const bool known = cudaGetDevice(&device) == cudaSuccess;
    {
      std::lock_guard lock(mutex_);
      if (known && std::find(devices_.begin(), devices_.end(), device) == devices_.end()) devices_.push_back(device);
      auto best = free_.end();
      for (auto it = free_.begin(); it != free_.end(); ++it) {
        if ((*it)->capacity() >= min_capacity && (best == free_.end() || (*it)->capacity() < (*best)->capacity())) {
          best = it;
        }
      }
      if (best != free_.end()) {
        auto arena = std::move(*best);
        free_.erase(best);
        free_bytes_ -= arena->capacity();
        arena->reset();
        return arena;
      }
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto arena = std::make_unique<PinnedArena>(min_capacity);
    arenas_made_.fetch_add(1);
    arena_ns_.fetch_add(static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count()));
    return arena;
  }
  void give(std::unique_ptr<PinnedArena> arena) {
    if (!arena) return;
    arena->reset();
    std::vector<std::unique_ptr<PinnedArena>> freed;  // freed outside the lock
    {
      std::lock_guard lock(mutex_);
      free_bytes_ += arena->capacity();
      free_.push_back(std::move(arena));
      const std::size_t devices = std::max<std::size_t>(1, devices_.size());
      const auto by_capacity = [](const auto& a, const auto& b) { return a->capacity() < b->capacity(); };
      while (free_.size() > kKeepCount * devices) {
        auto smallest = std::min_element(free_.begin(), free_.end(), by_capacity);
        free_bytes_ -= (*smallest)->capacity();
        freed.push_back(std::move(*smallest));
        free_.erase(smallest);
      }
      while (free_bytes_ > kKeepBytes * devices && !free_.empty()) {
        auto largest = std::max_element(free_.begin(), free_.end(), by_capacity);
        free_bytes_ -= (*largest)->capacity();
        freed.push_back(std::move(*largest));
        free_.erase(largest);
      }
    }
  }
  // Pinned arenas made (not taken from the pool) over the life of the process, and the time
  // spent making them: in a steady stream of reads both should stop growing.
  std::uint64_t arenas_made() const { return arenas_made_.load(); }
  std::uint64_t arena_ns() const { return arena_ns_.load(); }

 private:
  static constexpr std::size_t kKeepCount = 64;
  static constexpr std::uint64_t kKeepBytes = std::uint64_t{2} << 30;
  std::vector<int> devices_;  // the devices that took arenas
  std::mutex mutex_;
  std::vector<std::unique_ptr<PinnedArena>> free_;
  std::uint64_t free_bytes_ = 0;
  std::atomic<std::uint64_t> arenas_made_{0};
  std::atomic<std::uint64_t> arena_ns_{0};
};

// Never destroyed: freeing pinned memory while the CUDA runtime shuts down is not allowed.
inline ArenaPool& arena_pool() {
  static ArenaPool* pool = new ArenaPool;
  return *pool;
}

// ---- Streams ------------------------------------------------------------------------------

// Non-blocking streams kept for later requests (made once, never destroyed: destroying a
// stream while the CUDA runtime shuts down is not allowed). A stream belongs to the device
// that was current when it was made: take() hands out one of the current device's.
class StreamPool {
 public:
  cudaStream_t take();
  void give(cudaStream_t stream);

 private:
  std::mutex mutex_;
  std::map<int, std::vector<cudaStream_t>> free_;  // by device
  std::map<cudaStream_t, int> device_of_;
};
inline StreamPool& stream_pool() {
  static StreamPool* pool = new StreamPool;
  return *pool;
}

// ---- Device memory ------------------------------------------------------------------------

// Freed stream-ordered device memory stays in the current device's pool for the next batch.
void keep_freed_device_memory_pooled();

// Stream-ordered device memory that grows to the largest size asked for.
struct DeviceBuffer {
  std::byte* ptr = nullptr;
  std::size_t capacity = 0;

  void ensure(std::size_t bytes, cudaStream_t stream, const char* what) {
    if (bytes <= capacity && ptr != nullptr) return;
    release(stream);
    void* p = nullptr;
    check_cuda(cudaMallocAsync(&p, std::max<std::size_t>(bytes, 1), stream), what);
    ptr = static_cast<std::byte*>(p);
    capacity = bytes;
  }
  void release(cudaStream_t stream) noexcept {
    if (ptr != nullptr) cudaFreeAsync(ptr, stream);
    ptr = nullptr;
    capacity = 0;
  }
};

// ---- Copy geometry ------------------------------------------------------------------------

struct CopyDim {
  std::uint64_t count;
  std::int64_t src;
  std::int64_t dst;
};

// Adds the copy of one chunk's selected block: axes of extent 1 are dropped and axes that
// are contiguous in both source and destination are merged; what still has more axes than
// a job holds is split over its outer axes.
void add_copy_jobs(std::vector<CopyJob>& jobs, std::uint64_t src, std::uint64_t dst, std::vector<CopyDim> dims,
                   std::uint32_t chunk, std::uint32_t itemsize);

// Copies a device view (any strides) into contiguous host memory, on `stream`; returns when
// the copy is done.
Buffer view_to_host(const NDView& view, cudaStream_t stream);

// Copies contiguous host values (C order, view.shape) into a device view of any strides, on
// `stream`; returns when the copy is done.
void host_to_view(ByteView host, const NDView& view, cudaStream_t stream);

// Calls f(dims, src_offset, dst_offset) for every strided box of a task: on each axis the
// task selects one or more runs (AxisRun: chunk positions start + k * step going to output
// positions out_start + k * out_step), and every combination of runs is one box. Indexers
// that describe an axis by a single (chunk_selection, output_selection) pair are handled
// as one run per axis.
template <typename Task, typename F>
void for_each_box(const Task& task, const std::vector<std::int64_t>& chunk_strides,
                  const std::vector<std::int64_t>& region_strides, F&& f) {
  const std::size_t ndim = chunk_strides.size();
  std::vector<CopyDim> dims(ndim);
  if constexpr (requires { task.axes[0].runs(); }) {
    std::vector<std::size_t> run(ndim, 0);
    for (;;) {
      std::int64_t src_offset = 0, dst_offset = 0;
      for (std::size_t a = 0; a < ndim; ++a) {
        const auto& r = task.axes[a].runs()[run[a]];
        dims[a] = {r.count, chunk_strides[a] * static_cast<std::int64_t>(r.chunk_step),
                   region_strides[a] * static_cast<std::int64_t>(r.out_step)};
        src_offset += chunk_strides[a] * static_cast<std::int64_t>(r.chunk_start);
        dst_offset += region_strides[a] * static_cast<std::int64_t>(r.out_start);
      }
      f(dims, src_offset, dst_offset);
      std::size_t a = ndim;
      while (a-- > 0) {
        if (++run[a] < task.axes[a].runs().size()) break;
        run[a] = 0;
      }
      if (a == static_cast<std::size_t>(-1)) return;
    }
  } else {
    std::int64_t src_offset = 0, dst_offset = 0;
    for (std::size_t a = 0; a < ndim; ++a) {
      const auto& cs = task.chunk_selection[a];
      dims[a] = {cs.count, chunk_strides[a] * static_cast<std::int64_t>(cs.step), region_strides[a]};
      src_offset += chunk_strides[a] * static_cast<std::int64_t>(cs.start);
      dst_offset += region_strides[a] * static_cast<std::int64_t>(task.output_selection[a].start);
    }
    f(dims, src_offset, dst_offset);
  }
}

// The same for a block selected by per-axis runs (core/block_runs.h: a chunk task's, or an
// inner chunk's that a partial codec located).
template <typename F>
void for_each_box(const BlockRuns& runs, const std::vector<std::int64_t>& chunk_strides,
                  const std::vector<std::int64_t>& region_strides, F&& f) {
  const std::size_t ndim = chunk_strides.size();
  std::vector<CopyDim> dims(ndim);
  std::vector<std::size_t> run(ndim, 0);
  for (std::size_t a = 0; a < ndim; ++a) {
    if (runs[a].empty()) return;
  }
  for (;;) {
    std::int64_t src_offset = 0, dst_offset = 0;
    for (std::size_t a = 0; a < ndim; ++a) {
      const AxisRun& r = runs[a][run[a]];
      dims[a] = {r.count, chunk_strides[a] * static_cast<std::int64_t>(r.chunk_step),
                 region_strides[a] * static_cast<std::int64_t>(r.out_step)};
      src_offset += chunk_strides[a] * static_cast<std::int64_t>(r.chunk_start);
      dst_offset += region_strides[a] * static_cast<std::int64_t>(r.out_start);
    }
    f(dims, src_offset, dst_offset);
    std::size_t a = ndim;
    while (a-- > 0) {
      if (++run[a] < runs[a].size()) break;
      run[a] = 0;
    }
    if (a == static_cast<std::size_t>(-1)) return;
  }
}

// ---- One request --------------------------------------------------------------------------

template <typename T>
std::uint64_t append_table(std::vector<std::byte>& tables, const std::vector<T>& rows) {
  const std::uint64_t offset = align_up(tables.size(), 64);
  tables.resize(offset + rows.size() * sizeof(T));
  if (!rows.empty()) std::memcpy(tables.data() + offset, rows.data(), rows.size() * sizeof(T));
  return offset;
}

}  // namespace zarrkit::gpu
