#include "gpu/codecs/delta_device.h"

#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>

namespace zarrkit::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 8;
constexpr std::uint64_t kTile = std::uint64_t{kThreads} * kItems;

// The running sum of `n` elements at `data`, a tile at a time, carrying each tile's total
// into the next. Unsigned arithmetic wraps as the host's does for signed and unsigned types.
template <typename T>
__device__ void running_sum(T* data, std::uint64_t n) {
  using Load = cub::BlockLoad<T, kThreads, kItems, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Store = cub::BlockStore<T, kThreads, kItems, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  using Scan = cub::BlockScan<T, kThreads>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename Scan::TempStorage scan;
  } temp;
  T carry = 0;
  for (std::uint64_t base = 0; base < n; base += kTile) {
    const int valid = static_cast<int>(n - base < kTile ? n - base : kTile);
    T items[kItems];
    Load(temp.load).Load(data + base, items, valid, T(0));
    __syncthreads();
    T total;
    Scan(temp.scan).InclusiveSum(items, items, total);
    __syncthreads();
    for (int k = 0; k < kItems; ++k) items[k] = static_cast<T>(items[k] + carry);
    Store(temp.store).Store(data + base, items, valid);
    __syncthreads();
    carry = static_cast<T>(carry + total);
  }
}

__global__ void __launch_bounds__(kThreads) delta_kernel(const DeltaJob* jobs, const std::int32_t* chunk_status) {
  const DeltaJob job = jobs[blockIdx.x];
  if (chunk_status[job.chunk] != 0) return;
  switch (job.width) {
    case 1: running_sum(reinterpret_cast<std::uint8_t*>(job.data), job.count); break;
    case 2: running_sum(reinterpret_cast<std::uint16_t*>(job.data), job.count); break;
    case 4: running_sum(reinterpret_cast<std::uint32_t*>(job.data), job.count); break;
    case 8: running_sum(reinterpret_cast<unsigned long long*>(job.data), job.count); break;
    default: break;
  }
}

}  // namespace

void load_delta_kernels() {
  cudaFuncAttributes attributes;
  cudaFuncGetAttributes(&attributes, delta_kernel);
  cudaGetLastError();
}

cudaError_t launch_delta_running_sums(const DeltaJob* jobs, std::uint32_t count, const std::int32_t* chunk_status,
                                      cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  delta_kernel<<<count, kThreads, 0, stream>>>(jobs, chunk_status);
  return cudaGetLastError();
}

}  // namespace zarrkit::gpu
