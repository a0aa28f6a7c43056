// A validated codec chain: array->array*, exactly one array->bytes, bytes->bytes*.
// Encoding runs the codecs in order; decoding runs them in reverse.
//
// A chain prepared for one chunk spec (CodecChain::prepare, PreparedChain) has everything
// that depends only on that spec worked out once, with checked arithmetic: the decoded
// size and strides, the spec each codec sees, the size each bytes->bytes decoder must
// produce, and the array->bytes codec's own state for that spec (sharding: its layout and
// its inner chain, prepared in turn). The engine prepares an array's chain once per
// metadata (ArrayMetadata::prepared_chain) and reads and writes every chunk through it;
// the device path plans its batches from the same object.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrkit/codec.h"

namespace zarrkit {

class CodecRegistry;
class PreparedChain;

class CodecChain {
 public:
  // Checks the order AA* AB BB*; InvalidArgumentError otherwise (including an empty list).
  static CodecChain from_codecs(std::vector<std::shared_ptr<const Codec>> codecs);
  // Parses a v3 "codecs" list for an array of `dtype`.
  static CodecChain from_v3_json(const nlohmann::json& codecs, const DataType& dtype,
                                 const CodecRegistry& registry);

  // The chain prepared for chunks of `spec` (validated once; see PreparedChain). Throws
  // what validate() throws.
  std::shared_ptr<const PreparedChain> prepare(const ChunkSpec& spec) const;

  // The functions below work out what they need from `spec` at each call; code that
  // handles many chunks of one spec uses a PreparedChain instead.
  Buffer encode(const NDBuffer& chunk, const ChunkSpec& spec) const;
  NDBuffer decode(ByteView encoded, const ChunkSpec& spec,
                  const BufferPrototype& prototype = BufferPrototype::host()) const;

  // Decodes one chunk of `spec` straight into `out` (exactly the chunk's bytes, C order,
  // host memory), without intermediate buffers where the codecs allow. Returns false, having
  // done nothing, when the chain cannot (array->array codecs, an array->bytes codec other
  // than "bytes", two compressors in a row): then use decode() and copy.
  bool decode_into(ByteView encoded, const ChunkSpec& spec, MutableByteView out) const;
  // A reader of the chunk's decoded bytes (C order, as decode_into writes them) piece by
  // piece (PieceReader in codec.h), where the chain allows it: no array->array codecs, an
  // array->bytes codec that decodes in place, and one compressor that decodes in pieces,
  // followed only by checksums, which need the encoded bytes in memory. Null otherwise, or
  // when the compressor cannot decode this data in pieces; use decode_into then. Pieces read
  // must be whole elements. Checksums are checked here, with the errors decode_into gives.
  std::unique_ptr<PieceReader> decode_pieces(std::shared_ptr<ByteSource> encoded, const ChunkSpec& spec) const;
  // True when the stored value is the chunk's elements in C order, unchanged (only a
  // "bytes" codec that needs no byte swap): a reader may read any part of it straight into
  // its output.
  bool stores_raw_bytes(const ChunkSpec& spec) const;

  // The exact encoded size when every codec has a fixed one (used for shard indexes).
  std::optional<std::uint64_t> encoded_size(const ChunkSpec& spec) const;
  // Validates the chain against a chunk spec once (e.g. transpose order length, bytes
  // endian for multi-byte types); throws InvalidArgumentError.
  void validate(const ChunkSpec& spec) const;

  nlohmann::json to_json() const;  // the v3 "codecs" list

  const std::vector<std::shared_ptr<const ArrayToArrayCodec>>& array_to_array() const { return aa_; }
  const std::shared_ptr<const ArrayToBytesCodec>& array_to_bytes() const { return ab_; }
  const std::vector<std::shared_ptr<const BytesToBytesCodec>>& bytes_to_bytes() const { return bb_; }

