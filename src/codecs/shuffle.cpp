// The numcodecs "shuffle" codec (bytes->bytes): groups byte k of every element together
// (all first bytes, then all second bytes, ...), which helps compressors on numeric data.
// The size is unchanged. An "elementsize" of 0 or 1 copies the data; otherwise the data
// must be a whole number of elements, as numcodecs requires. Registered as v2 "shuffle"
// and v3 "numcodecs.shuffle".
#include <cstring>

#include "codecs/compressor_support.h"
#include "codecs/register.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using compressor_support::ConfigForm;

constexpr std::int64_t kDefaultElementSize = 4;  // numcodecs' default

class ShuffleCodec final : public BytesToBytesCodec {
 public:
  explicit ShuffleCodec(std::size_t element_size) : element_size_(element_size) {}

  std::string_view name() const override { return "numcodecs.shuffle"; }

  nlohmann::json to_json() const override { return codec_json(name(), {{"elementsize", element_size_}}); }

  std::optional<nlohmann::json> to_v2_json() const override {
    return nlohmann::json{{"id", "shuffle"}, {"elementsize", element_size_}};
  }

  std::optional<std::uint64_t> encoded_size(std::uint64_t decoded_size) const override { return decoded_size; }

  Buffer encode(ByteView decoded, const ChunkSpec&) const override {
    if (element_size_ > 1 && decoded.size() % element_size_ != 0) {
      fail_invalid("shuffle codec: {} bytes are not a whole number of {}-byte elements", decoded.size(),
                   element_size_);
    }
    return permute(decoded, /*shuffle=*/true);
  }

  Buffer decode(ByteView encoded, SizeBound decoded_size, const ChunkSpec&) const override {
    compressor_support::check_decoded_size(encoded.size(), decoded_size, "shuffle");
    if (element_size_ > 1 && encoded.size() % element_size_ != 0) {
      fail_data_loss("shuffle codec: {} encoded bytes are not a whole number of {}-byte elements", encoded.size(),
                     element_size_);
    }
    return permute(encoded, /*shuffle=*/false);
  }

 private:
  // Byte j of element i sits at i * element_size + j unshuffled and at j * count + i shuffled.
  Buffer permute(ByteView in, bool shuffle) const {
    Buffer out = Buffer::allocate(in.size());
    if (in.empty()) return out;
    if (element_size_ <= 1) {
      std::memcpy(out.data(), in.data(), in.size());
      return out;
    }
    const std::size_t count = in.size() / element_size_;
    const std::byte* src = in.data();
    std::byte* dst = out.data();
    for (std::size_t j = 0; j < element_size_; ++j) {
      for (std::size_t i = 0; i < count; ++i) {
        const std::size_t unshuffled = i * element_size_ + j;
        const std::size_t shuffled = j * count + i;
        if (shuffle) {
          dst[shuffled] = src[unshuffled];
        } else {
          dst[unshuffled] = src[shuffled];
        }
      }
    }
    return out;
  }

  std::size_t element_size_;
};

std::shared_ptr<const Codec> make_shuffle(const nlohmann::json& config, ConfigForm form) {
  compressor_support::check_keys(config, {"elementsize"}, "shuffle", form, "shuffle");
  const auto element_size =
      compressor_support::optional_int(config, "elementsize", 0, std::int64_t{1} << 30, "shuffle");
  return std::make_shared<ShuffleCodec>(static_cast<std::size_t>(element_size.value_or(kDefaultElementSize)));
}

}  // namespace

void register_shuffle_codec(CodecRegistry& registry) {
  registry.add_v2("shuffle", [](const nlohmann::json& config, const CodecContext&) {
    return make_shuffle(config, ConfigForm::kV2);
  });
  registry.add_v3("numcodecs.shuffle", [](const nlohmann::json& config, const CodecContext&) {
    return make_shuffle(config, ConfigForm::kV3Numcodecs);
  });
}

}  // namespace zarrkit
