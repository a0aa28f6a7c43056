// The numcodecs "bitround" codec (array->array, lossy): keeps the `keepbits` most
// significant mantissa bits of each float, rounding the dropped ones half to even on the
// bit pattern, so that the data compresses better. The type and size do not change, and
// decoding is the identity. Works on float16, float32 and float64 (10, 23 and 52 mantissa
// bits). Registered as v2 "bitround" and v3 "numcodecs.bitround".
#include <cstring>

#include <fmt/ranges.h>

#include "codecs/register.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

// Bits of the stored mantissa of each float size (numcodecs' max_bits).
unsigned mantissa_bits(const DataType& t) {
  if (t.kind() != DataTypeKind::kFloat) return 0;
  switch (t.size()) {
    case 2: return 10;
    case 4: return 23;
    case 8: return 52;
    default: return 0;
  }
}

template <typename UInt>
void round_bits(const std::byte* src, std::byte* dst, std::uint64_t n, unsigned drop) {
  // numcodecs works on the signed integer view; two's complement wrapping makes unsigned
  // arithmetic give the same bits, and the shift is by less than the width, so the sign
  // bit never reaches the "& 1".
  const UInt mask = static_cast<UInt>(~UInt{0} << drop);
  const UInt half_minus_one = static_cast<UInt>((UInt{1} << (drop - 1)) - 1);
  for (std::uint64_t i = 0; i < n; ++i) {
    UInt b;
    std::memcpy(&b, src + i * sizeof(UInt), sizeof(UInt));
    b = static_cast<UInt>(b + static_cast<UInt>(((b >> drop) & 1u) + half_minus_one));
    b = static_cast<UInt>(b & mask);
    std::memcpy(dst + i * sizeof(UInt), &b, sizeof(UInt));
  }
}

class BitRoundCodec final : public ArrayToArrayCodec {
 public:
  explicit BitRoundCodec(unsigned keepbits) : keepbits_(keepbits) {}

  std::string_view name() const override { return "numcodecs.bitround"; }
  nlohmann::json to_json() const override { return codec_json(name(), {{"keepbits", keepbits_}}); }
  std::optional<nlohmann::json> to_v2_json() const override {
    return nlohmann::json{{"id", "bitround"}, {"keepbits", keepbits_}};
  }

  ChunkSpec encoded_spec(const ChunkSpec& decoded) const override {
    if (mantissa_bits(decoded.dtype) == 0) {
      fail_invalid("bitround codec works on float16, float32 and float64 arrays, not {}", decoded.dtype.name());
    }
    return decoded;
  }

  NDBuffer encode(const NDBuffer& decoded, const ChunkSpec& decoded_spec) const override {
    check_input(decoded, decoded_spec, "encode");
    const unsigned bits = mantissa_bits(decoded_spec.dtype);
    if (keepbits_ > bits) {
      fail_invalid("bitround codec: keepbits {} is more than the {} mantissa bits of {}", keepbits_, bits,
                   decoded_spec.dtype.name());
    }
    NDBuffer out = copy_of(decoded);
    if (keepbits_ == bits) return out;
    const unsigned drop = bits - keepbits_;
    const std::uint64_t n = decoded.num_elements();
    switch (decoded_spec.dtype.size()) {
      case 2: round_bits<std::uint16_t>(decoded.data(), out.data(), n, drop); break;
      case 4: round_bits<std::uint32_t>(decoded.data(), out.data(), n, drop); break;
      default: round_bits<std::uint64_t>(decoded.data(), out.data(), n, drop); break;
    }
    return out;
  }

  NDBuffer decode(const NDBuffer& encoded, const ChunkSpec& decoded_spec) const override {
    check_input(encoded, decoded_spec, "decode");
    return copy_of(encoded);  // fresh memory: callers may write into what a codec returns
  }

 private:
  static NDBuffer copy_of(const NDBuffer& in) {
    NDBuffer out = NDBuffer::allocate(in.shape(), in.dtype());
    if (in.nbytes() != 0) std::memcpy(out.data(), in.data(), in.nbytes());
    return out;
  }

  static void check_input(const NDBuffer& array, const ChunkSpec& spec, const char* what) {
    if (!is_host_accessible(array.kind())) {
      fail_unsupported("bitround codec cannot {} {} memory", what, memory_kind_name(array.kind()));
    }
    if (mantissa_bits(spec.dtype) == 0 || array.shape() != spec.shape || array.dtype().kind() != spec.dtype.kind() ||
        array.dtype().size() != spec.dtype.size()) {
      fail_invalid("bitround codec cannot {} a {} array of shape [{}]: expected {} of shape [{}]", what,
                   array.dtype().name(), fmt::join(array.shape(), ","), spec.dtype.name(),
                   fmt::join(spec.shape, ","));
    }
  }

  unsigned keepbits_;
};

std::shared_ptr<const Codec> make_bitround(const nlohmann::json& config, const CodecContext&) {
  if (!config.is_object()) fail_invalid("bitround codec: configuration must be an object, got {}", config.dump());
  for (const auto& [key, value] : config.items()) {
    if (key == "keepbits") continue;
    if (key == "id" && value == "bitround") continue;
    fail_invalid("bitround codec: unexpected configuration key \"{}\"", key);
  }
  auto keepbits = config.find("keepbits");
  if (keepbits == config.end()) fail_invalid("bitround codec needs \"keepbits\"");
  if (!keepbits->is_number_integer() || keepbits->get<std::int64_t>() < 0 ||
      (keepbits->is_number_unsigned() && keepbits->get<std::uint64_t>() > 64)) {
    fail_invalid("bitround codec: \"keepbits\" must be an integer from 0 to 52, got {}", keepbits->dump());
  }
  if (keepbits->get<std::int64_t>() > 52) {
    fail_invalid("bitround codec: \"keepbits\" {} exceeds the 52 mantissa bits of float64", keepbits->dump());
  }
  return std::make_shared<BitRoundCodec>(static_cast<unsigned>(keepbits->get<std::int64_t>()));
}

}  // namespace

void register_bitround_codec(CodecRegistry& registry) {
  registry.add_v2("bitround", make_bitround);
  registry.add_v3("numcodecs.bitround", make_bitround);
}

}  // namespace zarrkit
