// The write path's kernels: fill checks, byte order, blosc's forward shuffles, LZ4
// encoding and packing the encoded blocks together.
#include <algorithm>

#include "gpu/device_codecs.cuh"
#include "gpu/kernels.h"

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

__global__ void encode_lz4_kernel(const EncodeJob* jobs, std::uint32_t count, std::uint32_t* tables,
                                  std::uint32_t* sizes) {
  const std::uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= count) return;
  const EncodeJob job = jobs[j];
  const auto* in = reinterpret_cast<const std::uint8_t*>(job.src);
  auto* out = reinterpret_cast<std::uint8_t*>(job.dst);
  std::uint32_t size = 0;
  if (!job.raw_only) {
    const std::uint32_t room = job.raw_below ? min(job.capacity, job.src_size - (job.src_size > 0 ? 1u : 0u))
                                             : job.capacity;
    size = lz4_encode_block(in, job.src_size, out, room, tables + static_cast<std::uint64_t>(j) * (1u << kLz4HashBits));
  }
  if (size == 0 && (job.raw_below || job.raw_only)) {
    for (std::uint32_t k = 0; k < job.src_size; ++k) out[k] = in[k];
    size = job.src_size;
  }
  sizes[j] = size;  // 0: did not fit (only without raw_below)
}

__global__ void pack_kernel(const PackJob* jobs, std::uint32_t count) {
  const unsigned lane = threadIdx.x % 32;
  for (std::uint64_t j = (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; j < count;
       j += static_cast<std::uint64_t>(gridDim.x) * blockDim.x / 32) {
    const PackJob job = jobs[j];
    const auto* in = reinterpret_cast<const std::uint8_t*>(job.src);
    auto* out = reinterpret_cast<std::uint8_t*>(job.dst);
    for (std::uint64_t k = lane; k < job.size; k += 32) out[k] = in[k];
  }
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

cudaError_t launch_encode_lz4(const EncodeJob* jobs, std::uint32_t count, std::uint32_t* tables, std::uint32_t* sizes,
                              cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  encode_lz4_kernel<<<(count + 63) / 64, 64, 0, stream>>>(jobs, count, tables, sizes);
  return cudaGetLastError();
}

cudaError_t launch_pack(const PackJob* jobs, std::uint32_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const auto blocks = static_cast<unsigned>(std::min<std::uint64_t>((std::uint64_t{count} * 32 + 255) / 256, 65535));
  pack_kernel<<<blocks, 256, 0, stream>>>(jobs, count);
  return cudaGetLastError();
}

}  // namespace zarrkit::gpu
