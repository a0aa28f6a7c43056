#include "gpu/sharded_plan.h"

#include <memory>

namespace zarrkit::gpu {

std::optional<ShardedRead> plan_sharded_read(const ArrayMetadata& m) {
  if (!m.codecs) return std::nullopt;
  const CodecChain& chain = *m.codecs;
  if (!chain.array_to_array().empty() || !chain.bytes_to_bytes().empty()) return std::nullopt;
  const auto* codec = dynamic_cast<const ShardingCodec*>(chain.array_to_bytes().get());
  if (codec == nullptr) return std::nullopt;
  ShardedRead sharded;
  sharded.codec = codec;
  sharded.layout = codec->layout(m.chunk_spec());  // validates the shard geometry
  sharded.inner = m;
  sharded.inner.chunk_shape = sharded.layout.inner_spec.shape;
  sharded.inner.codecs = std::make_shared<const CodecChain>(codec->inner_codecs());
  return sharded;
}

InnerChunkPlace place_inner_chunk(const ShardedRead& sharded, const std::vector<std::uint64_t>& inner_coords) {
  const Shape& per_shard = sharded.layout.chunks_per_shard;
  InnerChunkPlace place;
  place.shard_coords.resize(inner_coords.size());
  std::vector<std::uint64_t> within(inner_coords.size());
  for (std::size_t k = 0; k < inner_coords.size(); ++k) {
    place.shard_coords[k] = inner_coords[k] / per_shard[k];
    within[k] = inner_coords[k] % per_shard[k];
  }
  place.ordinal = inner_chunk_ordinal(within, sharded.layout);
  return place;
}

}  // namespace zarrkit::gpu
