// A launch of the deflate kernels run on the host (for the tests): `warps` emulated warps at
// once (gpu/warp/emulated_warp.h), each taking chunks as the kernel's warps do.
#pragma once

#include <cstring>
#include <memory>

#include "gpu/deflate/deflate_stages.cuh"
#include "gpu/warp/emulated_warp.h"

namespace zarrkit::gpu::deflate::testing {

inline void run_launch_emulated(const DeflateLaunch& L, unsigned warps) {
  std::memset(L.status, 0, sizeof(std::int32_t) * L.chunk_count);
  auto memory = std::make_unique<DeflateWarpMemory[]>(warps);
  warp_testing::run_warps(warps, [&](warp_testing::EmulatedWarp& w, unsigned k) {
    for (std::uint32_t c = k; c < L.chunk_count; c += warps) warp_inflate_chunk(w, L, c, memory[k]);
  });
}

}  // namespace zarrkit::gpu::deflate::testing
