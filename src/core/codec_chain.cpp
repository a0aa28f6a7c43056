#include "zarrkit/codec_chain.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "core/partial_chunk_codec.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

// Decoding never produces more than this, whatever the data claims.
constexpr std::uint64_t kMaxDecodedBytes = MetadataLimits{}.max_chunk_bytes;
// The slack allowed per compressor whose output size is not fixed: compressors may expand
// incompressible input a little (headers, block overhead), never by more than this.
std::uint64_t compressor_ceiling(std::uint64_t inner) {
  auto bound = try_add(inner, inner / 8);
  if (bound) bound = try_add(*bound, 64 << 10);
  return bound ? std::min(*bound, kMaxDecodedBytes) : kMaxDecodedBytes;
}

// A ceiling from the bytes in hand, for stages where nothing else is known.
std::uint64_t input_ceiling(std::uint64_t input_size) {
  auto bound = try_mul(input_size, 64);
  if (bound) bound = try_add(*bound, 1 << 20);
  return bound ? std::min(*bound, kMaxDecodedBytes) : kMaxDecodedBytes;
}

// What each bytes->bytes decoder may produce (DecodeBound), for the array->bytes codec
// seeing `ab_spec`: exact where every stage before it (when encoding) has a fixed size; a
// ceiling where a compressor or a variable-size array->bytes codec came first; unknown
// where the chunk spec says nothing (variable-length types).
std::vector<DecodeBound> decode_bounds(const CodecChain& chain, const ChunkSpec& ab_spec) {
  const auto& bb = chain.bytes_to_bytes();
  std::optional<SizeBound> current;
  bool estimated = false;
  if (auto exact = chain.array_to_bytes()->encoded_size(ab_spec)) {
    current = SizeBound{*exact, true};
  } else if (!ab_spec.dtype.is_variable_length()) {
    // Not fixed (sharding, for one), but in practice close to the decoded array's size.
    if (auto nbytes = try_mul(checked_num_elements(ab_spec.shape), ab_spec.dtype.size())) {
      current = SizeBound{compressor_ceiling(*nbytes), false};
      estimated = true;
    }
  }
  std::vector<DecodeBound> bounds;
  bounds.reserve(bb.size());
  for (const auto& codec : bb) {
    bounds.push_back(DecodeBound{current, estimated});
    if (!current) continue;
    if (auto next = codec->encoded_size(current->bytes)) {
      current->bytes = *next;  // crc32c and the like: exact stays exact
    } else {
      current = SizeBound{compressor_ceiling(current->bytes), false};
    }
  }
  return bounds;
}

// The spec each array->array codec sees (decoded side), then the array->bytes codec's.
// Validates the array->array codecs against their specs.
std::vector<ChunkSpec> chain_specs(const CodecChain& chain, const ChunkSpec& spec) {
  std::vector<ChunkSpec> specs;
  specs.reserve(chain.array_to_array().size() + 1);
  specs.push_back(spec);
  for (const auto& codec : chain.array_to_array()) specs.push_back(codec->encoded_spec(specs.back()));
  return specs;
}

std::optional<std::uint64_t> chain_encoded_size(const CodecChain& chain, const ChunkSpec& ab_spec) {
  auto size = chain.array_to_bytes()->encoded_size(ab_spec);
  for (const auto& codec : chain.bytes_to_bytes()) {
    if (!size) return std::nullopt;
    size = codec->encoded_size(*size);
  }
  return size;
}

// The bytes->bytes codecs before the checksums at the end of the list, which only cut
// their bytes off (decode_view): decoding straight into the caller's memory allows at most
// one of them, which then writes there.
std::size_t count_producers(const CodecChain& chain) {
  const auto& bb = chain.bytes_to_bytes();
  std::size_t producers = bb.size();
  while (producers > 0 && bb[producers - 1]->decodes_to_view()) --producers;
  return producers;
}

// Makes the array->bytes codec's in-place change (the byte order) to each piece another
// reader produces.
class InPlacePieces final : public PieceReader {
 public:
  InPlacePieces(std::unique_ptr<PieceReader> inner, const ArrayToBytesCodec& codec, const ChunkSpec& spec)
      : inner_(std::move(inner)), codec_(codec), piece_spec_{{0}, spec.dtype, spec.fill_value} {}

  bool read(MutableByteView out) override {
    const std::size_t itemsize = piece_spec_.dtype.size();
    if (out.size() % itemsize != 0 || !inner_->read(out)) return false;
    piece_spec_.shape[0] = out.size() / itemsize;
    codec_.decode_in_place(out, piece_spec_);
    return true;
  }
  bool finish() override { return inner_->finish(); }
  std::uint64_t granularity() const override { return inner_->granularity(); }

