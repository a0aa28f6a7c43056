// The Zarr layouts the demo compares: one chunk shape for every access pattern (zarr-python's
// default codecs of v3 and v2), chunks of one plane along an axis, and shards of small inner
// chunks.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "demo/sample_field.h"

namespace zarrkit::demo {

// What a layout is shaped for; the summary explains wins by it.
enum class LayoutRole {
  kRaw,      // the raw file: no chunks
  kChunks,   // one chunk shape for every access pattern
  kPlanes,   // one plane per chunk, along one axis
  kSharded,  // shards holding small inner chunks
};

struct ZarrLayout {
  std::string name;  // "zarr v3", "z-plane chunks"
  LayoutRole role = LayoutRole::kChunks;
  int zarr_format = 3;
  Shape3 chunks{};        // the chunk grid (the shard shape when sharded)
  Shape3 decoded{};       // what a read decodes: the chunks, or the inner chunks
  nlohmann::json codecs;  // v3 "codecs", or v2 {"compressor": ..., "filters": ...}
  std::string description;
};

// bytes(little) + zstd(level 1): zarr-python 3's default pipeline at a fast level.
ZarrLayout default_v3_layout(const Shape3& chunks);
// blosc lz4, clevel 5, byte shuffle: zarr-python 2's default compressor.
ZarrLayout default_v2_layout(const Shape3& chunks);
// v3, bytes + zstd level 1, one plane of `shape` along `axis` (0: z, 1: y, 2: x) per chunk.
ZarrLayout plane_layout(const Shape3& shape, int axis);
// v3 sharding_indexed: shards of `shard` holding inner chunks of `inner` (which must divide
// it), each bytes + zstd level 1; the index (bytes + crc32c) at the end, as zarr-python writes.
ZarrLayout sharded_layout(const Shape3& shard, const Shape3& inner);
// The largest inner chunk shape that divides `shard` evenly and is at most `edge` per axis.
Shape3 inner_chunks_for(const Shape3& shard, std::uint64_t edge);

}  // namespace zarrkit::demo
