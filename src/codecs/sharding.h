// The v3 "sharding_indexed" codec (array->bytes): a shard holds a grid of inner chunks,
// each encoded with the inner codec chain, plus an index of (offset, nbytes) per inner
// chunk, encoded with the fixed-size index chain and placed at the start or end of the
// shard (SPEC-NOTES rule 23).
//
// Besides the ordinary encode/decode:
//  * Partial reads and writes: prepare_partial() makes the codec's partial codec for one
//    shard shape (ShardLevel, sharding_level.h), through which the engine reads and writes
//    part of a shard without naming this codec. It uses layout() once per shard shape,
//    index_byte_range() to fetch the index, decode_index() to validate it, then fetches
//    entry i's [offset, offset + nbytes) and decodes it with the inner chain. An empty
//    entry reads as the fill value.
//  * Empty shards. encode() always returns a valid shard: one whose inner chunks are all
//    the fill value is the bare index with every entry empty, which decodes to the fill
//    value. Such a shard should not be stored at all (zarr-python deletes it). A shard is
//    entirely the fill value exactly when the array region it covers is, so the engine's
//    ordinary rule for unsharded chunks (all_equal_fill on the chunk before encoding ->
//    erase the key instead of writing) already does this; no zero-byte signal is needed,
//    and none would survive a bytes->bytes codec after sharding anyway. For a shard built
//    from an index (read-modify-write), index_is_empty() answers the same question.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "zarrkit/codec.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/store.h"

namespace zarrkit {

// Both fields of an empty entry (an inner chunk that is not stored: the fill value).
inline constexpr std::uint64_t kShardEntryEmpty = ~std::uint64_t{0};

// How deep sharding may nest inside sharding's inner codecs.
inline constexpr int kMaxShardingDepth = 8;

enum class ShardIndexLocation : std::uint8_t { kStart, kEnd };

struct ShardIndexEntry {
  std::uint64_t offset = kShardEntryEmpty;
  std::uint64_t nbytes = kShardEntryEmpty;
  bool is_empty() const { return offset == kShardEntryEmpty && nbytes == kShardEntryEmpty; }
  bool operator==(const ShardIndexEntry&) const = default;
};

// The geometry of a shard of one shape, computed (and validated) once.
struct ShardLayout {
  ChunkSpec shard_spec;
  Shape chunks_per_shard;        // shard shape / inner chunk shape, per dimension
  std::uint64_t num_inner_chunks = 0;
  ChunkSpec inner_spec;          // one inner chunk: the codec's chunk_shape, the array's dtype
  ChunkSpec index_spec;          // uint64, chunks_per_shard + [2], fill 2^64-1
  std::uint64_t index_size = 0;  // encoded bytes of the index (16 * n + what index codecs add)
};

class ShardingCodec final : public ArrayToBytesCodec {
 public:
  ShardingCodec(Shape chunk_shape, CodecChain inner_codecs, CodecChain index_codecs, ShardIndexLocation location);

  std::string_view name() const override { return "sharding_indexed"; }
  nlohmann::json to_json() const override;

  // chunk_shape has the shard's ndim and divides it evenly; the index chain has a fixed
  // size; the inner and index chains accept their specs. InvalidArgumentError otherwise.
  void validate(const ChunkSpec& shard_spec) const override;
  // Not fixed: inner chunks are compressed and empty ones are left out.
  Buffer encode(const NDBuffer& shard, const ChunkSpec& shard_spec) const override;
  NDBuffer decode(ByteView shard, const ChunkSpec& shard_spec, const BufferPrototype& prototype) const override;

  // The partial codec for shards of `shard_spec` (sharding_level.h); validates the spec.
  std::shared_ptr<const PartialChunkCodec> prepare_partial(const ChunkSpec& shard_spec) const override;
  const Shape* inner_chunk_shape() const override { return &chunk_shape_; }
  const CodecChain* inner_chain() const override { return &inner_; }
  std::shared_ptr<const ArrayToBytesCodec> with_inner_chain(const CodecChain& inner) const override;

  const Shape& chunk_shape() const { return chunk_shape_; }
  const CodecChain& inner_codecs() const { return inner_; }
  const CodecChain& index_codecs() const { return index_; }
  ShardIndexLocation index_location() const { return location_; }

  // Validates `shard_spec` and computes its layout.
  ShardLayout layout(const ChunkSpec& shard_spec) const;

  // Where the index lies in the shard value: the first index_size bytes ("start") or the
  // last ("end"), as a store byte range.
  ByteRange index_byte_range(const ShardLayout& layout) const;

  // Decodes the index (exactly layout.index_size bytes; checksums verified) into one entry
  // per inner chunk, in C order of the inner chunk grid (see inner_chunk_ordinal).
  // DataLossError for a bad checksum, an entry with only one field set to 2^64-1, an
  // offset + nbytes that overflows, an entry overlapping the index ("start": offsets count
  // from the start of the shard value, index included) or, when `shard_size` is given,
  // reaching past the shard's data. Without `shard_size` (a ranged read of the index alone),
  // the caller must check that each ranged read of an entry returns exactly nbytes.
  std::vector<ShardIndexEntry> decode_index(ByteView index_bytes, const ShardLayout& layout,
                                            std::optional<std::uint64_t> shard_size) const;

  // Decodes one stored inner chunk (the bytes an index entry points at) into an array of
  // layout.inner_spec's shape.
  NDBuffer decode_inner_chunk(ByteView chunk_bytes, const ShardLayout& layout,
                              const BufferPrototype& prototype = BufferPrototype::host()) const;
  // Decodes one inner chunk straight into `out` (its bytes, C order) when the inner codecs
  // allow (CodecChain::decode_into); false, having done nothing, when they do not.
  bool decode_inner_chunk_into(ByteView chunk_bytes, const ShardLayout& layout, MutableByteView out) const;

 private:
  Buffer encode_index(const std::vector<ShardIndexEntry>& entries, const ShardLayout& layout) const;

  Shape chunk_shape_;
  CodecChain inner_;
  CodecChain index_;
  ShardIndexLocation location_;
};

// The position of the inner chunk at `coords` in the index (C order over chunks_per_shard).
std::uint64_t inner_chunk_ordinal(std::span<const std::uint64_t> coords, const ShardLayout& layout);

// True when no entry points at stored data: the shard holds only the fill value.
bool index_is_empty(std::span<const ShardIndexEntry> entries);

// The C-order ordinals of a grid's cells in the Morton (Z) order zarr-python lays inner
// chunks out in, so that zarrkit's shards are byte-identical to its own. Bits are
// interleaved dimension 0 lowest, and a dimension stops contributing bits once its extent
// is covered ("compressed" Morton code, as in Neuroglancer).
std::vector<std::uint64_t> morton_order(const Shape& grid);

}  // namespace zarrkit
