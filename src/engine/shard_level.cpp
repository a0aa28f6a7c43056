#include "engine/shard_level.h"

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "zarrkit/error.h"

namespace zarrkit {

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

const ShardingCodec* sole_sharding_codec(const CodecChain& chain) {
  if (!chain.array_to_array().empty() || !chain.bytes_to_bytes().empty()) return nullptr;
  return dynamic_cast<const ShardingCodec*>(chain.array_to_bytes().get());
}

std::unique_ptr<ShardLevel> make_shard_level(const ShardingCodec& codec, const ChunkSpec& shard_spec) {
  auto level = std::make_unique<ShardLevel>();
  level->codec = &codec;
  level->layout = codec.layout(shard_spec);
  const ChunkSpec& inner = level->layout.inner_spec;
  level->inner = codec.inner_codecs().prepare(inner);
  if (const ShardingCodec* nested = sole_sharding_codec(codec.inner_codecs())) {
    level->nested = make_shard_level(*nested, inner);  // depth bounded by kMaxShardingDepth
  }
  return level;
}

BlockRuns InnerChunkRef::runs() const {
  BlockRuns out;
  out.reserve(parts.size());
  for (const InnerAxisPart* p : parts) out.emplace_back(p->runs);
  return out;
}

Shape InnerChunkRef::valid() const {
  Shape out;
  out.reserve(parts.size());
  for (const InnerAxisPart* p : parts) out.push_back(p->valid);
  return out;
}

std::string InnerChunkRef::describe() const {
  std::vector<std::uint64_t> coords;
  for (const InnerAxisPart* p : parts) coords.push_back(p->index);
  return fmt::format("inner chunk ({})", fmt::join(coords, ","));
}

LevelSelection select_inner_chunks(const ShardLevel& level, const BlockRuns& runs, const Shape& valid) {
  const Shape& inner_shape = level.layout.inner_spec.shape;
  const Shape& grid = level.layout.chunks_per_shard;
  const std::size_t ndim = inner_shape.size();
  if (runs.size() != ndim || valid.size() != ndim) {
    throw InternalError("shard selection: the runs do not match the shard's number of axes");
  }
  LevelSelection sel;
  sel.axis_parts.resize(ndim);
  sel.chunks_inside_array = 1;
  for (std::size_t a = 0; a < ndim; ++a) {
    sel.axis_parts[a] = split_runs(runs[a], inner_shape[a], valid[a]);
    sel.chunks_inside_array *= ceil_div(valid[a], inner_shape[a]);  // <= the number of inner chunks
    for (const InnerAxisPart& part : sel.axis_parts[a]) {
      if (part.index >= grid[a]) throw InternalError("shard selection: a run reaches past the shard");
    }
  }
  for_each_inner_chunk(sel.axis_parts, [&](const std::vector<std::size_t>& pick) {
    InnerChunkRef ref;
    ref.parts.reserve(ndim);
    ref.covered = true;
    for (std::size_t a = 0; a < ndim; ++a) {
      const InnerAxisPart& part = sel.axis_parts[a][pick[a]];
      ref.parts.push_back(&part);
      ref.ordinal = ref.ordinal * grid[a] + part.index;
      ref.covered = ref.covered && part.covers;
      ref.inside = ref.inside && part.valid == inner_shape[a];
    }
    sel.chunks.push_back(std::move(ref));
  });
  return sel;
}

}  // namespace zarrkit
