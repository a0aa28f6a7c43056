// Sharded arrays on the GPU: inner chunks are read like chunks.
//
// When an array's whole chain is one sharding_indexed codec (no array->array codec before
// it, no bytes->bytes codec after it: what zarr-python writes for `shards=`), the GPU
// reader plans the request over the grid of inner chunks (shards divide evenly into inner
// chunks, so that grid is regular over the array) with the inner chain, fetches each
// shard that the batch needs once (whole, or its index and the selected inner chunks as
// byte ranges when few are selected) and decodes all inner chunks of the batch in one set
// of launches. Other sharded chains (nested sharding works too: the inner chain then
// decodes on the CPU per inner chunk) keep the whole-chain CPU decode.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codecs/sharding.h"
#include "zarrkit/metadata.h"

namespace zarrkit::gpu {

struct ShardedRead {
  const ShardingCodec* codec = nullptr;
  ShardLayout layout;
  // The array seen as a grid of inner chunks encoded with the inner chain (same shape,
  // dtype and fill value; chunk_shape = the inner chunk shape).
  ArrayMetadata inner;
};

std::optional<ShardedRead> plan_sharded_read(const ArrayMetadata& m);

// Where inner chunk `inner_coords` (on the inner grid of the whole array) lies: its shard's
// coordinates and its ordinal in that shard's index.
struct InnerChunkPlace {
  std::vector<std::uint64_t> shard_coords;
  std::uint64_t ordinal = 0;
};
InnerChunkPlace place_inner_chunk(const ShardedRead& sharded, const std::vector<std::uint64_t>& inner_coords);

// Fetch whole shards when at least this share of their inner chunks is wanted; otherwise
// the index and each wanted inner chunk as byte ranges.
constexpr double kWholeShardShare = 0.5;

}  // namespace zarrkit::gpu
