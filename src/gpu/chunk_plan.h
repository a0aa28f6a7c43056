// Host-side planning of GPU decodes: which part of an array's codec chain runs where, and
// the per-chunk job lists (streams, blosc blocks, checksums) parsed from each chunk's
// headers.
//
// The chain decodes in this order: bytes->bytes codecs from the last to the first, then
// the array->bytes codec, then array->array codecs from the last to the first. The GPU
// takes the end of the bytes->bytes part when it has the form
//     crc32c* (blosc | numcodecs.lz4)?      (in decode order)
// followed by "bytes" (byte order is applied while scattering) and transposes (folded into
// the scatter's strides). Bytes->bytes codecs before that (zstd, gzip, ...) decode on the
// CPU, chunk by chunk, into pinned memory. A chain whose array->bytes or array->array part
// the GPU cannot do (sharding, delta, structured types stored big-endian, ...) decodes
// wholly on the CPU; the GPU then only places the decoded chunks.
//
// Headers are parsed on the host from the chunk's bytes, checked against sizes derived
// from the metadata. Any header the GPU cannot take exactly as the CPU codec would (an
// unsupported blosc compressor, or anything malformed) sends that chunk to the CPU codec,
// which then decodes it or reports the same error it always does.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gpu/kernels.h"
#include "zarrkit/buffer.h"
#include "zarrkit/codec.h"
#include "zarrkit/metadata.h"

namespace zarrkit::gpu {

enum class GpuStageKind : std::uint8_t { kCrc32c, kBlosc, kLz4 };

struct GpuStage {
  GpuStageKind kind;
  const BytesToBytesCodec* codec;  // for the CPU fallback of this chunk
  SizeBound output;                // what the stage must decode to
  bool checksum_first = false;     // crc32c: the checksum precedes the data
};

struct CpuStage {
  const BytesToBytesCodec* codec;
  SizeBound output;
};

struct ChainPlan {
  // The whole chain decodes on the CPU into C order; `stored_strides` are then C strides
  // and `swap_unit` is 1.
  bool cpu_whole_chain = false;
  std::vector<CpuStage> cpu_stages;  // decode order
  std::vector<GpuStage> gpu_stages;  // decode order, after the CPU stages
  // Bytes per element to reverse while scattering (1: none).
  std::uint32_t swap_unit = 1;
  // Byte stride of each array axis inside a decoded (stored-layout) chunk.
  std::vector<std::int64_t> stored_strides;
  ChunkSpec ab_spec;  // the spec the bytes->bytes codecs see
  std::uint64_t chunk_bytes = 0;
};

// Plans the chain of `metadata` (validated; fixed-size dtype).
ChainPlan plan_chain(const ArrayMetadata& metadata);

// What one chunk needs on the device, with offsets relative to the chunk's uploaded bytes
// (StreamJob::src, CrcJob::src) and to its decoded slot (StreamJob::dst, BlockJob::offset).
struct ChunkJobs {
  std::vector<CrcJob> crcs;
  std::vector<StreamJob> streams;
  std::vector<BlockJob> blocks;
  // True when the chunk decodes into a slot of the decode area; otherwise its stored-layout
  // bytes are the uploaded bytes from `passthrough_offset` on.
  bool uses_slot = false;
  std::uint64_t passthrough_offset = 0;
};

// Jobs for the GPU stages of `plan` over `bytes` (the chunk after its CPU stages), or
// nullopt when a header sends this chunk to the CPU codecs.
std::optional<ChunkJobs> plan_chunk_jobs(const ChainPlan& plan, ByteView bytes);

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

// Decodes the GPU stages of `plan` from stage `first` on, on the CPU (the fallback), and
// checks each output against its bound. Returns the stored-layout chunk bytes.
Buffer decode_gpu_stages_on_cpu(const ChainPlan& plan, ByteView bytes, std::size_t first = 0);

}  // namespace zarrkit::gpu
