// The kernels of the device half of zstd (zstd_device.h): one launch per stage over every
// block (or frame, or chunk) of a batch. The stages are src/gpu/zstd/'s, which the host
// tests run against libzstd (the warp-level ones with emulated warps); here they get the
// hardware's warp operations and the launches' shapes.
#include "gpu/codecs/zstd_device.h"

#include <algorithm>

#include "gpu/warp/device_warp.cuh"
#include "gpu/zstd/zstd_batch.h"
#include "gpu/zstd/zstd_stages.cuh"

namespace zarrkit::gpu {
namespace {

using namespace zstd;
using warp::DeviceWarp;
using warp::this_warp;

constexpr unsigned kLiteralWarps = 4;
constexpr unsigned kExecuteWarps = 4;
constexpr unsigned kChecksumWarps = 4;

__global__ void __launch_bounds__(kWarpLanes* kLiteralWarps) literals_kernel(ZstdLaunch L) {
  __shared__ LiteralsWarpMemory memory[kLiteralWarps];
  DeviceWarp w = this_warp();
  const std::uint32_t b = blockIdx.x * kLiteralWarps + threadIdx.x / kWarpLanes;
  if (b < L.block_count) warp_literals(w, L, b, memory[threadIdx.x / kWarpLanes]);
}

// Lane t of `lanes` decodes blocks t, t + lanes, ... with its memory in shared memory (the
// launch's dynamic shared memory, one SequenceLaneMemory per thread) for the thread block's
// first `shared_lanes` threads, in `spilled` (global memory, blockDim.x - shared_lanes per
// thread block) for the others. shared_lanes is a multiple of the warp size or blockDim.x.
__global__ void __launch_bounds__(kMaxSequenceBlockLanes)
    sequences_kernel(ZstdLaunch L, std::uint32_t lanes, std::uint32_t shared_lanes, SequenceLaneMemory* spilled) {
  extern __shared__ SequenceLaneMemory lane_memory[];
  __shared__ SequenceCodes codes;
  fill_sequence_codes(codes, threadIdx.x, blockDim.x);
  __syncthreads();
  DeviceWarp w = this_warp();
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  // Two copies of the loop, so that the shared lanes' loads are shared-memory loads.
  if (threadIdx.x < shared_lanes) {
    for (std::uint32_t b = t; b < L.block_count; b += lanes) lane_sequences(w, L, b, codes, lane_memory[threadIdx.x]);
  } else {
    SequenceLaneMemory& own = spilled[blockIdx.x * (blockDim.x - shared_lanes) + (threadIdx.x - shared_lanes)];
    for (std::uint32_t b = t; b < L.block_count; b += lanes) lane_sequences(w, L, b, codes, own);
  }
}

// The sequences stage's launch on the current device (zstd_sequence_shape), where a thread
// block has at most as many lanes in shared memory as it holds.
struct SequencesLaunch {
  unsigned grid = 0, threads = 0, shared_lanes = 0;
  std::size_t shared_bytes = 0;
  std::uint64_t spilled_lanes = 0;  // lanes with their memory in global memory
  SequenceLaneMemory* spilled = nullptr;

  void launch(const ZstdLaunch& L, cudaStream_t stream) const {
    sequences_kernel<<<grid, threads, shared_bytes, stream>>>(L, grid * threads, shared_lanes, spilled);
  }
};

// The attribute is the device's: set at every launch.
cudaError_t sequences_shape(std::uint32_t block_count, int device, int sms, bool global_lanes, SequencesLaunch* out) {
  int optin = 0;
  cudaFuncAttributes a;
  cudaError_t e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (e == cudaSuccess) e = cudaFuncGetAttributes(&a, sequences_kernel);
  if (e != cudaSuccess) return e;
  const std::uint64_t room = static_cast<std::uint64_t>(optin) - std::min<std::uint64_t>(optin, a.sharedSizeBytes);
  const std::uint32_t most = std::min(zstd_sequence_block_lanes(room), static_cast<std::uint32_t>(a.maxThreadsPerBlock));
  if (most == 0) return cudaErrorInvalidConfiguration;
  e = cudaFuncSetAttribute(sequences_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(std::size_t{most} * sizeof(SequenceLaneMemory)));
  int per_sm = 0;
  if (e == cudaSuccess) {
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sequences_kernel, static_cast<int>(most),
                                                      std::size_t{most} * sizeof(SequenceLaneMemory));
  }
  if (e != cudaSuccess) return e;
  const SequenceStageShape s =
      zstd_sequence_shape(block_count, most, static_cast<std::uint32_t>(sms * std::max(per_sm, 1)), global_lanes);
  out->threads = s.lanes_per_block;
  out->grid = s.thread_blocks;
  out->shared_lanes = s.shared_lanes;
  out->shared_bytes = std::size_t{s.shared_lanes} * sizeof(SequenceLaneMemory);
  out->spilled_lanes = std::uint64_t{s.lanes_per_block - s.shared_lanes} * s.thread_blocks;
  out->spilled = nullptr;
  return cudaSuccess;
}

// The shape of the sequences stage, with the global memory its spilled lanes need (freed
// after the launch on `stream`). Where that memory cannot be had, the lanes in shared memory
// take the blocks in passes.
cudaError_t plan_sequences(std::uint32_t block_count, int device, int sms, cudaStream_t stream, SequencesLaunch* out) {
  cudaError_t e = sequences_shape(block_count, device, sms, true, out);
  if (e != cudaSuccess || out->spilled_lanes == 0) return e;
  void* memory = nullptr;
  if (cudaMallocAsync(&memory, out->spilled_lanes * sizeof(SequenceLaneMemory), stream) == cudaSuccess) {
    out->spilled = static_cast<SequenceLaneMemory*>(memory);
    return cudaSuccess;
  }
  cudaGetLastError();  // the failed allocation is not the launch's error
  return sequences_shape(block_count, device, sms, false, out);
}

__global__ void scan_kernel(ZstdLaunch L) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= L.chunk_count) return;
  std::int32_t* status = L.status + L.chunks[c].status;
  if (this_warp().failed(status)) return;
  const std::int32_t e = scan_chunk(L, c);
  if (e != kOk) this_warp().fail(status, e);
}

