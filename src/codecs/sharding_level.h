// The sharding codec prepared for shards of one shape: its partial codec
// (core/partial_chunk_codec.h), which the engine reads and writes sharded arrays through,
// one chunk task (one shard) at a time. ShardingCodec::prepare_partial makes it; a
// PreparedChain whose chain is exactly one sharding_indexed codec hands it out.
//
// Reads (sharding_reader.cpp) fetch the shard index with one ranged get (the first or last
// index_size bytes), then only the inner chunks the selection touches, as byte ranges of one
// get_ranges call; ranges closer than PartialIoSettings::coalesce_gap are merged into one.
// An absent shard and an empty inner chunk (offset = nbytes = 2^64-1) read as the fill value.
// A task that selects the whole shard opens it once (Store::open_reader: one snapshot of
// the value, whose size checks the index) and reads it through that reader: inner chunks
// stored raw that fill a block of the output laid out like themselves are read straight
// into it, in parallel; the others in windows of PartialIoSettings::read_window of encoded
// bytes, each window's inner chunks decoded in parallel before the next is read, so a task
// holds one window, not the whole shard. Stores without cheap ranged reads, and whole shards
// on remote stores (batched gets, where one request for the whole shard hides the latency),
// fetch the shard in one get instead. Nested sharding (an inner chain that is exactly one
// sharding_indexed codec) reads the same way one level down, inside the outer inner chunk's
// byte range. locate (also sharding_reader.cpp) does the first step only: the index, and
// where each inner chunk a task touches is stored.
//
// Writes (sharding_writer.cpp) encode the inner chunks the task covers completely before
// taking the shard's lock (core/key_locks.h), so several shards encode in parallel; then,
// under the lock, read the old shard if anything of it is kept, merge the partly covered
// inner chunks with their old values, copy the encoded bytes of untouched inner chunks as
// they are (never decoded), and write the shard with its new index. Inner chunks that hold
// only the fill value are left out (unless PartialIoSettings::write_empty_chunks), and a
// shard left without inner chunks is deleted. Inner chunks are laid out in zarr-python's
// Morton order, so a shard is byte-identical to the one zarr-python writes for the same
// values.
//
// Chains with codecs around sharding (transpose before it, a checksum after it) have no
// partial codec: the engine reads and writes their shards whole, through the codec chain.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "codecs/sharding.h"
#include "core/block_runs.h"
#include "core/partial_chunk_codec.h"

namespace zarrkit {

// One level of sharding: the codec and the layout of its shards, the inner chain prepared
// for their inner chunks, and the level nested inside it.
class ShardLevel final : public PartialChunkCodec {
 public:
  // Validates `shard_spec` (ShardingCodec::layout) and prepares the inner chain. `codec`
  // must outlive the level (the PreparedChain that holds both sees to it).
  ShardLevel(const ShardingCodec& codec, const ChunkSpec& shard_spec);

  const ShardingCodec* codec = nullptr;
  ShardLayout layout;
  // The inner codecs prepared for one inner chunk: its decoded size and strides, whether
  // it is stored as its raw bytes.
  std::shared_ptr<const PreparedChain> inner;
  // The level inside this one's inner chunks, when the inner chain is exactly one
  // sharding_indexed codec (nothing around it), so inner chunks can be read in part.
  const ShardLevel* nested = nullptr;

  // Decodes one stored inner chunk; InternalError unless the inner codecs made an array
  // of the inner chunk's shape and type.
  NDBuffer decode_inner(ByteView bytes) const;

  // The order inner chunks are written in (zarr-python's Morton order), computed on the
  // first write only: reads never need it, and it is sized by the number of inner chunks.
  const std::vector<std::uint64_t>& write_order() const;

  // PartialChunkCodec.
  const std::shared_ptr<const PreparedChain>& inner_chain() const override { return inner; }
  const Shape& chunk_shape() const override { return layout.shard_spec.shape; }
  std::uint64_t num_inner_chunks() const override { return layout.num_inner_chunks; }
  // Splits `runs` (shard coordinates) by the level's inner chunks (select_inner_chunks).
  InnerChunkSelection select(const BlockRuns& runs, std::span<const std::uint64_t> valid) const override;
  // With request.cache set, read_through_cache (sharding_cached_read.cpp) instead.
  void read(const PartialRequest& request, const std::string& key, const ChunkTask& task) const override;
  bool read_from_cache(const PartialRequest& request, const std::string& key, const ChunkTask& task) const override;
  void write(const PartialRequest& request, const std::string& key, const ChunkTask& task) const override;
  LocatedChunks locate(const ChunkSource& source, const BlockRuns& runs,
                       std::span<const std::uint64_t> valid) const override;

 private:
  // Reads through request.cache: the inner chunks it holds are copied from it; for the
  // others the index is read, and each is fetched (coalesced ranges), decoded whole into a
  // buffer of its own, put in the cache and copied. Nested shards are decoded whole.
  void read_through_cache(const PartialRequest& request, const std::string& key, const ChunkTask& task) const;

  mutable std::once_flag order_once_;
  mutable std::vector<std::uint64_t> order_;
};

// Where one level's shard lies, for the reads of sharding_reader.cpp and
// sharding_cached_read.cpp: a whole store value, or a byte range of one (an inner chunk of
// the level above). `bytes` holds the shard when it is in memory already; `reader` reads
// the store value when the task reads all of it through one (set, its size is known).
struct ShardSource {
  std::uint64_t base = 0;                // offset of the shard in the store value
  std::optional<std::uint64_t> size;     // known for a fetched, opened or nested shard
  std::optional<ByteView> bytes;         // the whole shard, when in memory
  ByteSource* reader = nullptr;          // the store value, opened
};

// The index bytes of the shard (held by `storage` where they had to be fetched from `key`
// of `store`, which is needed only then), or nullopt when the shard is absent.
std::optional<ByteView> fetch_shard_index(const ShardLevel& level, const ShardSource& source, Store* store,
                                          std::string_view key, std::optional<Buffer>& storage);

}  // namespace zarrkit
