// The batched kernels of the GPU path and the plain job tables they read.
//
// The host plans a batch (which streams to decode, which blosc blocks to unshuffle, which
// checksums to verify, which regions to copy), uploads the tables, and launches each kind
// of work once for the whole batch. Every job names its chunk; a job that finds corrupt
// data records an error code for its chunk (the first one wins) and later jobs of that
// chunk skip it, so the rest of the batch is unaffected.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace zarrkit::gpu {

enum class StreamCodec : std::uint8_t { kCopy = 0, kLz4 = 1, kBloscLz = 2 };

// One independent compressed stream (an LZ4 block, one blosc split, or a raw copy), decoded
// by one warp.
struct StreamJob {
  std::uint64_t src;       // byte offset into the batch's input
  std::uint64_t dst;       // byte offset into the batch's decode area (scratch or output)
  std::uint32_t src_size;
  std::uint32_t dst_size;  // exact decoded size
  std::uint32_t chunk;
  StreamCodec codec;
  std::uint8_t to_scratch;  // 1: into the shuffle scratch, 0: into the decoded chunks
};

enum class BlockShuffle : std::uint8_t { kCopy = 0, kByte = 1, kBit = 2 };

// One blosc block to move from the scratch (shuffled) to the decoded chunks (unshuffled),
// at the same offset in both.
struct BlockJob {
  std::uint64_t offset;
  std::uint32_t size;
  std::uint32_t chunk;
  std::uint16_t typesize;
  BlockShuffle shuffle;
};

// One CRC-32C to verify over input bytes [src, src + size).
struct CrcJob {
  std::uint64_t src;
  std::uint64_t size;
  std::uint32_t expected;
  std::uint32_t chunk;
  std::uint32_t first_segment;  // index of this job's first segment in the segment table
  std::uint32_t num_segments;
};

// The CRC segment table: segment s covers bytes [s_offset, s_offset + kCrcSegmentBytes) of
// its job (the last one fewer).
constexpr std::uint64_t kCrcSegmentBytes = 16 << 10;

// Copy geometry of one chunk into the output, after merging axes on the host. Missing
// chunks have src == kNoSource and are filled.
constexpr int kMaxCopyDims = 8;
constexpr std::uint64_t kNoSource = ~std::uint64_t{0};
struct CopyJob {
  std::uint64_t src;  // device address of the chunk's first selected element, or kNoSource
  std::uint64_t dst;  // device address of its place in the output
  std::uint64_t counts[kMaxCopyDims];
  std::int64_t src_strides[kMaxCopyDims];  // bytes
  std::int64_t dst_strides[kMaxCopyDims];  // bytes
  std::uint64_t elements;  // product of counts
  std::uint32_t ndim;      // 1..kMaxCopyDims
  std::uint32_t chunk;     // for the status check; kNoChunk for fills
  std::uint32_t aligned;   // 1: addresses and strides are multiples of the element size
};
constexpr std::uint32_t kNoChunk = ~std::uint32_t{0};

// Loads every kernel of this file (the runtime loads a kernel at its first launch otherwise,
// which a first read would pay for).
void load_kernels();

// Launches. Pointers are device pointers; tables live in device memory. Each returns the
// launch error (cudaSuccess when it was queued).
//
// Stream decode variants, one warp per stream, compared in the S7 benchmark (docs/gpu.md,
// bench/results/GPU.md); the read path runs kDirect:
//   kDirect          reads the compressed stream and earlier output from global memory,
//                    with a register cap for full occupancy (blosc's many short streams);
//   kDirectUncapped  the same without the cap;
//   kStaged          stages the compressed stream through 1 KiB of shared memory.
enum class DecodeVariant { kDirect, kDirectUncapped, kStaged };
const char* decode_variant_name(DecodeVariant variant);
cudaError_t launch_decode_streams(const StreamJob* jobs, std::uint32_t count, const std::uint8_t* input,
                                  std::uint8_t* decoded, std::uint8_t* scratch, std::int32_t* chunk_status,
                                  cudaStream_t stream, DecodeVariant variant = DecodeVariant::kDirect);
cudaError_t launch_unshuffle_blocks(const BlockJob* jobs, std::uint32_t count, const std::uint8_t* scratch,
                                    std::uint8_t* decoded, const std::int32_t* chunk_status, cudaStream_t stream);
// segment_jobs[s] is the job of segment s; partial must hold num_segments words. With
// `results`, the checksums are written there (results[j] for job j) instead of checked.
cudaError_t launch_crc32c(const CrcJob* jobs, std::uint32_t count, const std::uint32_t* segment_jobs,
                          std::uint32_t num_segments, const std::uint8_t* input, std::uint32_t* partial,
                          std::int32_t* chunk_status, cudaStream_t stream, std::uint32_t* results = nullptr);
// Copies (or fills) every job's elements; swap_unit > 1 reverses the bytes of each unit of
// each element (the bytes codec's big-endian storage). `fill` holds one element.
cudaError_t launch_copy_regions(const CopyJob* jobs, std::uint32_t count, std::uint32_t itemsize,
                                std::uint32_t swap_unit, const std::uint8_t* fill, const std::int32_t* chunk_status,
                                cudaStream_t stream);

}  // namespace zarrkit::gpu
