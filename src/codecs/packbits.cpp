// The numcodecs "packbits" codec (array->array): packs a bool chunk, flattened in memory
// order, eight elements to a byte (the first element in the most significant bit, as
// numpy.packbits does) behind one header byte holding the number of padding bits in the
// last byte. The encoded array is uint8 of shape [1 + ceil(n / 8)]. Registered as v2
// "packbits" and v3 "numcodecs.packbits".
#include <cstring>

#include <fmt/ranges.h>

#include "codecs/register.h"
#include "core/checked_math.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

class PackBitsCodec final : public ArrayToArrayCodec {
 public:
  std::string_view name() const override { return "numcodecs.packbits"; }
  nlohmann::json to_json() const override { return codec_json(name(), nlohmann::json::object()); }
  std::optional<nlohmann::json> to_v2_json() const override { return nlohmann::json{{"id", "packbits"}}; }

  ChunkSpec encoded_spec(const ChunkSpec& decoded) const override {
    if (decoded.dtype.kind() != DataTypeKind::kBool) {
      fail_invalid("packbits codec works on bool arrays, not {}", decoded.dtype.name());
    }
    const std::uint64_t n = checked_num_elements(decoded.shape);
    return ChunkSpec{{1 + ceil_div(n, 8)}, DataType::uint_(8), FillValue::zero(DataType::uint_(8))};
  }

  NDBuffer encode(const NDBuffer& decoded, const ChunkSpec& decoded_spec) const override {
    const ChunkSpec packed = encoded_spec(decoded_spec);
    check_input(decoded, decoded_spec, "encode");
    NDBuffer out = NDBuffer::allocate(packed.shape, packed.dtype);
    const std::uint64_t n = decoded.num_elements();
    const auto* bits = reinterpret_cast<const std::uint8_t*>(decoded.data());
    auto* bytes = reinterpret_cast<std::uint8_t*>(out.data());
    bytes[0] = static_cast<std::uint8_t>((8 - n % 8) % 8);
    std::memset(bytes + 1, 0, out.nbytes() - 1);
    for (std::uint64_t i = 0; i < n; ++i) {
      if (bits[i] != 0) bytes[1 + i / 8] |= static_cast<std::uint8_t>(0x80u >> (i % 8));
    }
    return out;
  }

  NDBuffer decode(const NDBuffer& encoded, const ChunkSpec& decoded_spec) const override {
    const ChunkSpec packed = encoded_spec(decoded_spec);
    if (!is_host_accessible(encoded.kind())) {
      fail_unsupported("packbits codec cannot decode {} memory", memory_kind_name(encoded.kind()));
    }
    if (encoded.dtype().size() != 1 || encoded.nbytes() != packed.shape[0]) {
      fail_data_loss("packbits codec: {} encoded bytes cannot hold {} packed elements (expected {} bytes)",
                     encoded.nbytes(), checked_num_elements(decoded_spec.shape), packed.shape[0]);
    }
    const std::uint64_t n = checked_num_elements(decoded_spec.shape);
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(encoded.data());
    if (bytes[0] != (8 - n % 8) % 8) {
      fail_data_loss("packbits codec: the header says {} padding bits, {} elements need {}", bytes[0], n,
                     (8 - n % 8) % 8);
    }
    NDBuffer out = NDBuffer::allocate(decoded_spec.shape, decoded_spec.dtype);
    auto* bits = reinterpret_cast<std::uint8_t*>(out.data());
    for (std::uint64_t i = 0; i < n; ++i) bits[i] = (bytes[1 + i / 8] >> (7 - i % 8)) & 1u;
    return out;
  }

 private:
  static void check_input(const NDBuffer& array, const ChunkSpec& spec, const char* what) {
    if (!is_host_accessible(array.kind())) {
      fail_unsupported("packbits codec cannot {} {} memory", what, memory_kind_name(array.kind()));
    }
    if (array.shape() != spec.shape || array.dtype().kind() != DataTypeKind::kBool) {
      fail_invalid("packbits codec cannot {} a {} array of shape [{}]: expected bool of shape [{}]", what,
                   array.dtype().name(), fmt::join(array.shape(), ","), fmt::join(spec.shape, ","));
    }
  }
};

std::shared_ptr<const Codec> make_packbits(const nlohmann::json& config, const CodecContext&) {
  if (!config.is_object()) fail_invalid("packbits codec: configuration must be an object, got {}", config.dump());
  for (const auto& [key, value] : config.items()) {
    if (key == "id" && value == "packbits") continue;
    fail_invalid("packbits codec: unexpected configuration key \"{}\"", key);
  }
  return std::make_shared<PackBitsCodec>();
}

}  // namespace

void register_packbits_codec(CodecRegistry& registry) {
  registry.add_v2("packbits", make_packbits);
  registry.add_v3("numcodecs.packbits", make_packbits);
}

}  // namespace zarrkit
