// The write path's kernels (write_kernels.cu): fill checks, byte order, blosc's forward
// shuffles, and the frame steps of write_frames.cuh over a batch of chunks.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "gpu/kernels.h"
#include "gpu/write_frames.cuh"

namespace zarrkit::gpu {

// differs[c] becomes 1 when an element of chunk c (count chunks of chunk_bytes, `stride`
// bytes apart) is not the fill value. nan_mode: 0 compares bits; 1, 2, 3, 4: the elements
// are float32, float64, float16, bfloat16 and the fill is NaN, which any NaN matches.
cudaError_t launch_fill_check(const std::uint8_t* chunks, std::uint32_t count, std::uint64_t chunk_bytes,
                              std::uint64_t stride, std::uint32_t itemsize, const std::uint8_t* fill, int nan_mode,
                              std::uint32_t* differs, cudaStream_t stream);
// Reverses the bytes of every `unit`-byte unit of data[0, bytes).
cudaError_t launch_swap_units(std::uint8_t* data, std::uint64_t bytes, std::uint32_t unit, cudaStream_t stream);
// Blosc's forward shuffles: block j of `in` goes shuffled to the same offset of `out`.
cudaError_t launch_shuffle_blocks(const BlockJob* jobs, std::uint32_t count, const std::uint8_t* in, std::uint8_t* out,
                                  cudaStream_t stream);

// One batch of chunks to frame: chunk c's bytes are at chunks + c * slot (the shuffled ones
// at scratch + c * slot); per-chunk tables hold num_segments, num_streams or one entry per
// chunk, chunk-major. A chunk is stored when differs[c] != 0 or write_empty.
struct FrameBatch {
  FrameTemplate frame;
  const WriteStream* streams = nullptr;    // frame.num_streams entries (shared by all chunks)
  const WriteSegment* segments = nullptr;  // frame.num_segments entries
  std::uint32_t count = 0;
  std::uint64_t slot = 0;
  const std::uint8_t* chunks = nullptr;
  const std::uint8_t* scratch = nullptr;
  const std::uint32_t* differs = nullptr;
  std::uint32_t write_empty = 0;
  Lz4Segment* encoded = nullptr;  // per chunk and segment
  Lz4Piece* pieces = nullptr;     // per chunk and segment
  StreamPlace* places = nullptr;  // per chunk and stream
  std::uint8_t* rest = nullptr;   // frame.rest_bytes per chunk
  ChunkFrame* frames = nullptr;   // per chunk
  CrcJob* crcs = nullptr;         // per chunk: the frame's CRC-32C (src relative to packed)
  std::uint32_t crc_segments_per_chunk = 0;
  std::uint64_t* total = nullptr;  // the packed bytes of the batch
  std::uint8_t* packed = nullptr;  // where the stored values go, one after another
};

// Steps 1-4 of write_frames.cuh: encode, plan the streams, place them, place the chunks
// (and fill in the CRC jobs). Then `total` and `frames` say what to copy back.
cudaError_t launch_plan_frames(const FrameBatch& batch, cudaStream_t stream);
// Step 5: write the frames into `packed`.
cudaError_t launch_write_frames(const FrameBatch& batch, cudaStream_t stream);

}  // namespace zarrkit::gpu
