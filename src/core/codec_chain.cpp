#include "zarrkit/codec_chain.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/ranges.h>

#include "core/checked_math.h"
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

// What is known, before decoding, of the size of the bytes entering each bytes->bytes
// codec when encoding (index 0 is the array->bytes output). `exact` where every stage
// before it has a fixed size; a ceiling where a compressor or a variable-size array->bytes
// codec came first; nullopt where the chunk spec says nothing (variable-length types).
struct StageSize {
  SizeBound bound;
  bool from_spec_only = false;  // the array->bytes size was estimated, not fixed
};

std::vector<std::optional<StageSize>> stage_sizes(
    const ArrayToBytesCodec& ab, const std::vector<std::shared_ptr<const BytesToBytesCodec>>& bb,
    const ChunkSpec& ab_spec) {
  std::optional<StageSize> current;
  if (auto exact = ab.encoded_size(ab_spec)) {
    current = StageSize{SizeBound{*exact, true}, false};
  } else if (!ab_spec.dtype.is_variable_length()) {
    // Not fixed (sharding, for one), but in practice close to the decoded array's size.
    if (auto nbytes = try_mul(checked_num_elements(ab_spec.shape), ab_spec.dtype.size())) {
      current = StageSize{SizeBound{compressor_ceiling(*nbytes), false}, true};
    }
  }
  std::vector<std::optional<StageSize>> sizes;
  sizes.reserve(bb.size());
  for (const auto& codec : bb) {
    sizes.push_back(current);
    if (!current) continue;
    if (auto next = codec->encoded_size(current->bound.bytes)) {
      current->bound.bytes = *next;  // crc32c and the like: exact stays exact
    } else {
      current->bound = SizeBound{compressor_ceiling(current->bound.bytes), false};
    }
  }
  return sizes;
}

