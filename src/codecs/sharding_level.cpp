#include "codecs/sharding_level.h"

#include <fmt/ranges.h>

#include "zarrkit/error.h"

namespace zarrkit {

ShardLevel::ShardLevel(const ShardingCodec& sharding, const ChunkSpec& shard_spec)
    : codec(&sharding), layout(sharding.layout(shard_spec)) {
  // Nested sharding prepares its own level here, in the inner chain's partial codec (depth
  // bounded by kMaxShardingDepth).
  inner = sharding.inner_codecs().prepare(layout.inner_spec);
  nested = dynamic_cast<const ShardLevel*>(inner->partial());
}

const std::vector<std::uint64_t>& ShardLevel::write_order() const {
  std::call_once(order_once_, [this] { order_ = morton_order(layout.chunks_per_shard); });
  return order_;
}

NDBuffer ShardLevel::decode_inner(ByteView bytes) const {
  NDBuffer chunk = inner->decode(bytes);
  const ChunkSpec& spec = layout.inner_spec;
  if (chunk.shape() != spec.shape || !(chunk.dtype() == spec.dtype)) {
    throw InternalError(fmt::format("sharding_indexed: the inner codecs decoded an array of shape [{}], expected [{}]",
                                    fmt::join(chunk.shape(), ","), fmt::join(spec.shape, ",")));
  }
  return chunk;
}

InnerChunkSelection ShardLevel::select(const BlockRuns& runs, std::span<const std::uint64_t> valid) const {
  return select_inner_chunks(layout.inner_spec.shape, layout.chunks_per_shard, runs, Shape(valid.begin(), valid.end()));
}

}  // namespace zarrkit