 private:
  std::unique_ptr<PieceReader> inner_;
  const ArrayToBytesCodec& codec_;
  ChunkSpec piece_spec_;
};

// ---- The work, shared by CodecChain (which works out its inputs per call) and
// PreparedChain (which has them prepared) ------------------------------------------------

Buffer encode_with(const CodecChain& chain, std::span<const ChunkSpec> specs, const NDBuffer& chunk) {
  const ChunkSpec& spec = specs.front();
  if (chunk.shape() != spec.shape || !(chunk.dtype() == spec.dtype)) {
    fail_invalid("cannot encode a chunk of {} {}: the chunk spec says {} {}", fmt::join(chunk.shape(), "x"),
                 chunk.dtype().name(), fmt::join(spec.shape, "x"), spec.dtype.name());
  }
  const auto& aa = chain.array_to_array();
  const NDBuffer* current = &chunk;  // no copy until a codec makes a new array
  NDBuffer transformed;
  for (std::size_t i = 0; i < aa.size(); ++i) {
    transformed = aa[i]->encode(*current, specs[i]);
    current = &transformed;
  }
  const ChunkSpec& ab_spec = specs.back();
  Buffer bytes = chain.array_to_bytes()->encode(*current, ab_spec);
  for (const auto& codec : chain.bytes_to_bytes()) bytes = codec->encode(bytes.view(), ab_spec);
  return bytes;
}

NDBuffer decode_with(const CodecChain& chain, std::span<const ChunkSpec> specs, std::span<const DecodeBound> bounds,
                     ByteView encoded, const BufferPrototype& prototype) {
  const auto& bb = chain.bytes_to_bytes();
  const auto& aa = chain.array_to_array();
  const ChunkSpec& ab_spec = specs.back();
  Buffer owned;  // holds the output of the last bytes->bytes decoder
  ByteView bytes = encoded;
  for (std::size_t i = bb.size(); i-- > 0;) {
    const SizeBound bound = bounds[i].for_input(bytes.size());
    Buffer decoded = bb[i]->decode(bytes, bound, ab_spec);
    if (bound.exact ? decoded.size() != bound.bytes : decoded.size() > bound.bytes) {
      fail_data_loss("codec '{}' decoded {} bytes, expected {} {}", bb[i]->name(), decoded.size(),
                     bound.exact ? "exactly" : "at most", bound.bytes);
    }
    owned = std::move(decoded);
    bytes = owned.view();
  }
  NDBuffer array = chain.array_to_bytes()->decode(bytes, ab_spec, prototype);
  for (std::size_t i = aa.size(); i-- > 0;) array = aa[i]->decode(array, specs[i]);
  return array;
}

// For a chain that decodes into `out` (see CodecChain::decode_into; `out` has the chunk's
// size): checksums at the end of the list only cut their bytes off; before them, at most
// one codec makes new bytes, and it then writes into `out`.
void decode_into_with(const CodecChain& chain, std::size_t producers, const ChunkSpec& spec, ByteView encoded,
                      MutableByteView out) {
  const auto& bb = chain.bytes_to_bytes();
  const ArrayToBytesCodec& ab = *chain.array_to_bytes();
  ByteView bytes = encoded;
  for (std::size_t i = bb.size(); i-- > producers;) bytes = bb[i]->decode_view(bytes, spec);
  if (producers == 1) {
    bb[0]->decode_into(bytes, out, spec);
  } else {
    if (bytes.size() != out.size()) {
      fail_data_loss("{} codec: chunk of {} elements of {} must be {} bytes, got {}", ab.name(),
                     checked_num_elements(spec.shape), spec.dtype.name(), out.size(), bytes.size());
    }
    if (!bytes.empty() && bytes.data() != out.data()) std::memcpy(out.data(), bytes.data(), bytes.size());
  }
  ab.decode_in_place(out, spec);
}

