// The hardware's warp for the stages written once for the device and the host (the host
// tests run them with gpu/warp/emulated_warp.h). CUDA only.
#pragma once

#include <cstdint>

namespace zarrkit::gpu::warp {

constexpr unsigned kFull = 0xFFFFFFFFu;

// The Warp of the decoders' warp-level stages (zstd_stages.cuh, deflate_stages.cuh) on
// the device: the hardware's collectives over a full warp.
struct DeviceWarp {
  unsigned lane_;
  __device__ unsigned lane() const { return lane_; }
  __device__ void sync() const { __syncwarp(); }
  __device__ unsigned ballot(bool p) const { return __ballot_sync(kFull, p); }
  __device__ bool any(bool p) const { return __any_sync(kFull, p) != 0; }
  __device__ std::uint32_t shfl(std::uint32_t v, unsigned from) const {
    return __shfl_sync(kFull, v, static_cast<int>(from));
  }
  __device__ std::uint32_t shfl_up(std::uint32_t v, unsigned d) const { return __shfl_up_sync(kFull, v, d); }
  __device__ std::uint32_t shfl_xor(std::uint32_t v, unsigned m) const {
    return __shfl_xor_sync(kFull, v, static_cast<int>(m));
  }
  // Bytes other warps write during the stage are read through L2: a line this SM's L1
  // cached before they were written could be stale.
  __device__ std::uint8_t load_shared(const std::uint8_t* p) const { return __ldcg(p); }
  __device__ std::uint32_t fetch_add(std::uint32_t* p, std::uint32_t v) const { return atomicAdd(p, v); }
  // Polled with relaxed loads: an acquire load invalidates the multiprocessor's whole L1,
  // which the working warps beside the waiting ones lose. acquire() orders the reads after a
  // wait has seen the progress it wanted.
  __device__ std::uint32_t load_progress(std::uint32_t* p) const {
    std::uint32_t v;
    asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
  }
  __device__ void acquire() const { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
  __device__ void publish_progress(std::uint32_t* p, std::uint32_t v) const {
    __threadfence();  // the warp's bytes (ordered before by sync) are visible first
    atomicExch(p, v);
  }
  __device__ bool failed(const std::int32_t* status) const {
    return *reinterpret_cast<const volatile std::int32_t*>(status) != 0;
  }
  __device__ void fail(std::int32_t* status, std::int32_t code) const { atomicCAS(status, 0, code); }
  // The `waited`-th pause of one wait: longer and longer (0.1 to 3.2 us), so that warps
  // waiting for a whole block poll less often.
  __device__ void pause(std::uint32_t waited) const { __nanosleep(100u << (waited < 5u ? waited : 5u)); }
};

__device__ inline DeviceWarp this_warp() { return DeviceWarp{threadIdx.x % 32u}; }

}  // namespace zarrkit::gpu::warp
