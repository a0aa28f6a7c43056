// Codec interfaces: array->array, array->bytes, bytes->bytes (Zarr v3 core, "codecs").
//
// A codec is built once from its JSON configuration, is immutable and thread-safe, and is
// told the ChunkSpec (shape, dtype, fill value) of the chunk it works on at each call.
// Decoders never allocate from sizes found in the data: they take the expected decoded size
// (exact where the chain knows it, otherwise a ceiling) and fail with DataLossError when
// the data disagrees.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrkit/buffer.h"
#include "zarrkit/dtype.h"
#include "zarrkit/ndbuffer.h"

namespace zarrkit {

// What a codec sees of the chunk it encodes or decodes.
struct ChunkSpec {
  Shape shape;
  DataType dtype;
  FillValue fill_value;
};

enum class CodecKind : std::uint8_t { kArrayToArray, kArrayToBytes, kBytesToBytes };

class CodecChain;
class PartialChunkCodec;  // core/partial_chunk_codec.h

class Codec {
 public:
  virtual ~Codec() = default;
  virtual CodecKind kind() const = 0;
  // The v3 name ("bytes", "blosc", "numcodecs.zlib").
  virtual std::string_view name() const = 0;
  // The v3 metadata form: {"name": ..., "configuration": {...}}.
  virtual nlohmann::json to_json() const = 0;
  // The numcodecs form for v2 metadata ({"id": "blosc", ...}); nullopt if the codec has
  // none (bytes, transpose, crc32c).
  virtual std::optional<nlohmann::json> to_v2_json() const { return std::nullopt; }
  // The v3 form to write into new v3 metadata for chunks of `dtype`: where the codec came
  // from v2 metadata and a core v3 codec does the same (numcodecs.blosc: blosc), that
  // codec's form, which every v3 reader knows; to_json() otherwise.
  virtual nlohmann::json to_v3_core_json(const DataType& dtype) const {
    (void)dtype;
    return to_json();
  }
};

class ArrayToArrayCodec : public Codec {
 public:
  CodecKind kind() const final { return CodecKind::kArrayToArray; }
  // The spec of the encoded array given the spec of the decoded one (transpose permutes
  // the shape; astype changes the dtype). Validates (e.g. the permutation length).
  virtual ChunkSpec encoded_spec(const ChunkSpec& decoded) const = 0;
  virtual NDBuffer encode(const NDBuffer& decoded, const ChunkSpec& decoded_spec) const = 0;
  virtual NDBuffer decode(const NDBuffer& encoded, const ChunkSpec& decoded_spec) const = 0;
  // For codecs that only reorder the axes (transpose): for chunks of `ndim` axes, which
  // decoded axis each encoded axis is (encoded axis i is decoded axis order[i]). nullopt
  // for the others.
  virtual std::optional<std::vector<std::size_t>> axis_order(std::size_t ndim) const {
    (void)ndim;
    return std::nullopt;
  }
};

class ArrayToBytesCodec : public Codec {
 public:
  CodecKind kind() const final { return CodecKind::kArrayToBytes; }
  // Throws if the codec cannot serialise this spec (e.g. bytes without endian for int32).
  virtual void validate(const ChunkSpec& spec) const { (void)spec; }
  // The exact encoded size when it depends only on the spec (bytes: elements * itemsize).
  virtual std::optional<std::uint64_t> encoded_size(const ChunkSpec& spec) const {
    (void)spec;
    return std::nullopt;
  }
  virtual Buffer encode(const NDBuffer& chunk, const ChunkSpec& spec) const = 0;
  virtual NDBuffer decode(ByteView encoded, const ChunkSpec& spec,
                          const BufferPrototype& prototype) const = 0;

  // Decoding into the caller's memory (CodecChain::decode_into). True when, for `spec`, the
  // encoded form is the chunk's elements in C order up to a change made in place, element
  // by element (bytes: the byte order); decode_in_place then makes that change to `bytes`,
  // which holds exactly the encoded chunk, or whole elements of it with a one-axis `spec`
  // of that many elements (CodecChain::decode_pieces). Codecs that build something else
  // keep the default false.
  virtual bool decodes_in_place(const ChunkSpec& spec) const {
    (void)spec;
    return false;
  }
  virtual void decode_in_place(MutableByteView bytes, const ChunkSpec& spec) const;
  // True when, for `spec`, the encoded form is the chunk's elements in C order unchanged.
  virtual bool is_identity(const ChunkSpec& spec) const {
    (void)spec;
    return false;
  }
  // For codecs that store each element's bytes as they are, in one byte order (bytes):
  // that order (little where the configuration names none). nullopt for the others.
  virtual std::optional<Endian> element_byte_order() const { return std::nullopt; }