// For a chain that decodes in pieces (see CodecChain::decode_pieces): the checksums after
// the one compressor are checked on the bytes in memory, then the compressor's reader is
// wrapped in the array->bytes codec's in-place change unless that is the identity.
std::unique_ptr<PieceReader> decode_pieces_with(const CodecChain& chain, const ChunkSpec& spec,
                                                std::uint64_t decoded_size, bool identity,
                                                std::shared_ptr<ByteSource> encoded) {
  const auto& bb = chain.bytes_to_bytes();
  std::shared_ptr<ByteSource> bytes = std::move(encoded);
  if (bb.size() > 1) {
    const std::optional<ByteView> whole = bytes->in_memory();
    if (!whole) return nullptr;
    ByteView checked = *whole;
    for (std::size_t i = bb.size(); i-- > 1;) checked = bb[i]->decode_view(checked, spec);
    // The checked part, kept alive by the source it lies in.
    bytes = std::make_shared<MemorySource>(checked, bytes);
  }
  std::unique_ptr<PieceReader> pieces = bb[0]->decode_pieces(std::move(bytes), decoded_size, spec);
  if (!pieces || identity) return pieces;
  return std::make_unique<InPlacePieces>(std::move(pieces), *chain.array_to_bytes(), spec);
}

}  // namespace

CodecChain CodecChain::from_codecs(std::vector<std::shared_ptr<const Codec>> codecs) {
  if (codecs.empty()) fail_invalid("the codec list is empty: it needs exactly one array->bytes codec");
  CodecChain chain;
  for (std::size_t i = 0; i < codecs.size(); ++i) {
    const auto& codec = codecs[i];
    if (!codec) fail_invalid("codec {} of the codec list is missing", i);
    switch (codec->kind()) {
      case CodecKind::kArrayToArray:
        if (chain.ab_) {
          fail_invalid("codec '{}' (array->array) comes after the array->bytes codec '{}'; the order must "
                       "be array->array*, array->bytes, bytes->bytes*",
                       codec->name(), chain.ab_->name());
        }
        chain.aa_.push_back(std::static_pointer_cast<const ArrayToArrayCodec>(codec));
        break;
      case CodecKind::kArrayToBytes:
        if (chain.ab_) {
          fail_invalid("codec '{}' is a second array->bytes codec after '{}'; exactly one is allowed",
                       codec->name(), chain.ab_->name());
        }
        chain.ab_ = std::static_pointer_cast<const ArrayToBytesCodec>(codec);
        break;
      case CodecKind::kBytesToBytes:
        if (!chain.ab_) {
          fail_invalid("codec '{}' (bytes->bytes) comes before any array->bytes codec; the order must be "
                       "array->array*, array->bytes, bytes->bytes*",
                       codec->name());
        }
        chain.bb_.push_back(std::static_pointer_cast<const BytesToBytesCodec>(codec));
        break;
    }
  }
  if (!chain.ab_) fail_invalid("the codec list has no array->bytes codec (such as \"bytes\")");
  return chain;
}

CodecChain CodecChain::from_v3_json(const nlohmann::json& codecs, const DataType& dtype,
                                    const CodecRegistry& registry) {
  if (!codecs.is_array()) fail_invalid("\"codecs\" must be a list, got {}", codecs.dump());
  if (codecs.empty()) fail_invalid("\"codecs\" is empty: it needs exactly one array->bytes codec");
  const CodecContext context{dtype, 3};
  std::vector<std::shared_ptr<const Codec>> built;
  built.reserve(codecs.size());
  for (const auto& entry : codecs) {
    auto codec = registry.make_v3(entry, context);
    if (codec) built.push_back(std::move(codec));  // nullptr: unknown, must_understand false
  }
  return from_codecs(std::move(built));
}

std::shared_ptr<const PreparedChain> CodecChain::prepare(const ChunkSpec& spec) const {
  return std::make_shared<const PreparedChain>(*this, spec);
}

Buffer CodecChain::encode(const NDBuffer& chunk, const ChunkSpec& spec) const {
  if (!ab_) fail_invalid("cannot encode with an empty codec chain");
  return encode_with(*this, chain_specs(*this, spec), chunk);
}

NDBuffer CodecChain::decode(ByteView encoded, const ChunkSpec& spec, const BufferPrototype& prototype) const {
  if (!ab_) fail_invalid("cannot decode with an empty codec chain");
  const std::vector<ChunkSpec> specs = chain_specs(*this, spec);
  const std::vector<DecodeBound> bounds = bb_.empty() ? std::vector<DecodeBound>() : decode_bounds(*this, specs.back());
  return decode_with(*this, specs, bounds, encoded, prototype);
}

bool CodecChain::decode_into(ByteView encoded, const ChunkSpec& spec, MutableByteView out) const {
  if (!ab_ || !aa_.empty() || !ab_->decodes_in_place(spec)) return false;
  const std::size_t producers = count_producers(*this);
  if (producers > 1) return false;
  const std::uint64_t expected = checked_nbytes(spec.shape, spec.dtype);
  if (out.size() != expected) {
    throw InternalError(fmt::format("decode_into: {} bytes of room for a chunk of {} bytes", out.size(), expected));
  }
  decode_into_with(*this, producers, spec, encoded, out);
  return true;
}

