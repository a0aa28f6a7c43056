// The device half of the blosc codec ("blosc", "numcodecs.blosc"): c-blosc 1.x chunks whose
// blocks hold LZ4 or BloscLZ streams (or are stored raw) decode on the GPU, a warp per
// stream, then unshuffle (byte or bit) block by block. Other internal compressors (zstd,
// zlib, snappy) decode on the host.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gpu/kernels.h"
#include "zarrkit/buffer.h"
#include "zarrkit/codec.h"

namespace zarrkit::gpu {

// A c-blosc 1.x chunk as device jobs: nullopt unless the GPU decodes it exactly as c-blosc
// would (blosclz or lz4 inside, and a well-formed header). Stream sources are offsets into
// `bytes`; destinations and blocks are offsets into the decoded chunk. Raw (memcpyed)
// chunks are split into copies of at most `copy_piece` bytes.
struct BloscJobs {
  std::vector<StreamJob> streams;
  std::vector<BlockJob> blocks;
  std::uint64_t decoded_size = 0;
};
std::optional<BloscJobs> plan_blosc_chunk(ByteView bytes, SizeBound expected,
                                          std::uint32_t copy_piece = 256u << 10);

}  // namespace zarrkit::gpu