  // Codecs that store a chunk as a grid of inner chunks, each encoded with a chain of its
  // own (sharding): the inner chunks' shape and chain. Null for the others.
  virtual const Shape* inner_chunk_shape() const { return nullptr; }
  virtual const CodecChain* inner_chain() const { return nullptr; }
  // The same codec with `inner` as the inner chunks' chain. UnsupportedError for codecs
  // without inner chunks.
  virtual std::shared_ptr<const ArrayToBytesCodec> with_inner_chain(const CodecChain& inner) const;

  // What the codec works out once for chunks of `spec` (PreparedChain keeps it), after
  // validating the spec as validate() does: for codecs whose encoded chunk can be read and
  // written in part (sharding), the partial codec for such chunks; null for the others.
  virtual std::shared_ptr<const PartialChunkCodec> prepare_partial(const ChunkSpec& spec) const;
};

// The decoded bytes of one chunk, handed out piece by piece in order
// (BytesToBytesCodec::decode_pieces, CodecChain::decode_pieces). A chunk whose elements lie
// scattered through the caller's output is then decoded through a small buffer that stays
// in cache, each piece copied to its place, instead of through a chunk-sized buffer.
//
// The encoded bytes come from a ByteSource: in memory, or read a part at a time from the
// store as decoding goes (Store::open_reader), so that neither the decoded nor the encoded
// chunk is held whole.
//
// A reader reports trouble of any kind (corrupt or truncated data, more or fewer bytes than
// expected, a frame it does not handle) by returning false and nothing else: the caller
// then decodes the chunk whole (decode_into), which reports what is wrong with the data in
// the words it always has. A reader is used on the thread that made it, before that thread
// decodes anything else.
class PieceReader {
 public:
  virtual ~PieceReader() = default;
  // Fills `out` with the next out.size() decoded bytes.
  virtual bool read(MutableByteView out) = 0;
  // After the last read: true when the data held exactly the bytes read, nothing more.
  virtual bool finish() = 0;
  // Pieces that are multiples of this many bytes, at offsets that are too, cost least
  // (blosc: its block size, each block being decoded whole); 1 where any size will do.
  virtual std::uint64_t granularity() const { return 1; }
};

// The decoded size a bytes->bytes decoder may produce.
struct SizeBound {
  std::uint64_t bytes = 0;
  bool exact = false;  // true: anything else is DataLossError; false: a ceiling
};

class BytesToBytesCodec : public Codec {
 public:
  CodecKind kind() const final { return CodecKind::kBytesToBytes; }
  // The encoded size for a decoded size, where it is fixed (crc32c: +4); nullopt for
  // compressors.
  virtual std::optional<std::uint64_t> encoded_size(std::uint64_t decoded_size) const {
    (void)decoded_size;
    return std::nullopt;
  }
  virtual Buffer encode(ByteView decoded, const ChunkSpec& spec) const = 0;
  virtual Buffer decode(ByteView encoded, SizeBound decoded_size, const ChunkSpec& spec) const = 0;

  // Decodes into `out`, whose size is the exact decoded size; DataLossError when the data
  // decodes to anything else. The default decodes into a new buffer and copies it;
  // compressors override it to write straight into `out` (the caller's output array).
  virtual void decode_into(ByteView encoded, MutableByteView out, const ChunkSpec& spec) const;

  // A reader of the `decoded_size` bytes `encoded` decodes to, piece by piece (see
  // PieceReader); null where the codec cannot decode that way (the default), or not from
  // this source, or where the data already shows that it does not decode to `decoded_size`
  // bytes. Errors it throws are those decode_into would throw for the same bytes, or the
  // source's own (a failed read).
  virtual std::unique_ptr<PieceReader> decode_pieces(std::shared_ptr<ByteSource> encoded,
                                                     std::uint64_t decoded_size, const ChunkSpec& spec) const {
    (void)encoded;
    (void)decoded_size;
    (void)spec;
    return nullptr;
  }

  // Codecs whose decoded bytes are a part of the encoded ones (checksums) return true
  // from decodes_to_view; decode_view then checks `encoded` and returns that part, without
  // copying.
  virtual bool decodes_to_view() const { return false; }
  virtual ByteView decode_view(ByteView encoded, const ChunkSpec& spec) const;
};

// Builds the {"name", "configuration"} object codecs use for to_json().
nlohmann::json codec_json(std::string_view name, nlohmann::json configuration);

}  // namespace zarrkit
