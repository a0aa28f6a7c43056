// Streams inside another codec's chunk that the zstd and deflate halves decode: blosc's
// blocks compressed with zstd (each a zstd frame) or zlib (each a zlib stream). The halves
// that own those kernels take them into the same batch work as whole chunks, so a blosc
// chunk's streams launch with every other zstd or deflate job of the batch.
#pragma once

#include <vector>

#include "gpu/device_codec.h"
#include "gpu/kernels.h"

namespace zarrkit::gpu {

// Adds `streams` of `chunk`: each StreamJob's src and src_size name its bytes from the start
// of chunk.host (the same bytes lie at chunk.device), dst and dst_size the exact bytes it
// decodes to from the start of the chunk's slot; codec and to_scratch are not read. All or
// nothing: false, and no job added, when one of them is not for the kernels (the zstd walk
// refuses it; 4 GiB or more); the chunk then decodes on the host.
bool add_zstd_streams(const ChunkStagePlan& chunk, const std::vector<StreamJob>& streams);
bool add_zlib_streams(const ChunkStagePlan& chunk, const std::vector<StreamJob>& streams);

}  // namespace zarrkit::gpu
