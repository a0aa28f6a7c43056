// The deflate decoder of the GPU path run on the host: the warp-level code of
// deflate_stages.cuh with an emulated warp (gpu/warp/emulated_warp.h), one chunk at a time.
// The tests and the fuzz target check it against zlib and libdeflate; the device half uses
// plan_deflate_chunk to decide which chunks its kernels take.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/deflate/deflate_common.cuh"

namespace zarrkit::gpu::deflate {

struct HostDecodeResult {
  std::int32_t error = kOk;
  std::uint64_t size = 0;  // bytes decoded (when error == kOk)
};

// Decodes input[0, size) (a Format) into out[0, capacity): at most `capacity` bytes, which
// the stream may fill or not.
HostDecodeResult decode_on_host(Format format, const std::uint8_t* input, std::size_t size, std::uint8_t* out,
                                std::uint64_t capacity);

// Whether the kernels take a chunk of `input_size` bytes decoding to `output_size`: both
// below 4 GiB (else *error is kErrTooLarge).
bool plan_deflate_chunk(std::uint64_t input_size, std::uint64_t output_size, std::int32_t* error = nullptr);

}  // namespace zarrkit::gpu::deflate
