// The batched kernels: one launch per kind of work over every chunk of a batch.
#include "gpu/kernels.h"

#include <algorithm>

#include "gpu/device_codecs.cuh"

namespace zarrkit::gpu {
namespace {

constexpr unsigned kWarp = 32;
constexpr unsigned kStreamWarpsPerBlock = 4;
// Enough resident warps for a full SM (64), so that a batch of blosc streams runs in one
// wave rather than one and a half; the register cap costs a few spills (docs/gpu.md).
constexpr unsigned kStreamBlocksPerSm = 16;

// The chunk's status as lane 0 sees it, the same for the whole warp (a divergent early
// exit would leave lanes waiting at the decoders' __syncwarp).
__device__ bool warp_chunk_failed(const std::int32_t* status, std::uint32_t chunk, unsigned lane) {
  int failed = 0;
  if (lane == 0) failed = *reinterpret_cast<const volatile std::int32_t*>(status + chunk) != 0;
  return __shfl_sync(0xFFFFFFFFu, failed, 0) != 0;
}

__device__ void record_failure(std::int32_t* status, std::uint32_t chunk, std::int32_t code) {
  atomicCAS(status + chunk, 0, code);  // the first failure of a chunk wins
}

// Copies n bytes with `width` threads numbered `rank`, 16 bytes at a time where both
// sides allow it.
__device__ void strided_copy_bytes(std::uint8_t* out, const std::uint8_t* in, std::uint64_t n, std::uint64_t rank,
                                   std::uint64_t width) {
  const auto misalignment = (reinterpret_cast<std::uintptr_t>(out) | reinterpret_cast<std::uintptr_t>(in)) & 15u;
  if (misalignment == 0) {
    const std::uint64_t words = n / 16;
    auto* o = reinterpret_cast<uint4*>(out);
    const auto* i = reinterpret_cast<const uint4*>(in);
    for (std::uint64_t k = rank; k < words; k += width) o[k] = i[k];
    for (std::uint64_t k = words * 16 + rank; k < n; k += width) out[k] = in[k];
  } else if ((misalignment & 3u) == 0) {
    const std::uint64_t words = n / 4;
    auto* o = reinterpret_cast<std::uint32_t*>(out);
    const auto* i = reinterpret_cast<const std::uint32_t*>(in);
    for (std::uint64_t k = rank; k < words; k += width) o[k] = i[k];
    for (std::uint64_t k = words * 4 + rank; k < n; k += width) out[k] = in[k];
  } else {
    for (std::uint64_t k = rank; k < n; k += width) out[k] = in[k];
  }
}

// ---- Streams: one warp each ---------------------------------------------------------------

// The compressed stream staged through shared memory, kWindow bytes at a time, loaded by
// the whole warp at once: the parse (every lane reading the same bytes one after another)
// then waits on shared memory instead of on one global load per new cache line.
constexpr unsigned kWindow = 1024;

struct WindowInput {
  const std::uint8_t* data;
  std::uint32_t size;
  std::uint8_t* window;  // kWindow bytes of shared memory, this warp's own
  unsigned lane;
  std::uint32_t base = 0;

