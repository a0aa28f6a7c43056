// The zstd decoder of the GPU path run on the host: the same stages, in the same order, as
// the device's kernels (zstd_common.cuh), one block after another. The tests check it
// against libzstd; the device half uses its walk to plan a chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu/zstd/zstd_common.cuh"

namespace zarrkit::gpu::zstd {

// The walk of a chunk, into tables (zstd_walk.cuh).
struct ChunkWalk {
  std::int32_t error = kOk;
  std::vector<FrameJob> frames;
  std::vector<BlockJob> blocks;
  WalkTotals totals;
};
ChunkWalk walk(const std::uint8_t* input, std::size_t size, std::uint64_t capacity);

struct HostDecodeResult {
  std::int32_t error = kOk;
  std::uint64_t size = 0;  // bytes decoded (when error == kOk)
  std::int32_t stage = 0;  // where it failed: 1 walk, 2 literals, 3 sequences, 4 scan, 5 execute, 6 checksum
};

// Decodes every frame of input[0, size) into out[0, capacity), as libzstd's
// ZSTD_decompressDCtx does: frames and skippable frames back to back, at most `capacity`
// bytes out. The frames may decode to less than `capacity`.
HostDecodeResult decode_on_host(const std::uint8_t* input, std::size_t size, std::uint8_t* out,
                                std::uint64_t capacity);

}  // namespace zarrkit::gpu::zstd
