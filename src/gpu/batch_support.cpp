#include "gpu/batch_support.h"

#include <set>

#include "core/checked_math.h"
#include "zarrkit/error.h"

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

void host_to_view(ByteView host, const NDView& view, cudaStream_t stream) {
  const std::uint32_t itemsize = static_cast<std::uint32_t>(view.dtype.size());
  const std::uint64_t bytes = checked_nbytes(view.shape, view.dtype);
  if (host.size() != bytes) {
    fail_invalid("copying {} bytes of host values into a device view of {} bytes", host.size(), bytes);
  }
  if (bytes == 0) return;
  const char* what = "copying host values into device memory";
  const auto c_strides = NDView::c_strides(view.shape, itemsize);
  if (view.byte_strides == c_strides) {
    check_cuda(cudaMemcpyAsync(view.data, host.data(), bytes, cudaMemcpyHostToDevice, stream), what);
    check_cuda(cudaStreamSynchronize(stream), what);
    return;
  }
  DeviceBuffer packed, table;
  packed.ensure(bytes, stream, "allocating device memory");
  std::vector<CopyDim> dims(view.ndim());
  for (std::size_t a = 0; a < view.ndim(); ++a) dims[a] = {view.shape[a], c_strides[a], view.byte_strides[a]};
  std::vector<CopyJob> jobs;
  add_copy_jobs(jobs, reinterpret_cast<std::uint64_t>(packed.ptr), reinterpret_cast<std::uint64_t>(view.data), dims,
                kNoChunk, itemsize);
  table.ensure(jobs.size() * sizeof(CopyJob), stream, "allocating device memory");
  check_cuda(cudaMemcpyAsync(packed.ptr, host.data(), bytes, cudaMemcpyHostToDevice, stream), what);
  check_cuda(cudaMemcpyAsync(table.ptr, jobs.data(), jobs.size() * sizeof(CopyJob), cudaMemcpyHostToDevice, stream), what);
  check_cuda(launch_copy_regions(reinterpret_cast<const CopyJob*>(table.ptr), static_cast<std::uint32_t>(jobs.size()),
                                 itemsize, 1, nullptr, nullptr, stream),
             what);
  packed.release(stream);
  table.release(stream);
  check_cuda(cudaStreamSynchronize(stream), what);
}

}  // namespace zarrkit::gpu
