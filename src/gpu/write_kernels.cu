// The write path's kernels: fill checks, byte order, blosc's forward shuffles, and the
// frame steps of write_frames.cuh (encode, plan, place, write).
#include <algorithm>

#include "gpu/device_codecs.cuh"
#include "gpu/write_kernels.h"

namespace zarrkit::gpu {
namespace {

__device__ bool is_nan_bits(const std::uint8_t* p, int nan_mode) {
  switch (nan_mode) {
    case 1: {
      const std::uint32_t v = lz4_read32(p);
      return (v & 0x7F800000u) == 0x7F800000u && (v & 0x007FFFFFu) != 0;
    }
    case 2: {
      const std::uint64_t v = static_cast<std::uint64_t>(lz4_read32(p)) | static_cast<std::uint64_t>(lz4_read32(p + 4)) << 32;
      return (v & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && (v & 0x000FFFFFFFFFFFFFull) != 0;
    }
    case 3: {
      const unsigned v = p[0] | p[1] << 8;
      return (v & 0x7C00u) == 0x7C00u && (v & 0x03FFu) != 0;
    }
    default: {  // bfloat16
      const unsigned v = p[0] | p[1] << 8;
      return (v & 0x7F80u) == 0x7F80u && (v & 0x007Fu) != 0;
    }
  }
}

__global__ void fill_check_kernel(const std::uint8_t* chunks, std::uint32_t count, std::uint64_t chunk_bytes,
                                  std::uint64_t stride, std::uint32_t itemsize, const std::uint8_t* fill, int nan_mode,
                                  std::uint32_t* differs) {
  const std::uint64_t elements = chunk_bytes / itemsize;
  for (std::uint32_t c = blockIdx.y; c < count; c += gridDim.y) {
    const std::uint8_t* chunk = chunks + c * stride;
    bool differ = false;
    for (std::uint64_t e = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < elements && !differ;
         e += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
      const std::uint8_t* p = chunk + e * itemsize;
      if (nan_mode != 0) {
        differ = !is_nan_bits(p, nan_mode);
      } else {
        for (unsigned b = 0; b < itemsize; ++b) differ = differ || p[b] != fill[b];
      }
    }
    if (differ) differs[c] = 1;  // any writer stores the same value
  }
}

__global__ void swap_units_kernel(std::uint8_t* data, std::uint64_t units, std::uint32_t unit) {
  for (std::uint64_t u = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; u < units;
       u += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    std::uint8_t* p = data + u * unit;
    for (unsigned i = 0; i < unit / 2; ++i) {
      const std::uint8_t t = p[i];
      p[i] = p[unit - 1 - i];
      p[unit - 1 - i] = t;
    }
  }
}

__global__ void shuffle_blocks_kernel(const BlockJob* jobs, std::uint32_t count, const std::uint8_t* source,
                                      std::uint8_t* shuffled) {
  const std::uint32_t rank = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t width = gridDim.x * blockDim.x;
  for (std::uint32_t j = blockIdx.y; j < count; j += gridDim.y) {
    const BlockJob job = jobs[j];
    const std::uint8_t* in = source + job.offset;
    std::uint8_t* out = shuffled + job.offset;
    const unsigned typesize = job.typesize;
    const std::uint32_t elements = job.size / typesize;
    std::uint32_t tail = 0;  // bytes copied as they are
    if (job.shuffle == BlockShuffle::kByte) {
      for (std::uint32_t e = rank; e < elements; e += width) shuffle_element(in, out, elements, typesize, e);
      tail = elements * typesize;
    } else if (job.shuffle == BlockShuffle::kBit && bitshuffle_applies(job.size, typesize)) {
      const std::uint32_t work = elements / 8 * typesize;
      for (std::uint32_t w = rank; w < work; w += width) {
        const std::uint32_t group = w / typesize;
        bitshuffle_column8(in, out, elements, typesize, group, w - group * typesize);
      }
      tail = elements * typesize;
    }
    for (std::uint32_t k = tail + rank; k < job.size; k += width) out[k] = in[k];
  }
}

// ---- Frames ---------------------------------------------------------------------------------

constexpr unsigned kWarp = 32;
constexpr unsigned kEncodeWarpsPerBlock = 4;  // 8 KiB of hash table each: 28 warps per SM

__device__ bool chunk_stored(const FrameBatch& b, std::uint32_t c) { return b.write_empty != 0 || b.differs[c] != 0; }

__device__ const std::uint8_t* stream_source(const FrameBatch& b, const WriteStream& stream, std::uint32_t c) {
  return (stream.shuffled ? b.scratch : b.chunks) + c * b.slot;
}

// Step 1: a warp per LZ4 segment of a stored chunk.
__global__ void __launch_bounds__(kWarp* kEncodeWarpsPerBlock) encode_segments_kernel(FrameBatch b) {
  __shared__ std::uint16_t tables[kEncodeWarpsPerBlock][1u << kLz4HashBits];
  const std::uint64_t w = (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const unsigned lane = threadIdx.x % kWarp;
  if (w >= static_cast<std::uint64_t>(b.count) * b.frame.num_segments) return;  // whole warps leave together
  const auto c = static_cast<std::uint32_t>(w / b.frame.num_segments);
  const auto k = static_cast<std::uint32_t>(w % b.frame.num_segments);
  if (!chunk_stored(b, c)) return;
  const WriteSegment seg = b.segments[k];
  const WriteStream stream = b.streams[seg.stream];
  if (stream.mode == StreamMode::kRaw) return;
  const Lz4Segment result = lz4_encode_segment<kWarp>(
      stream_source(b, stream, c) + stream.offset, static_cast<std::uint32_t>(stream.size),
      static_cast<std::uint32_t>(seg.begin), static_cast<std::uint32_t>(seg.end),
      b.rest + c * b.frame.rest_bytes + seg.rest_offset, seg.rest_capacity, tables[threadIdx.x / kWarp], lane);
  if (lane == 0) b.encoded[w] = result;
}

// Step 2: a thread per stream of each chunk.
__global__ void plan_streams_kernel(FrameBatch b) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<std::uint64_t>(b.count) * b.frame.num_streams) return;
  const auto c = static_cast<std::uint32_t>(i / b.frame.num_streams);
  const auto t = static_cast<std::uint32_t>(i % b.frame.num_streams);
  if (!chunk_stored(b, c)) {
    b.places[i] = StreamPlace{};
    return;
  }
  const WriteStream stream = b.streams[t];
  const std::uint64_t first = static_cast<std::uint64_t>(c) * b.frame.num_segments + stream.first_segment;
  b.places[i] = plan_stream(stream, b.encoded + first, b.pieces + first);
}

// Step 3: a thread per chunk.
__global__ void place_streams_kernel(FrameBatch b) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= b.count) return;
  ChunkFrame frame;
  if (chunk_stored(b, c)) {
    StreamPlace* places = b.places + static_cast<std::uint64_t>(c) * b.frame.num_streams;
    frame.stored = 1;
    frame.frame_bytes = place_streams(b.frame, b.streams, places);
    for (std::uint32_t t = 0; t < b.frame.num_streams; ++t) frame.status |= places[t].status;
  }
  b.frames[c] = frame;
}

