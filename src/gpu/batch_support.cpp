#include "gpu/batch_support.h"

#include <set>

#include "gpu/device_scope.h"

namespace zarrkit::gpu {

cudaStream_t StreamPool::take() {
  const int device = current_device();
  {
    std::lock_guard lock(mutex_);
    auto& free = free_[device];
    if (!free.empty()) {
      cudaStream_t s = free.back();
      free.pop_back();
      return s;
    }
  }
  cudaStream_t s = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "creating a CUDA stream");
  std::lock_guard lock(mutex_);
  device_of_[s] = device;
  return s;
}

void StreamPool::give(cudaStream_t stream) {
  if (stream == nullptr) return;
  std::lock_guard lock(mutex_);
  const auto owner = device_of_.find(stream);
  if (owner != device_of_.end()) free_[owner->second].push_back(stream);
}

void keep_freed_device_memory_pooled() {
  static std::mutex mutex;
  static std::set<int> done;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  std::lock_guard lock(mutex);
  if (!done.insert(device).second) return;
  cudaMemPool_t pool;
  if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();
  cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
  cudaGetLastError();
}

void add_copy_jobs(std::vector<CopyJob>& jobs, std::uint64_t src, std::uint64_t dst, std::vector<CopyDim> dims,
                   std::uint32_t chunk, std::uint32_t itemsize) {
  std::vector<CopyDim> merged;  // innermost first
  for (std::size_t a = dims.size(); a-- > 0;) {
    const CopyDim& d = dims[a];
    if (d.count == 1) continue;
    if (!merged.empty()) {
      CopyDim& inner = merged.back();
      if (d.src == inner.src * static_cast<std::int64_t>(inner.count) &&
          d.dst == inner.dst * static_cast<std::int64_t>(inner.count)) {
        inner.count *= d.count;
        continue;
      }
    }
    merged.push_back(d);
  }
  if (merged.empty()) merged.push_back({1, static_cast<std::int64_t>(itemsize), static_cast<std::int64_t>(itemsize)});
  std::reverse(merged.begin(), merged.end());  // outermost first

  const std::size_t outer = merged.size() > static_cast<std::size_t>(kMaxCopyDims) ? merged.size() - kMaxCopyDims : 0;
  std::vector<std::uint64_t> index(outer, 0);
  for (;;) {
    std::int64_t src_offset = 0, dst_offset = 0;
    for (std::size_t a = 0; a < outer; ++a) {
      src_offset += static_cast<std::int64_t>(index[a]) * merged[a].src;
      dst_offset += static_cast<std::int64_t>(index[a]) * merged[a].dst;
    }
    CopyJob job{};
    job.src = src == kNoSource ? kNoSource : src + static_cast<std::uint64_t>(src_offset);
    job.dst = dst + static_cast<std::uint64_t>(dst_offset);
    job.ndim = static_cast<std::uint32_t>(merged.size() - outer);
    job.elements = 1;
    bool aligned = job.dst % itemsize == 0 && (job.src == kNoSource || job.src % itemsize == 0);
    for (std::uint32_t d = 0; d < job.ndim; ++d) {
      const CopyDim& m = merged[outer + d];
      job.counts[d] = m.count;
      job.src_strides[d] = m.src;
      job.dst_strides[d] = m.dst;
      job.elements *= m.count;
      aligned = aligned && m.src % static_cast<std::int64_t>(itemsize) == 0 &&
                m.dst % static_cast<std::int64_t>(itemsize) == 0;
    }
    job.chunk = chunk;
    job.aligned = aligned ? 1 : 0;
    jobs.push_back(job);
    std::size_t a = outer;
    while (a-- > 0) {
      if (++index[a] < merged[a].count) break;
      index[a] = 0;
    }
    if (a == static_cast<std::size_t>(-1)) break;
  }
}

}  // namespace zarrkit::gpu
