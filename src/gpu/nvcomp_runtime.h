// nvCOMP, loaded at run time when it is installed: zarrkit neither builds nor runs against
// it, and works the same without it.
//
// The library is looked up as $ZARRKIT_NVCOMP_LIBRARY (a path), then libnvcomp.so.6 and
// libnvcomp.so through the dynamic loader's usual search (LD_LIBRARY_PATH, ...). Only the
// batched low-level decompression entry points are used; their signatures are those of
// nvCOMP 5 and 6 (the options structure passed by value, 64 bytes, backend first).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

namespace zarrkit::gpu {

enum class NvcompCodec : std::uint8_t { kLz4, kZstd, kGzip, kDeflate };
const char* nvcomp_codec_name(NvcompCodec codec);

// The decompression options of every codec: 64 bytes, the backend first, the rest zero
// (nvCOMP's defaults: char data, no bitshuffle, the naive gzip algorithm).
struct NvcompDecompressOptions {
  std::int32_t backend = 2;  // the CUDA kernels (not a hardware decompression engine)
  char rest[60] = {};
};
static_assert(sizeof(NvcompDecompressOptions) == 64);

class Nvcomp {
 public:
  // The loaded library, or nullptr when it cannot be loaded (reason() says why). The first
  // call loads it: Config::gpu.nvcomp_library of the settings in force when not empty,
  // else libnvcomp.so.6, else libnvcomp.so.
  static const Nvcomp* get();
  static std::string reason();

  // Device scratch bytes for a batch (nvcomp...DecompressGetTempSize).
  std::size_t temp_bytes(NvcompCodec codec, std::size_t chunks, std::size_t max_chunk_bytes,
                         std::size_t total_bytes) const;
  // Queues the batched decompression on `stream`. Every pointer array and size array lives
  // in device memory; `statuses` gets one nvcompStatus_t (0: success) per chunk. Returns
  // nvCOMP's status of the launch itself.
  int decompress(NvcompCodec codec, const void* const* compressed, const std::size_t* compressed_bytes,
                 const std::size_t* buffer_bytes, std::size_t* actual_bytes, std::size_t chunks, void* temp,
                 std::size_t temp_bytes, void* const* outputs, int* statuses, cudaStream_t stream) const;

  std::string path;  // what was loaded

 private:
  using TempSize = int (*)(std::size_t, std::size_t, NvcompDecompressOptions, std::size_t*, std::size_t,
                           cudaStream_t);
  using Decompress = int (*)(const void* const*, const std::size_t*, const std::size_t*, std::size_t*, std::size_t,
                             void*, std::size_t, void* const*, NvcompDecompressOptions, int*, cudaStream_t);
  TempSize temp_size_[4] = {};
  Decompress decompress_[4] = {};
  friend struct NvcompLoader;
};

}  // namespace zarrkit::gpu