// Step 4: one block places the stored values one after another (a scan over the chunks)
// and fills in each frame's CRC job.
constexpr unsigned kPlaceThreads = 1024;
__global__ void __launch_bounds__(kPlaceThreads) place_chunks_kernel(FrameBatch b) {
  __shared__ std::uint64_t sums[kPlaceThreads];
  const std::uint32_t per = (b.count + kPlaceThreads - 1) / kPlaceThreads;
  const std::uint32_t begin = min(b.count, threadIdx.x * per), end = min(b.count, begin + per);
  const std::uint64_t reserve = b.frame.reserve_start + b.frame.reserve_end;
  std::uint64_t sum = 0;
  for (std::uint32_t c = begin; c < end; ++c) sum += b.frames[c].stored ? reserve + b.frames[c].frame_bytes : 0;
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned step = 1; step < kPlaceThreads; step *= 2) {  // inclusive scan
    const std::uint64_t add = threadIdx.x >= step ? sums[threadIdx.x - step] : 0;
    __syncthreads();
    sums[threadIdx.x] += add;
    __syncthreads();
  }
  std::uint64_t at = sums[threadIdx.x] - sum;
  for (std::uint32_t c = begin; c < end; ++c) {
    ChunkFrame& frame = b.frames[c];
    frame.at = at;
    CrcJob job{};
    job.src = at + b.frame.reserve_start;
    job.size = frame.stored ? frame.frame_bytes : 0;
    job.chunk = c;
    job.first_segment = c * b.crc_segments_per_chunk;
    job.num_segments = static_cast<std::uint32_t>((job.size + kCrcSegmentBytes - 1) / kCrcSegmentBytes);
    b.crcs[c] = job;
    at += frame.stored ? reserve + frame.frame_bytes : 0;
  }
  if (threadIdx.x == kPlaceThreads - 1) *b.total = sums[kPlaceThreads - 1];
}