 private:
  std::vector<std::shared_ptr<const ArrayToArrayCodec>> aa_;
  std::shared_ptr<const ArrayToBytesCodec> ab_;
  std::vector<std::shared_ptr<const BytesToBytesCodec>> bb_;
};

// What a bytes->bytes decoder of a chain may produce, known before decoding.
struct DecodeBound {
  // Where the chunk spec gives one (fixed-size elements): exact where every stage before
  // the codec (when encoding) has a fixed size, else the ceiling compressors may expand
  // to. nullopt for variable-length elements, whose size the spec does not say.
  std::optional<SizeBound> bound;
  // The array->bytes codec's size was estimated from the decoded array's, not fixed
  // (sharding): the estimate can be too small for odd layouts (a shard index bigger than
  // its data), so what the input could expand to is allowed as well.
  bool estimated = false;

  // What a decoder with `input_size` bytes to decode may produce.
  SizeBound for_input(std::uint64_t input_size) const;
};

// A codec chain prepared for chunks of one spec: immutable and thread-safe, shared by
// every reader and writer of those chunks (and by the host and the device paths).
class PreparedChain {
 public:
  // Validates `chain` against `spec` (what CodecChain::validate checks) and works out
  // everything below. CodecChain::prepare returns one of these.
  PreparedChain(const CodecChain& chain, const ChunkSpec& spec);
  PreparedChain(const PreparedChain&) = delete;
  PreparedChain& operator=(const PreparedChain&) = delete;

  const CodecChain& chain() const { return chain_; }
  const ChunkSpec& spec() const { return specs_.front(); }
  // The decoded chunk: its size in bytes and its C-order byte strides. 0 and all zero for
  // variable-length elements, which have no fixed size.
  std::uint64_t chunk_bytes() const { return chunk_bytes_; }
  std::span<const std::int64_t> strides() const { return strides_; }

  // The spec array->array codec `i` decodes to (the one it sees when encoding).
  const ChunkSpec& array_to_array_spec(std::size_t i) const { return specs_.at(i); }
  // The spec the array->bytes codec (and the bytes->bytes codecs) see.
  const ChunkSpec& array_to_bytes_spec() const { return specs_.back(); }
  // For bytes->bytes codec `i` (chain order), what its decoder must produce.
  std::span<const DecodeBound> bytes_to_bytes_bounds() const { return bb_bounds_; }

  // The exact encoded size, when every codec has a fixed one.
  std::optional<std::uint64_t> encoded_size() const { return encoded_size_; }
  // See CodecChain::stores_raw_bytes.
  bool stores_raw_bytes() const { return stores_raw_bytes_; }
  // Whether decode_into can decode chunks of this spec (it returns false otherwise).
  bool decodes_into() const { return decodes_into_; }
  // The partial codec (core/partial_chunk_codec.h) when the chain is exactly one array->bytes
  // codec whose chunks can be read and written in part (sharding, with no codec around
  // it); null otherwise: such chains read and write whole chunks.
  const PartialChunkCodec* partial() const { return partial_.get(); }

  // CodecChain's functions, for chunks of spec().
  Buffer encode(const NDBuffer& chunk) const;
  NDBuffer decode(ByteView encoded, const BufferPrototype& prototype = BufferPrototype::host()) const;
  bool decode_into(ByteView encoded, MutableByteView out) const;
  std::unique_ptr<PieceReader> decode_pieces(std::shared_ptr<ByteSource> encoded) const;

 private:
  CodecChain chain_;
  std::vector<ChunkSpec> specs_;  // specs_[i]: array->array codec i's; back(): array->bytes's
  std::uint64_t chunk_bytes_ = 0;
  std::vector<std::int64_t> strides_;
  std::vector<DecodeBound> bb_bounds_;
  std::optional<std::uint64_t> encoded_size_;
  std::size_t producers_ = 0;  // bytes->bytes codecs before the trailing checksums
  bool ab_identity_ = false;  // the array->bytes codec leaves the elements as they are
  bool stores_raw_bytes_ = false;
  bool decodes_into_ = false;
  bool decodes_pieces_ = false;
  std::shared_ptr<const PartialChunkCodec> partial_;
};

}  // namespace zarrkit