__global__ void __launch_bounds__(kWarpLanes* kExecuteWarps) execute_kernel(ZstdLaunch L) {
  DeviceWarp w = this_warp();
  warp_execute_loop(w, L);
}

__global__ void __launch_bounds__(kWarpLanes* kChecksumWarps) checksum_kernel(ZstdLaunch L) {
  DeviceWarp w = this_warp();
  const std::uint32_t f = blockIdx.x * kChecksumWarps + threadIdx.x / kWarpLanes;
  if (f < L.frame_count) warp_checksum(w, L, f);
}

unsigned blocks_for(std::uint64_t items, unsigned per_block) {
  return static_cast<unsigned>((items + per_block - 1) / per_block);
}

// The literals and sequences stages read only the input and the walk's tables and write
// different areas, so they run side by side: the sequences kernel (few lanes, each a chain of
// dependent loads, and most of the shared memory) on `stream`, the literals kernel in what
// it leaves, on a second stream that `stream` joins before the scan.
cudaError_t literals_beside_sequences(const ZstdLaunch& L, cudaStream_t stream, unsigned literal_blocks,
                                      const SequencesLaunch& sequences) {
  cudaStream_t side = nullptr;
  cudaEvent_t forked = nullptr, joined = nullptr;
  cudaError_t e = cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaEventCreateWithFlags(&forked, cudaEventDisableTiming);
  if (e == cudaSuccess) e = cudaEventCreateWithFlags(&joined, cudaEventDisableTiming);
  if (e == cudaSuccess) e = cudaEventRecord(forked, stream);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(side, forked, 0);
  if (e == cudaSuccess) {
    sequences.launch(L, stream);
    literals_kernel<<<literal_blocks, kWarpLanes * kLiteralWarps, 0, side>>>(L);
    e = cudaEventRecord(joined, side);
  }
  if (e == cudaSuccess) e = cudaStreamWaitEvent(stream, joined, 0);
  // Destroying them now is safe: their resources go once the queued work is done.
  if (joined != nullptr) cudaEventDestroy(joined);
  if (forked != nullptr) cudaEventDestroy(forked);
  if (side != nullptr) cudaStreamDestroy(side);
  return e;
}

}  // namespace

cudaError_t launch_zstd_decode(const ZstdLaunch& L, cudaStream_t stream, const ZstdStageEvents* events) {
  if (L.chunk_count == 0) return cudaSuccess;
  // A chunk of skippable frames only has no blocks, but the scan still checks its size.
  const bool blocks = L.block_count > 0;
  cudaError_t e = cudaMemsetAsync(L.counter, 0, sizeof(std::uint32_t), stream);
  if (e == cudaSuccess && blocks) e = cudaMemsetAsync(L.states, 0, std::size_t{L.block_count} * sizeof(BlockState), stream);
  if (e != cudaSuccess) return e;
  int device = 0, sms = 0;
  if ((e = cudaGetDevice(&device)) != cudaSuccess) return e;
  if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess) return e;
  auto mark = [&](int stage) {
    if (events != nullptr && events->after[stage] != nullptr) cudaEventRecord(events->after[stage], stream);
  };
  if (blocks) {
    SequencesLaunch sequences;
    if ((e = plan_sequences(L.block_count, device, sms, stream, &sequences)) != cudaSuccess) return e;
    const unsigned literal_blocks = blocks_for(L.block_count, kLiteralWarps);
    if (events != nullptr) {
      // The stages' times are wanted: one after the other.
      literals_kernel<<<literal_blocks, kWarpLanes * kLiteralWarps, 0, stream>>>(L);
      mark(0);
      sequences.launch(L, stream);
    } else {
      e = literals_beside_sequences(L, stream, literal_blocks, sequences);
    }
    if (sequences.spilled != nullptr) {
      const cudaError_t freed = cudaFreeAsync(sequences.spilled, stream);
      if (e == cudaSuccess) e = freed;
    }
    if (e != cudaSuccess) return e;
  } else {
    mark(0);
  }
  mark(1);
  scan_kernel<<<blocks_for(L.chunk_count, 128), 128, 0, stream>>>(L);
  mark(2);
  // Enough warps to fill the device; each takes blocks until none are left.
  const unsigned execute_blocks = std::min(blocks_for(L.block_count, kExecuteWarps), static_cast<unsigned>(sms) * 16u);
  if (blocks) execute_kernel<<<execute_blocks, kWarpLanes * kExecuteWarps, 0, stream>>>(L);
  mark(3);
  if (L.frame_count > 0) {
    checksum_kernel<<<blocks_for(L.frame_count, kChecksumWarps), kWarpLanes * kChecksumWarps, 0, stream>>>(L);
  }
  mark(4);
  return cudaGetLastError();
}

void load_zstd_kernels() {
  cudaFuncAttributes a;
  cudaFuncGetAttributes(&a, literals_kernel);
  cudaFuncGetAttributes(&a, sequences_kernel);
  cudaFuncGetAttributes(&a, scan_kernel);
  cudaFuncGetAttributes(&a, execute_kernel);
  cudaFuncGetAttributes(&a, checksum_kernel);
}

}  // namespace zarrkit::gpu
