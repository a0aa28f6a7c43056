// The device half of zstd: zarrkit's own batched decoder (src/gpu/zstd/ has its stages),
// planned on the host, run as one launch per stage over every chunk of a batch.
//
// Per chunk, the host walks the frames and blocks (zstd_walk.cuh: O(blocks), headers only);
// a chunk the walk refuses decodes on the host, which reports its error. Then on the device,
// each kind of work over every block of the batch at once:
//   literals   a warp per compressed block: Huffman table, then its 1 or 4 streams
//   sequences  a warp per compressed block: FSE tables, then its sequences (repeat offsets
//              kept symbolic)
//   scan       a thread per chunk: block outputs placed, repeat offsets carried, sizes checked
//   execute    a warp per block, blocks taken in order from a counter: literals and matches
//              copied by the lanes in parallel; a match reaching into an earlier block of its
//              frame waits for that block to have written those bytes
//   checksum   a warp per frame that has one (XXH64: four lanes, one per accumulator)
// (The stages: src/gpu/zstd/zstd_stages.cuh; the batch's tables: zstd_batch.h.) Every stage
// checks its reads and writes against the chunk's input, its areas and its output slot; a
// chunk with an error gets its status (a zstd::Error) and is decoded again on the host.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "gpu/zstd/zstd_batch.h"

namespace zarrkit::gpu {

// Per-stage events for timing (the benchmark); null: none.
struct ZstdStageEvents {
  cudaEvent_t after[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};  // literals .. checksum
};

// Queues the stages on `stream`.
cudaError_t launch_zstd_decode(const ZstdLaunch& launch, cudaStream_t stream, const ZstdStageEvents* events = nullptr);
// Loads the kernels (a first read would otherwise pay for it).
void load_zstd_kernels();

}  // namespace zarrkit::gpu
