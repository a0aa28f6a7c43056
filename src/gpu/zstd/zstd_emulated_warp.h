// The warp-level stages of zstd_stages.cuh run on the host, for the tests, with the emulated
// warps of gpu/warp/emulated_warp.h: the blocks of a frame wait for each other's bytes as on
// the device.
#pragma once

#include <cstring>
#include <memory>

#include "gpu/warp/emulated_warp.h"
#include "gpu/zstd/zstd_stages.cuh"

namespace zarrkit::gpu::zstd::testing {

using warp_testing::EmulatedWarp;
using warp_testing::FiberWarp;
using warp_testing::run_warps;

// The stages of a launch over host memory, as the kernels order them, `warps` at a time.
inline void run_stages_emulated(const ZstdLaunch& L, unsigned warps) {
  std::memset(static_cast<void*>(L.states), 0, std::size_t{L.block_count} * sizeof(BlockState));
  *L.counter = 0;
  {
    auto memory = std::make_unique<LiteralsWarpMemory[]>(warps);
    run_warps(warps, [&](EmulatedWarp& w, unsigned k) {
      for (std::uint32_t b = k; b < L.block_count; b += warps) warp_literals(w, L, b, memory[k]);
    });
  }
  {
    // As on the device: lane s of the warps decodes blocks s, s + lanes, ... with its own memory.
    const std::uint32_t lanes = warps * kWarpLanes;
    auto memory = std::make_unique<SequenceLaneMemory[]>(lanes);
    SequenceCodes codes;
    fill_sequence_codes(codes, 0, 1);
    run_warps(warps, [&](EmulatedWarp& w, unsigned k) {
      const std::uint32_t s = k * kWarpLanes + w.lane();
      for (std::uint32_t b = s; b < L.block_count; b += lanes) lane_sequences(w, L, b, codes, memory[s]);
    });
  }
  for (std::uint32_t c = 0; c < L.chunk_count; ++c) {
    std::int32_t& status = L.status[L.chunks[c].status];
    if (status != kOk) continue;
    status = scan_chunk(L, c);
  }
  run_warps(warps, [&](EmulatedWarp& w, unsigned) { warp_execute_loop(w, L); });
  run_warps(warps, [&](EmulatedWarp& w, unsigned k) {
    for (std::uint32_t f = k; f < L.frame_count; f += warps) warp_checksum(w, L, f);
  });
}

}  // namespace zarrkit::gpu::zstd::testing