  __device__ WindowInput(const std::uint8_t* d, std::uint32_t n, std::uint8_t* w, unsigned l)
      : data(d), size(n), window(w), lane(l) {
    refill(0);
  }
  __device__ unsigned operator()(std::uint32_t i) {
    if (i - base >= kWindow) refill(i);  // i < base wraps around and refills too
    return window[i - base];
  }
  __device__ const std::uint8_t* pointer(std::uint32_t i) const { return data + i; }
  __device__ void refill(std::uint32_t from) {
    __syncwarp();  // every lane is done with the old window
    base = from;
#pragma unroll 8
    for (unsigned k = lane; k < kWindow; k += kWarp) {
      if (from + k < size) window[k] = __ldg(data + from + k);
    }
    __syncwarp();
  }
};

template <bool kStaged, unsigned kMinBlocks>
__global__ void __launch_bounds__(kWarp* kStreamWarpsPerBlock, kMinBlocks)
    decode_streams_kernel(const StreamJob* jobs, std::uint32_t count, const std::uint8_t* input,
                          std::uint8_t* decoded, std::uint8_t* scratch, std::int32_t* status) {
  __shared__ std::uint8_t windows[kStaged ? kStreamWarpsPerBlock : 1][kStaged ? kWindow : 1];
  const std::uint64_t warp = (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const unsigned lane = threadIdx.x % kWarp;
  if (warp >= count) return;  // whole warps leave together
  const StreamJob job = jobs[warp];
  if (warp_chunk_failed(status, job.chunk, lane)) return;
  std::uint8_t* out = (job.to_scratch ? scratch : decoded) + job.dst;
  const std::uint8_t* in = input + job.src;
  std::int32_t result = kDecodeOk;
  switch (job.codec) {
    case StreamCodec::kCopy:
      if (job.src_size != job.dst_size) {
        result = kDecodeWrongSize;
      } else {
        strided_copy_bytes(out, in, job.dst_size, lane, kWarp);
      }
      break;
    case StreamCodec::kLz4:
    case StreamCodec::kBloscLz:
      if constexpr (kStaged) {
        WindowInput reader(in, job.src_size, windows[threadIdx.x / kWarp], lane);
        result = job.codec == StreamCodec::kLz4 ? lz4_decode(reader, job.src_size, out, job.dst_size, lane, kWarp)
                                                : blosclz_decode(reader, job.src_size, out, job.dst_size, lane, kWarp);
      } else {
        DirectInput reader{in};
        result = job.codec == StreamCodec::kLz4 ? lz4_decode(reader, job.src_size, out, job.dst_size, lane, kWarp)
                                                : blosclz_decode(reader, job.src_size, out, job.dst_size, lane, kWarp);
      }
      break;
  }
  if (lane == 0 && result != kDecodeOk) record_failure(status, job.chunk, result);
}

// ---- Blosc blocks: scratch (shuffled) -> decoded ------------------------------------------

__global__ void unshuffle_blocks_kernel(const BlockJob* jobs, std::uint32_t count, const std::uint8_t* scratch,
                                        std::uint8_t* decoded, const std::int32_t* status) {
  // Blocks are below 2^31 bytes (c-blosc's limit): 32-bit index arithmetic inside one.
  const std::uint32_t rank = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t width = gridDim.x * blockDim.x;
  for (std::uint32_t j = blockIdx.y; j < count; j += gridDim.y) {
    const BlockJob job = jobs[j];
    if (status[job.chunk] != kDecodeOk) continue;
    const std::uint8_t* in = scratch + job.offset;
    std::uint8_t* out = decoded + job.offset;
    const unsigned typesize = job.typesize;
    switch (job.shuffle) {
      case BlockShuffle::kCopy:
        strided_copy_bytes(out, in, job.size, rank, width);
        break;
      case BlockShuffle::kByte: {
        // Thread per element: its typesize bytes come from typesize planes.
        const std::uint32_t elements = job.size / typesize;
        for (std::uint32_t e = rank; e < elements; e += width) {
          unshuffle_element(in, out, elements, typesize, e);
        }
        for (std::uint32_t k = elements * typesize + rank; k < job.size; k += width) out[k] = in[k];
        break;
      }
      case BlockShuffle::kBit: {
        if (!bitshuffle_applies(job.size, typesize)) {
          strided_copy_bytes(out, in, job.size, rank, width);
          break;
        }
        const std::uint32_t elements = job.size / typesize;
        const std::uint32_t work = elements / 8 * typesize;
        for (std::uint32_t w = rank; w < work; w += width) {
          const std::uint32_t group = w / typesize;
          const unsigned column = w - group * typesize;
          const std::uint64_t bytes = bitunshuffled_column8(in, elements, group, column);
          std::uint8_t* o = out + static_cast<std::uint64_t>(group) * 8 * typesize + column;
          for (unsigned i = 0; i < 8; ++i) o[i * typesize] = static_cast<std::uint8_t>(bytes >> (8 * i));
        }
        for (std::uint32_t k = elements * typesize + rank; k < job.size; k += width) out[k] = in[k];
        break;
      }
    }
  }
}

// ---- CRC-32C: segments in parallel, then one block per checksum combines them ----------------

constexpr unsigned kCrcThreads = 256;

__device__ void load_crc_tables(std::uint32_t* table) {
  for (unsigned e = threadIdx.x; e < 8 * 256; e += blockDim.x) crc32c_fill_tables(table, e);
  __syncthreads();
}

__global__ void __launch_bounds__(kCrcThreads)
    crc32c_segments_kernel(const CrcJob* jobs, const std::uint32_t* segment_jobs, std::uint32_t num_segments,
                           const std::uint8_t* input, std::uint32_t* partial, const std::int32_t* status) {
  __shared__ std::uint32_t table[8 * 256];
  load_crc_tables(table);
  const std::uint64_t s = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= num_segments) return;
  const CrcJob& job = jobs[segment_jobs[s]];
  // The write path gives each frame room for its largest size; segments past the end of
  // a shorter one have nothing to do.
  if (s - job.first_segment >= job.num_segments) return;
  const std::uint64_t start = (s - job.first_segment) * kCrcSegmentBytes;
  const std::uint64_t length = min(kCrcSegmentBytes, job.size - start);
  partial[s] = crc32c_with_table(table, input + job.src + start, length);
}

__global__ void __launch_bounds__(kCrcThreads)
    crc32c_combine_kernel(const CrcJob* jobs, std::uint32_t count, const std::uint32_t* partial,
                          std::int32_t* status, std::uint32_t* results) {
  __shared__ std::uint32_t crcs[kCrcThreads];
  __shared__ std::uint64_t lengths[kCrcThreads];
  for (std::uint32_t j = blockIdx.x; j < count; j += gridDim.x) {
    const CrcJob job = jobs[j];
    // Thread t combines a contiguous run of segments; the runs are then folded pairwise.
    const std::uint32_t per_thread = (job.num_segments + kCrcThreads - 1) / kCrcThreads;
    const std::uint32_t begin = min(job.num_segments, threadIdx.x * per_thread);
    const std::uint32_t end = min(job.num_segments, begin + per_thread);
    std::uint32_t crc = 0;  // the CRC of no bytes
    std::uint64_t length = 0;
    for (std::uint32_t k = begin; k < end; ++k) {
      const std::uint64_t segment_length = min(kCrcSegmentBytes, job.size - static_cast<std::uint64_t>(k) * kCrcSegmentBytes);
      crc = crc32c_combine(crc, partial[job.first_segment + k], segment_length);
      length += segment_length;
    }
    crcs[threadIdx.x] = crc;
    lengths[threadIdx.x] = length;
    __syncthreads();
    // Pairwise fold over thread order: step doubles, thread i (a multiple of 2 * step)
    // absorbs thread i + step.
    for (unsigned step = 1; step < kCrcThreads; step *= 2) {
      const unsigned i = threadIdx.x * 2 * step;
      if (i + step < kCrcThreads) {
        crcs[i] = crc32c_combine(crcs[i], crcs[i + step], lengths[i + step]);
        lengths[i] += lengths[i + step];
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if (results != nullptr) {
        results[j] = crcs[0];
      } else if (crcs[0] != job.expected) {
        record_failure(status, job.chunk, kDecodeChecksumMismatch);
      }
    }
    __syncthreads();  // crcs[] is reused by the next job
  }
}

// ---- Copies into the output ---------------------------------------------------------------

template <typename T>
__device__ T swap_bytes(T value);
template <>
__device__ std::uint16_t swap_bytes(std::uint16_t v) {
  return static_cast<std::uint16_t>((v >> 8) | (v << 8));
}
template <>
__device__ std::uint32_t swap_bytes(std::uint32_t v) {
  return __byte_perm(v, 0, 0x0123);
}
template <>
__device__ std::uint64_t swap_bytes(std::uint64_t v) {
  return static_cast<std::uint64_t>(swap_bytes(static_cast<std::uint32_t>(v))) << 32 |
         swap_bytes(static_cast<std::uint32_t>(v >> 32));
}

__device__ void element_offsets(const CopyJob& job, std::uint64_t e, std::int64_t& src, std::int64_t& dst) {
  src = 0;
  dst = 0;
  for (int d = static_cast<int>(job.ndim) - 1; d >= 0; --d) {
    const std::uint64_t n = job.counts[d];
    const std::uint64_t index = e % n;
    e /= n;
    src += static_cast<std::int64_t>(index) * job.src_strides[d];
    dst += static_cast<std::int64_t>(index) * job.dst_strides[d];
  }
}

template <typename T>
__device__ void copy_typed(const CopyJob& job, bool swap, const std::uint8_t* fill, std::uint64_t rank,
                           std::uint64_t width) {
  const bool filling = job.src == kNoSource;
  const T fill_value = filling ? *reinterpret_cast<const T*>(fill) : T{};
  for (std::uint64_t e = rank; e < job.elements; e += width) {
    std::int64_t s, d;
    element_offsets(job, e, s, d);
    T value = fill_value;
    if (!filling) {
      value = *reinterpret_cast<const T*>(job.src + s);
      if constexpr (sizeof(T) > 1) {
        if (swap) value = swap_bytes(value);
      }
    }
    *reinterpret_cast<T*>(job.dst + d) = value;
  }
}

__device__ void copy_bytewise(const CopyJob& job, unsigned itemsize, unsigned swap_unit, const std::uint8_t* fill,
                              std::uint64_t rank, std::uint64_t width) {
  const bool filling = job.src == kNoSource;
  for (std::uint64_t e = rank; e < job.elements; e += width) {
    std::int64_t s, d;
    element_offsets(job, e, s, d);
    auto* out = reinterpret_cast<std::uint8_t*>(job.dst + d);
    if (filling) {
      for (unsigned b = 0; b < itemsize; ++b) out[b] = fill[b];
    } else {
      const auto* in = reinterpret_cast<const std::uint8_t*>(job.src + s);
      if (swap_unit > 1) {
        for (unsigned b = 0; b < itemsize; ++b) out[b] = in[b / swap_unit * swap_unit + (swap_unit - 1 - b % swap_unit)];
      } else {
        for (unsigned b = 0; b < itemsize; ++b) out[b] = in[b];
      }
    }
  }
}

__global__ void copy_regions_kernel(const CopyJob* jobs, std::uint32_t count, std::uint32_t itemsize,
                                    std::uint32_t swap_unit, const std::uint8_t* fill, const std::int32_t* status) {
  __shared__ CopyJob job;
  const std::uint64_t rank = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint64_t width = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint32_t j = blockIdx.y; j < count; j += gridDim.y) {
    if (threadIdx.x == 0) job = jobs[j];
    __syncthreads();
    const bool skip = job.chunk != kNoChunk && status[job.chunk] != kDecodeOk;
    if (!skip) {
      const bool swap = swap_unit > 1;
      const bool contiguous = job.ndim == 1 && job.src_strides[0] == static_cast<std::int64_t>(itemsize) &&
                              job.dst_strides[0] == static_cast<std::int64_t>(itemsize);
      const unsigned last = job.ndim - 1;
      const bool rows = !swap && job.src != kNoSource && job.src_strides[last] == static_cast<std::int64_t>(itemsize) &&
                        job.dst_strides[last] == static_cast<std::int64_t>(itemsize) &&
                        job.counts[last] * itemsize >= 64;
      if (contiguous && !swap && job.src != kNoSource) {
        strided_copy_bytes(reinterpret_cast<std::uint8_t*>(job.dst), reinterpret_cast<const std::uint8_t*>(job.src),
                           job.elements * itemsize, rank, width);
      } else if (rows) {
        // Contiguous rows: one warp per row, wide copies along it.
        const std::uint64_t row_bytes = job.counts[last] * itemsize;
        const std::uint64_t num_rows = job.elements / job.counts[last];
        for (std::uint64_t r = rank / kWarp; r < num_rows; r += width / kWarp) {
          std::uint64_t rest = r;
          std::int64_t s = 0, d = 0;
          for (int a = static_cast<int>(last) - 1; a >= 0; --a) {
            const std::uint64_t index = rest % job.counts[a];
            rest /= job.counts[a];
            s += static_cast<std::int64_t>(index) * job.src_strides[a];
            d += static_cast<std::int64_t>(index) * job.dst_strides[a];
          }
          strided_copy_bytes(reinterpret_cast<std::uint8_t*>(job.dst + d), reinterpret_cast<const std::uint8_t*>(job.src + s),
                             row_bytes, rank % kWarp, kWarp);
        }
      } else if (job.aligned && (!swap || swap_unit == itemsize)) {
        switch (itemsize) {
          case 1: copy_typed<std::uint8_t>(job, swap, fill, rank, width); break;
          case 2: copy_typed<std::uint16_t>(job, swap, fill, rank, width); break;
          case 4: copy_typed<std::uint32_t>(job, swap, fill, rank, width); break;
          case 8: copy_typed<std::uint64_t>(job, swap, fill, rank, width); break;
          default: copy_bytewise(job, itemsize, swap_unit, fill, rank, width); break;
        }
      } else {
        copy_bytewise(job, itemsize, swap_unit, fill, rank, width);
      }
    }
    __syncthreads();  // `job` is reloaded by the next iteration
  }
}

unsigned grid_y(std::uint32_t count) { return std::max(1u, std::min<std::uint32_t>(count, 65535u)); }

}  // namespace

void load_kernels() {
  cudaFuncAttributes attributes;
  cudaFuncGetAttributes(&attributes, decode_streams_kernel<false, kStreamBlocksPerSm>);
  cudaFuncGetAttributes(&attributes, unshuffle_blocks_kernel);
  cudaFuncGetAttributes(&attributes, crc32c_segments_kernel);
  cudaFuncGetAttributes(&attributes, crc32c_combine_kernel);
  cudaFuncGetAttributes(&attributes, copy_regions_kernel);
  cudaGetLastError();
}

const char* decode_variant_name(DecodeVariant variant) {
  switch (variant) {
    case DecodeVariant::kDirect: return "direct";
    case DecodeVariant::kDirectUncapped: return "direct-uncapped";
    case DecodeVariant::kStaged: return "staged";
  }
  return "?";
}

cudaError_t launch_decode_streams(const StreamJob* jobs, std::uint32_t count, const std::uint8_t* input,
                                  std::uint8_t* decoded, std::uint8_t* scratch, std::int32_t* chunk_status,
                                  cudaStream_t stream, DecodeVariant variant) {
  if (count == 0) return cudaSuccess;
  const unsigned blocks = (count + kStreamWarpsPerBlock - 1) / kStreamWarpsPerBlock;
  const unsigned threads = kWarp * kStreamWarpsPerBlock;
  switch (variant) {
    case DecodeVariant::kStaged:
      decode_streams_kernel<true, 1><<<blocks, threads, 0, stream>>>(jobs, count, input, decoded, scratch, chunk_status);
      break;
    case DecodeVariant::kDirectUncapped:
      decode_streams_kernel<false, 1><<<blocks, threads, 0, stream>>>(jobs, count, input, decoded, scratch, chunk_status);
      break;
    case DecodeVariant::kDirect:
      decode_streams_kernel<false, kStreamBlocksPerSm><<<blocks, threads, 0, stream>>>(jobs, count, input, decoded,
                                                                                       scratch, chunk_status);
      break;
  }
  return cudaGetLastError();
}

cudaError_t launch_unshuffle_blocks(const BlockJob* jobs, std::uint32_t count, const std::uint8_t* scratch,
                                    std::uint8_t* decoded, const std::int32_t* chunk_status, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  // Enough threads per block job to stream it; many block jobs keep the GPU busy anyway.
  const dim3 grid(16, grid_y(count));
  unshuffle_blocks_kernel<<<grid, 256, 0, stream>>>(jobs, count, scratch, decoded, chunk_status);
  return cudaGetLastError();
}

cudaError_t launch_crc32c(const CrcJob* jobs, std::uint32_t count, const std::uint32_t* segment_jobs,
                          std::uint32_t num_segments, const std::uint8_t* input, std::uint32_t* partial,
                          std::int32_t* chunk_status, cudaStream_t stream, std::uint32_t* results) {
  if (count == 0) return cudaSuccess;
  if (num_segments > 0) {
    const unsigned blocks = (num_segments + kCrcThreads - 1) / kCrcThreads;
    crc32c_segments_kernel<<<blocks, kCrcThreads, 0, stream>>>(jobs, segment_jobs, num_segments, input, partial,
                                                                chunk_status);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  crc32c_combine_kernel<<<std::min<std::uint32_t>(count, 65535u), kCrcThreads, 0, stream>>>(jobs, count, partial,
                                                                                             chunk_status, results);
  return cudaGetLastError();
}

cudaError_t launch_copy_regions(const CopyJob* jobs, std::uint32_t count, std::uint32_t itemsize,
                                std::uint32_t swap_unit, const std::uint8_t* fill, const std::int32_t* chunk_status,
                                cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  // Few jobs (large chunks) get more blocks each; many jobs fill the GPU by themselves.
  const unsigned per_job = std::clamp<unsigned>(2048u / std::max(count, 1u), 8u, 512u);
  const dim3 grid(per_job, grid_y(count));
  copy_regions_kernel<<<grid, 256, 0, stream>>>(jobs, count, itemsize, swap_unit, fill, chunk_status);
  return cudaGetLastError();
}

}  // namespace zarrkit::gpu