// Step 5: a warp per segment of each stored chunk; the chunk's first segment's warp also
// writes the header.
__global__ void write_frames_kernel(FrameBatch b) {
  const std::uint64_t w = (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const unsigned lane = threadIdx.x % kWarp;
  if (w >= static_cast<std::uint64_t>(b.count) * b.frame.num_segments) return;
  const auto c = static_cast<std::uint32_t>(w / b.frame.num_segments);
  const auto k = static_cast<std::uint32_t>(w % b.frame.num_segments);
  const ChunkFrame frame = b.frames[c];
  if (!frame.stored || frame.status != 0) return;
  const WriteSegment seg = b.segments[k];
  const WriteStream stream = b.streams[seg.stream];
  const StreamPlace* places = b.places + static_cast<std::uint64_t>(c) * b.frame.num_streams;
  std::uint8_t* out = b.packed + frame.at + b.frame.reserve_start;
  write_segment(stream, seg, k - stream.first_segment, stream_source(b, stream, c), b.encoded[w], b.pieces[w],
                places[seg.stream], b.rest + c * b.frame.rest_bytes + seg.rest_offset, out, lane, kWarp);
  if (k == 0) write_frame_header(b.frame, b.streams, places, frame.frame_bytes, out, lane, kWarp);
}

unsigned warp_blocks(std::uint64_t warps, unsigned warps_per_block) {
  return static_cast<unsigned>((warps + warps_per_block - 1) / warps_per_block);
}

unsigned grid_y(std::uint32_t count) { return std::max(1u, std::min<std::uint32_t>(count, 65535u)); }

}  // namespace

cudaError_t launch_fill_check(const std::uint8_t* chunks, std::uint32_t count, std::uint64_t chunk_bytes,
                              std::uint64_t stride, std::uint32_t itemsize, const std::uint8_t* fill, int nan_mode,
                              std::uint32_t* differs, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  fill_check_kernel<<<dim3(16, grid_y(count)), 256, 0, stream>>>(chunks, count, chunk_bytes, stride, itemsize, fill,
                                                                  nan_mode, differs);
  return cudaGetLastError();
}

cudaError_t launch_swap_units(std::uint8_t* data, std::uint64_t bytes, std::uint32_t unit, cudaStream_t stream) {
  if (unit < 2 || bytes < unit) return cudaSuccess;
  const std::uint64_t units = bytes / unit;
  const auto blocks = static_cast<unsigned>(std::min<std::uint64_t>((units + 255) / 256, 4096));
  swap_units_kernel<<<blocks, 256, 0, stream>>>(data, units, unit);
  return cudaGetLastError();
}

cudaError_t launch_shuffle_blocks(const BlockJob* jobs, std::uint32_t count, const std::uint8_t* in, std::uint8_t* out,
                                  cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  shuffle_blocks_kernel<<<dim3(16, grid_y(count)), 256, 0, stream>>>(jobs, count, in, out);
  return cudaGetLastError();
}

cudaError_t launch_plan_frames(const FrameBatch& b, cudaStream_t stream) {
  if (b.count == 0) return cudaSuccess;
  const std::uint64_t segments = static_cast<std::uint64_t>(b.count) * b.frame.num_segments;
  encode_segments_kernel<<<warp_blocks(segments, kEncodeWarpsPerBlock), kWarp * kEncodeWarpsPerBlock, 0, stream>>>(b);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  const std::uint64_t streams = static_cast<std::uint64_t>(b.count) * b.frame.num_streams;
  plan_streams_kernel<<<static_cast<unsigned>((streams + 127) / 128), 128, 0, stream>>>(b);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  place_streams_kernel<<<(b.count + 127) / 128, 128, 0, stream>>>(b);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  place_chunks_kernel<<<1, kPlaceThreads, 0, stream>>>(b);
  return cudaGetLastError();
}

cudaError_t launch_write_frames(const FrameBatch& b, cudaStream_t stream) {
  if (b.count == 0) return cudaSuccess;
  const std::uint64_t segments = static_cast<std::uint64_t>(b.count) * b.frame.num_segments;
  write_frames_kernel<<<warp_blocks(segments, 8), kWarp * 8, 0, stream>>>(b);
  return cudaGetLastError();
}

}  // namespace zarrkit::gpu
