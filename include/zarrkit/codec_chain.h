// A validated codec chain: array->array*, exactly one array->bytes, bytes->bytes*.
// Encoding runs the codecs in order; decoding runs them in reverse.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrkit/codec.h"

namespace zarrkit {

class CodecRegistry;

class CodecChain {
 public:
  // Checks the order AA* AB BB*; InvalidArgumentError otherwise (including an empty list).
  static CodecChain from_codecs(std::vector<std::shared_ptr<const Codec>> codecs);
  // Parses a v3 "codecs" list for an array of `dtype`.
  static CodecChain from_v3_json(const nlohmann::json& codecs, const DataType& dtype,
                                 const CodecRegistry& registry);

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

}  // namespace zarrkit