// The bound handed to a bytes->bytes decoder that has `input_size` bytes to decode.
SizeBound decode_bound(const std::optional<StageSize>& stage, std::uint64_t input_size) {
  if (!stage) return SizeBound{input_ceiling(input_size), false};
  if (stage->from_spec_only) {
    // The estimate can be too small for odd layouts (a shard index bigger than its data);
    // allow what the input could plausibly expand to as well.
    return SizeBound{std::max(stage->bound.bytes, input_ceiling(input_size)), false};
  }
  return stage->bound;
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

Buffer CodecChain::encode(const NDBuffer& chunk, const ChunkSpec& spec) const {
  if (!ab_) fail_invalid("cannot encode with an empty codec chain");
  if (chunk.shape() != spec.shape || !(chunk.dtype() == spec.dtype)) {
    fail_invalid("cannot encode a chunk of {} {}: the chunk spec says {} {}", fmt::join(chunk.shape(), "x"),
                 chunk.dtype().name(), fmt::join(spec.shape, "x"), spec.dtype.name());
  }
  const NDBuffer* current = &chunk;  // no copy until a codec makes a new array
  NDBuffer transformed;
  ChunkSpec current_spec = spec;
  for (const auto& codec : aa_) {
    ChunkSpec next_spec = codec->encoded_spec(current_spec);
    transformed = codec->encode(*current, current_spec);
    current = &transformed;
    current_spec = std::move(next_spec);
  }
  Buffer bytes = ab_->encode(*current, current_spec);
  for (const auto& codec : bb_) bytes = codec->encode(bytes.view(), current_spec);
  return bytes;
}

NDBuffer CodecChain::decode(ByteView encoded, const ChunkSpec& spec, const BufferPrototype& prototype) const {
  if (!ab_) fail_invalid("cannot decode with an empty codec chain");
  // The spec each array->array codec sees when decoding, and the one the array->bytes
  // codec produces.
  std::vector<ChunkSpec> specs;
  specs.reserve(aa_.size() + 1);
  specs.push_back(spec);
  for (const auto& codec : aa_) specs.push_back(codec->encoded_spec(specs.back()));
  const ChunkSpec& ab_spec = specs.back();

  Buffer owned;  // holds the output of the last bytes->bytes decoder
  ByteView bytes = encoded;
  if (!bb_.empty()) {
    auto sizes = stage_sizes(*ab_, bb_, ab_spec);
    for (std::size_t i = bb_.size(); i-- > 0;) {
      const SizeBound bound = decode_bound(sizes[i], bytes.size());
      Buffer decoded = bb_[i]->decode(bytes, bound, ab_spec);
      if (bound.exact ? decoded.size() != bound.bytes : decoded.size() > bound.bytes) {
        fail_data_loss("codec '{}' decoded {} bytes, expected {} {}", bb_[i]->name(), decoded.size(),
                       bound.exact ? "exactly" : "at most", bound.bytes);
      }
      owned = std::move(decoded);
      bytes = owned.view();
    }
  }
  NDBuffer array = ab_->decode(bytes, ab_spec, prototype);
  for (std::size_t i = aa_.size(); i-- > 0;) array = aa_[i]->decode(array, specs[i]);
  return array;
}

bool CodecChain::decode_into(ByteView encoded, const ChunkSpec& spec, MutableByteView out) const {
  if (!ab_ || !aa_.empty() || !ab_->decodes_in_place(spec)) return false;
  // Decoding runs bb_ backwards. Checksums at the end of the list only cut their bytes off;
  // before them, at most one codec may make new bytes, and it then writes into `out`.
  std::size_t producers = bb_.size();
  while (producers > 0 && bb_[producers - 1]->decodes_to_view()) --producers;
  if (producers > 1) return false;
  const std::uint64_t expected = checked_nbytes(spec.shape, spec.dtype);
  if (out.size() != expected) {
    throw InternalError(fmt::format("decode_into: {} bytes of room for a chunk of {} bytes", out.size(), expected));
  }
  ByteView bytes = encoded;
  for (std::size_t i = bb_.size(); i-- > producers;) bytes = bb_[i]->decode_view(bytes, spec);
  if (producers == 1) {
    bb_[0]->decode_into(bytes, out, spec);
  } else {
    if (bytes.size() != out.size()) {
      fail_data_loss("{} codec: chunk of {} elements of {} must be {} bytes, got {}", ab_->name(),
                     checked_num_elements(spec.shape), spec.dtype.name(), out.size(), bytes.size());
    }
    if (!bytes.empty() && bytes.data() != out.data()) std::memcpy(out.data(), bytes.data(), bytes.size());
  }
  ab_->decode_in_place(out, spec);
  return true;
}

std::unique_ptr<PieceReader> CodecChain::decode_pieces(std::shared_ptr<ByteSource> encoded,
                                                       const ChunkSpec& spec) const {
  if (!ab_ || !aa_.empty() || !ab_->decodes_in_place(spec)) return nullptr;
  // As decode_into: checksums at the end of the list cut their bytes off; before them,
  // exactly one compressor.
  std::size_t producers = bb_.size();
  while (producers > 0 && bb_[producers - 1]->decodes_to_view()) --producers;
  if (producers != 1) return nullptr;
  std::shared_ptr<ByteSource> bytes = std::move(encoded);
  if (producers < bb_.size()) {
    const std::optional<ByteView> whole = bytes->in_memory();
    if (!whole) return nullptr;
    ByteView checked = *whole;
    for (std::size_t i = bb_.size(); i-- > producers;) checked = bb_[i]->decode_view(checked, spec);
    // The checked part, kept alive by the source it lies in.
    bytes = std::make_shared<MemorySource>(checked, bytes);
  }
  std::unique_ptr<PieceReader> pieces =
      bb_[0]->decode_pieces(std::move(bytes), checked_nbytes(spec.shape, spec.dtype), spec);
  if (!pieces || ab_->is_identity(spec)) return pieces;
  return std::make_unique<InPlacePieces>(std::move(pieces), *ab_, spec);
}

bool CodecChain::stores_raw_bytes(const ChunkSpec& spec) const {
  return ab_ && aa_.empty() && bb_.empty() && ab_->is_identity(spec);
}

std::optional<std::uint64_t> CodecChain::encoded_size(const ChunkSpec& spec) const {
  if (!ab_) fail_invalid("the codec chain is empty");
  ChunkSpec current = spec;
  for (const auto& codec : aa_) current = codec->encoded_spec(current);
  auto size = ab_->encoded_size(current);
  for (const auto& codec : bb_) {
    if (!size) return std::nullopt;
    size = codec->encoded_size(*size);
  }
  return size;
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

}  // namespace zarrkit
