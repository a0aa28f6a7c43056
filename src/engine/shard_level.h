// What the shard reader and writer share: one level of sharding (the codec and the layout of
// its shards, and the level nested inside its inner codecs), and how a task's runs map onto
// the level's inner chunks.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codecs/sharding.h"
#include "engine/shard_runs.h"

namespace zarrkit {

struct ShardLevel {
  const ShardingCodec* codec = nullptr;
  ShardLayout layout;
  // The inner codecs prepared for one inner chunk: its decoded size and strides, whether
  // it is stored as its raw bytes.
  std::shared_ptr<const PreparedChain> inner;
  // The level inside this one's inner chunks, when the inner chain is exactly one
  // sharding_indexed codec (nothing around it), so inner chunks can be read in part.
  std::unique_ptr<ShardLevel> nested;

  // Decodes one stored inner chunk; InternalError unless the inner codecs made an array
  // of the inner chunk's shape and type.
  NDBuffer decode_inner(ByteView bytes) const;

  // The order inner chunks are written in (zarr-python's Morton order), computed on the
  // first write only: reads never need it, and it is sized by the number of inner chunks.
  const std::vector<std::uint64_t>& write_order() const;

 private:
  mutable std::once_flag order_once_;
  mutable std::vector<std::uint64_t> order_;
};

// The sharding codec of `chain` when the chain is exactly that one codec, else null.
const ShardingCodec* sole_sharding_codec(const CodecChain& chain);

// The level for shards of `shard_spec`, with its nested levels.
std::unique_ptr<ShardLevel> make_shard_level(const ShardingCodec& codec, const ChunkSpec& shard_spec);

// One inner chunk a task touches: a part per axis.
struct InnerChunkRef {
  std::vector<const InnerAxisPart*> parts;
  std::uint64_t ordinal = 0;  // its entry in the index
  bool covered = false;       // every element of it inside the array is selected
  bool inside = true;         // wholly inside the array (no padding past the edge)

  BlockRuns runs() const;
  Shape valid() const;  // per axis, the positions inside the array
  std::string describe() const;  // "inner chunk (1,0)"
};

// Splits `runs` (shard coordinates; `valid` per axis as split_runs takes it) by the level's
// inner chunks and lists the inner chunks touched, in C order.
struct LevelSelection {
  std::vector<std::vector<InnerAxisPart>> axis_parts;
  std::vector<InnerChunkRef> chunks;
  // Inner chunks that hold at least one element inside the array, touched or not.
  std::uint64_t chunks_inside_array = 0;
};
LevelSelection select_inner_chunks(const ShardLevel& level, const BlockRuns& runs, const Shape& valid);

}  // namespace zarrkit