std::unique_ptr<PieceReader> CodecChain::decode_pieces(std::shared_ptr<ByteSource> encoded,
                                                       const ChunkSpec& spec) const {
  // As decode_into, and exactly one compressor before the checksums.
  if (!ab_ || !aa_.empty() || !ab_->decodes_in_place(spec) || count_producers(*this) != 1) return nullptr;
  return decode_pieces_with(*this, spec, checked_nbytes(spec.shape, spec.dtype), ab_->is_identity(spec),
                            std::move(encoded));
}

bool CodecChain::stores_raw_bytes(const ChunkSpec& spec) const {
  return ab_ && aa_.empty() && bb_.empty() && ab_->is_identity(spec);
}

std::optional<std::uint64_t> CodecChain::encoded_size(const ChunkSpec& spec) const {
  if (!ab_) fail_invalid("the codec chain is empty");
  ChunkSpec current = spec;
  for (const auto& codec : aa_) current = codec->encoded_spec(current);
  return chain_encoded_size(*this, current);
}

void CodecChain::validate(const ChunkSpec& spec) const {
  if (!ab_) fail_invalid("the codec chain is empty");
  ChunkSpec current = spec;
  for (const auto& codec : aa_) current = codec->encoded_spec(current);  // validates
  ab_->validate(current);
}

nlohmann::json CodecChain::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& codec : aa_) list.push_back(codec->to_json());
  if (ab_) list.push_back(ab_->to_json());
  for (const auto& codec : bb_) list.push_back(codec->to_json());
  return list;
}

// ---- DecodeBound, PreparedChain ----------------------------------------------------------

SizeBound DecodeBound::for_input(std::uint64_t input_size) const {
  if (!bound) return SizeBound{input_ceiling(input_size), false};
  if (estimated) return SizeBound{std::max(bound->bytes, input_ceiling(input_size)), false};
  return *bound;
}

PreparedChain::PreparedChain(const CodecChain& chain, const ChunkSpec& spec) : chain_(chain) {
  const auto& ab = chain_.array_to_bytes();
  if (!ab) fail_invalid("the codec chain is empty");
  specs_ = chain_specs(chain_, spec);  // validates the array->array codecs
  const ChunkSpec& ab_spec = specs_.back();
  if (chain_.array_to_array().empty() && chain_.bytes_to_bytes().empty()) {
    partial_ = ab->prepare_partial(ab_spec);  // validates
  } else {
    ab->validate(ab_spec);
  }
  const bool fixed_size = !spec.dtype.is_variable_length();
  if (fixed_size) {
    chunk_bytes_ = checked_nbytes(spec.shape, spec.dtype);
    strides_ = NDView::c_strides(spec.shape, spec.dtype.size());
  } else {
    strides_.assign(spec.shape.size(), 0);
  }
  bb_bounds_ = decode_bounds(chain_, ab_spec);
  encoded_size_ = chain_encoded_size(chain_, ab_spec);
  producers_ = count_producers(chain_);
  const bool in_place = fixed_size && chain_.array_to_array().empty() && ab->decodes_in_place(spec);
  ab_identity_ = chain_.array_to_array().empty() && ab->is_identity(spec);
  stores_raw_bytes_ = ab_identity_ && chain_.bytes_to_bytes().empty();
  decodes_into_ = in_place && producers_ <= 1;
  decodes_pieces_ = in_place && producers_ == 1;
}

Buffer PreparedChain::encode(const NDBuffer& chunk) const { return encode_with(chain_, specs_, chunk); }

NDBuffer PreparedChain::decode(ByteView encoded, const BufferPrototype& prototype) const {
  return decode_with(chain_, specs_, bb_bounds_, encoded, prototype);
}

bool PreparedChain::decode_into(ByteView encoded, MutableByteView out) const {
  if (!decodes_into_) return false;
  if (out.size() != chunk_bytes_) {
    throw InternalError(fmt::format("decode_into: {} bytes of room for a chunk of {} bytes", out.size(), chunk_bytes_));
  }
  decode_into_with(chain_, producers_, spec(), encoded, out);
  return true;
}

std::unique_ptr<PieceReader> PreparedChain::decode_pieces(std::shared_ptr<ByteSource> encoded) const {
  if (!decodes_pieces_) return nullptr;
  return decode_pieces_with(chain_, spec(), chunk_bytes_, ab_identity_, std::move(encoded));
}

}  // namespace zarrkit
