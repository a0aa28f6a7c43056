// The v3 "bytes" codec (array->bytes): the elements in C order, each in the byte order the
// configuration names. v2 arrays get one too, with the byte order of their dtype string.
// Sub-byte types (int2/int4/uint2/uint4, float4/float6) take one byte each; the extension
// pages say readers ignore the high bits and writers should keep them consistent, so they
// are cleared both ways (as ml_dtypes holds these values in memory).
#include <cstring>
#include <optional>

#include "codecs/register.h"
#include "core/checked_math.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

// True when the order of bytes inside an element matters, so that "endian" is needed.
bool has_byte_order(const DataType& dtype) {
  if (dtype.kind() == DataTypeKind::kStructured) {
    for (const auto& field : dtype.fields()) {
      if (has_byte_order(field.type)) return true;
    }
    return false;
  }
  return dtype.swap_unit() > 1;
}

// Clears the bits above each element's value.
void clear_high_bits(MutableByteView bytes, const DataType& dtype) {
  const auto mask = static_cast<std::byte>((1u << dtype.value_bits()) - 1);
  for (std::byte& b : bytes) b &= mask;
}

bool has_high_bits(ByteView bytes, const DataType& dtype) {
  const auto high = static_cast<std::byte>(~((1u << dtype.value_bits()) - 1) & 0xffu);
  for (std::byte b : bytes) {
    if ((b & high) != std::byte{0}) return true;
  }
  return false;
}

std::string_view endian_name(Endian e) { return e == Endian::kLittle ? "little" : "big"; }

class BytesCodec final : public ArrayToBytesCodec {
 public:
  explicit BytesCodec(std::optional<Endian> endian) : endian_(endian) {}

  std::string_view name() const override { return "bytes"; }

  nlohmann::json to_json() const override {
    nlohmann::json config = nlohmann::json::object();
    if (endian_) config["endian"] = endian_name(*endian_);
    return codec_json(name(), std::move(config));
  }

  void validate(const ChunkSpec& spec) const override {
    if (spec.dtype.is_variable_length()) {
      fail_unsupported("the bytes codec cannot store {}, a variable-length type (use vlen-utf8 or vlen-bytes)",
                       spec.dtype.name());
    }
    (void)checked_nbytes(spec.shape, spec.dtype);
  }

  std::optional<std::uint64_t> encoded_size(const ChunkSpec& spec) const override {
    validate(spec);
    return checked_nbytes(spec.shape, spec.dtype);
  }

  Buffer encode(const NDBuffer& chunk, const ChunkSpec& spec) const override {
    check_chunk(chunk, spec, "encode");
    if (spec.dtype.is_sub_byte()) {
      if (!is_host_accessible(chunk.kind())) {
        fail_unsupported("the bytes codec cannot check {} elements in {} memory", spec.dtype.name(),
                         memory_kind_name(chunk.kind()));
      }
      if (!has_high_bits(chunk.buffer().view(), spec.dtype)) return chunk.buffer();
      Buffer out = Buffer::copy_of(chunk.buffer().view());
      clear_high_bits(out.mutable_view(), spec.dtype);
      return out;
    }
    if (!needs_swap(spec.dtype)) return chunk.buffer();  // already in storage order: share it
    if (!is_host_accessible(chunk.kind())) {
      fail_unsupported("the bytes codec cannot byte-swap {} memory", memory_kind_name(chunk.kind()));
    }
    Buffer out = Buffer::copy_of(chunk.buffer().view());
    byteswap_elements(out.mutable_view(), spec.dtype, storage_endian());
    return out;
  }

  NDBuffer decode(ByteView encoded, const ChunkSpec& spec, const BufferPrototype& prototype) const override {
    validate(spec);
    const std::uint64_t expected = checked_nbytes(spec.shape, spec.dtype);
    if (encoded.size() != expected) {
      fail_data_loss("bytes codec: chunk of {} elements of {} must be {} bytes, got {}",
                     checked_num_elements(spec.shape), spec.dtype.name(), expected, encoded.size());
    }
    if (!is_host_accessible(prototype.kind())) {
      fail_unsupported("the bytes codec cannot decode into {} memory", memory_kind_name(prototype.kind()));
    }
    NDBuffer out = NDBuffer::allocate(spec.shape, spec.dtype, prototype);
    if (!encoded.empty()) std::memcpy(out.data(), encoded.data(), encoded.size());
    if (needs_swap(spec.dtype)) byteswap_elements(out.buffer().mutable_view(), spec.dtype, storage_endian());
    if (spec.dtype.is_sub_byte()) clear_high_bits(out.buffer().mutable_view(), spec.dtype);
    return out;
  }

  bool decodes_in_place(const ChunkSpec& spec) const override {
    return !spec.dtype.is_variable_length() && spec.dtype.size() != 0;
  }

  void decode_in_place(MutableByteView bytes, const ChunkSpec& spec) const override {
    validate(spec);
    const std::uint64_t expected = checked_nbytes(spec.shape, spec.dtype);
    if (bytes.size() != expected) {
      fail_data_loss("bytes codec: chunk of {} elements of {} must be {} bytes, got {}",
                     checked_num_elements(spec.shape), spec.dtype.name(), expected, bytes.size());
    }
    if (needs_swap(spec.dtype)) byteswap_elements(bytes, spec.dtype, storage_endian());
    if (spec.dtype.is_sub_byte()) clear_high_bits(bytes, spec.dtype);
  }

  // Not for sub-byte types: their stored high bits are cleared on the way in.
  bool is_identity(const ChunkSpec& spec) const override {
    return decodes_in_place(spec) && !needs_swap(spec.dtype) && !spec.dtype.is_sub_byte();
  }

  std::optional<Endian> element_byte_order() const override { return storage_endian(); }

 private:
  // Lenient reading (SPEC-NOTES rule 17): a multi-byte type without "endian" is little-endian.
  Endian storage_endian() const { return endian_.value_or(Endian::kLittle); }
  bool needs_swap(const DataType& dtype) const {
    return storage_endian() != native_endian() && has_byte_order(dtype);
  }

  void check_chunk(const NDBuffer& chunk, const ChunkSpec& spec, const char* what) const {
    validate(spec);
    if (chunk.shape() != spec.shape || !(chunk.dtype() == spec.dtype)) {
      fail_invalid("bytes codec cannot {} an array of {} with the chunk spec of {}", what, chunk.dtype().name(),
                   spec.dtype.name());
    }
  }

  std::optional<Endian> endian_;
};

std::optional<Endian> parse_endian(const nlohmann::json& value) {
  if (value == "little") return Endian::kLittle;
  if (value == "big") return Endian::kBig;
  fail_invalid("bytes codec: \"endian\" must be \"little\" or \"big\", got {}", value.dump());
}

std::shared_ptr<const Codec> make_bytes(const nlohmann::json& configuration, const CodecContext& context) {
  std::optional<Endian> endian;
  for (const auto& [key, value] : configuration.items()) {
    if (key != "endian") fail_invalid("bytes codec: unexpected configuration key \"{}\"", key);
    // null means "not given": zarr-python accepts it, its endian being None for 1-byte types.
    if (!value.is_null()) endian = parse_endian(value);
  }
  // Record the order we will use so that to_json always names it for multi-byte types.
  if (!endian && has_byte_order(context.dtype)) endian = Endian::kLittle;
  return std::make_shared<BytesCodec>(endian);
}

}  // namespace

void register_bytes_codec(CodecRegistry& registry) { registry.add_v3("bytes", make_bytes); }

}  // namespace zarrkit
