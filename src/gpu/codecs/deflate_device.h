// The device half of gzip and zlib: zarrkit's own batched deflate decoder (src/gpu/deflate/
// has its code), one warp per chunk, every chunk of a batch in one launch. Nothing is
// planned on the host but the chunk's framing (deflate blocks have no sizes to walk); on
// the device each warp reads its chunk's headers and symbols with its first lane and
// writes, copies and checksums with all 32 (deflate_stages.cuh). Every read and write is
// checked against the chunk's input, its output slot and its window; a chunk with an error
// gets its status (a deflate::Error) and is decoded again on the host.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpu/deflate/deflate_stages.cuh"

namespace zarrkit::gpu {

// Queues the launch on `stream` (the statuses are zeroed by the caller).
cudaError_t launch_deflate_decode(const deflate::DeflateLaunch& launch, cudaStream_t stream);
// Loads the kernel (a first read would otherwise pay for it).
void load_deflate_kernels();

}  // namespace zarrkit::gpu
