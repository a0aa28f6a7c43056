// The kernel of the device half of gzip and zlib (deflate_device.h): a warp per chunk, the
// code of src/gpu/deflate/deflate_stages.cuh (which the host tests run against zlib with
// emulated warps) with the hardware's warp operations.
#include "gpu/codecs/deflate_device.h"

#include "gpu/warp/device_warp.cuh"

namespace zarrkit::gpu {
namespace {

using namespace deflate;

constexpr unsigned kInflateWarps = 4;

__global__ void __launch_bounds__(kWarpLanes* kInflateWarps) inflate_kernel(DeflateLaunch L) {
  __shared__ DeflateWarpMemory memory[kInflateWarps];
  warp::DeviceWarp w = warp::this_warp();
  const std::uint32_t c = blockIdx.x * kInflateWarps + threadIdx.x / kWarpLanes;
  if (c < L.chunk_count) warp_inflate_chunk(w, L, c, memory[threadIdx.x / kWarpLanes]);
}

}  // namespace

cudaError_t launch_deflate_decode(const DeflateLaunch& L, cudaStream_t stream) {
  if (L.chunk_count == 0) return cudaSuccess;
  const unsigned blocks = (L.chunk_count + kInflateWarps - 1) / kInflateWarps;
  inflate_kernel<<<blocks, kWarpLanes * kInflateWarps, 0, stream>>>(L);
  return cudaGetLastError();
}

void load_deflate_kernels() {
  cudaFuncAttributes a;
  cudaFuncGetAttributes(&a, inflate_kernel);
}

}  // namespace zarrkit::gpu
