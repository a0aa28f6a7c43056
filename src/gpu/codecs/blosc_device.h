// The device half of the blosc codec ("blosc", "numcodecs.blosc"): c-blosc 1.x chunks whose
// blocks hold LZ4 or BloscLZ streams (or are stored raw) decode on the GPU, a warp per
// stream, then unshuffle (byte or bit) block by block. Blocks compressed with zstd or zlib
// decode with the zstd and deflate kernels (inner_streams.h) where Config::gpu.zstd_kernels
// or deflate_kernels takes the read (on, or auto and the read is large enough: device_codec.h,
// OwnKernelsRule), then unshuffle in place; snappy decodes on the host.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gpu/kernels.h"
#include "zarrkit/buffer.h"
#include "zarrkit/codec.h"

namespace zarrkit::gpu {

// What compressed a chunk's streams.
enum class BloscInner : std::uint8_t { kLz4Family, kZstd, kZlib };

// A c-blosc 1.x chunk as device jobs: nullopt unless the GPU decodes it exactly as c-blosc
// would (blosclz or lz4 inside, or zstd or zlib where `zstd_and_zlib`, and a well-formed
// header). Stream sources are offsets into `bytes`; destinations and blocks are offsets into
// the decoded chunk. Raw (memcpyed) chunks are split into copies of at most `copy_piece`
// bytes.
//   kLz4Family: `streams` are every stream, for the LZ4-family kernel; the shuffled blocks'
//     go to the scratch, and `blocks` unshuffle from there.
//   kZstd, kZlib: `streams` are the blocks stored raw (copies), `inner_streams` the frames or
//     zlib streams of the inner codec, all into the decoded chunk; `blocks` unshuffle in
//     place after them.
struct BloscJobs {
  BloscInner inner = BloscInner::kLz4Family;
  std::vector<StreamJob> streams;
  std::vector<StreamJob> inner_streams;
  std::vector<BlockJob> blocks;
  std::uint64_t decoded_size = 0;
};
std::optional<BloscJobs> plan_blosc_chunk(ByteView bytes, SizeBound expected, std::uint32_t copy_piece = 256u << 10,
                                          bool zstd_and_zlib = false);

}  // namespace zarrkit::gpu
