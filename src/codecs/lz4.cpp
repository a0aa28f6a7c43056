// The lz4 codec (bytes->bytes) in numcodecs' framing (v2 id "lz4", v3 "numcodecs.lz4"):
// the decoded size as 4 bytes little-endian, then one raw LZ4 block. This is not the LZ4
// frame format of the lz4 tool.
#include <climits>
#include <cstring>

#include <lz4.h>

#include "codecs/compressor_support.h"
#include "codecs/register.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using compressor_support::ConfigForm;

constexpr std::size_t kHeaderSize = 4;
constexpr int kNumcodecsDefaultAcceleration = 1;

class Lz4Codec final : public BytesToBytesCodec {
 public:
  explicit Lz4Codec(int acceleration) : acceleration_(acceleration) {}

  std::string_view name() const override { return "numcodecs.lz4"; }
  nlohmann::json to_json() const override { return codec_json(name(), {{"acceleration", acceleration_}}); }
  std::optional<nlohmann::json> to_v2_json() const override {
    return nlohmann::json{{"id", "lz4"}, {"acceleration", acceleration_}};
  }

  Buffer encode(ByteView decoded, const ChunkSpec&) const override {
    if (decoded.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE)) {
      fail_invalid("lz4 codec: cannot compress {} bytes (LZ4 blocks hold at most {})", decoded.size(),
                   LZ4_MAX_INPUT_SIZE);
    }
    const int size = static_cast<int>(decoded.size());
    const int bound = LZ4_compressBound(size);
    Buffer out = Buffer::allocate(kHeaderSize + static_cast<std::size_t>(bound));
    for (std::size_t i = 0; i < kHeaderSize; ++i) {
      out.data()[i] = static_cast<std::byte>(static_cast<std::uint32_t>(size) >> (8 * i));
    }
    const int written = LZ4_compress_fast(reinterpret_cast<const char*>(decoded.data()),
                                          reinterpret_cast<char*>(out.data() + kHeaderSize), size, bound, acceleration_);
    if (written <= 0) {
      throw InternalError(fmt::format("lz4 codec: LZ4 could not compress {} bytes into its bound", decoded.size()));
    }
    return compressor_support::fit_to(std::move(out), kHeaderSize + static_cast<std::size_t>(written));
  }

  Buffer decode(ByteView encoded, SizeBound decoded_size, const ChunkSpec&) const override {
    const std::uint32_t claimed = checked_claim(encoded, decoded_size);
    Buffer out = Buffer::allocate(claimed);
    decode_block(encoded, out.mutable_view());
    return out;
  }

  void decode_into(ByteView encoded, MutableByteView out, const ChunkSpec&) const override {
    checked_claim(encoded, SizeBound{out.size(), true});
    decode_block(encoded, out);
  }

 private:
  // The size the header claims, checked against the bound before it sizes anything.
  static std::uint32_t checked_claim(ByteView encoded, SizeBound decoded_size) {
    if (encoded.size() < kHeaderSize) {
      fail_data_loss("lz4 codec: {} bytes cannot hold the 4-byte size header", encoded.size());
    }
    const auto* h = reinterpret_cast<const unsigned char*>(encoded.data());
    const std::uint32_t claimed = static_cast<std::uint32_t>(h[0]) | static_cast<std::uint32_t>(h[1]) << 8 |
                                  static_cast<std::uint32_t>(h[2]) << 16 | static_cast<std::uint32_t>(h[3]) << 24;
    compressor_support::check_decoded_size(claimed, decoded_size, "lz4");
    const std::size_t block_size = encoded.size() - kHeaderSize;
    if (claimed > static_cast<std::uint32_t>(INT_MAX) || block_size > static_cast<std::size_t>(INT_MAX)) {
      fail_data_loss("lz4 codec: a block of {} bytes decoding to {} is larger than LZ4 allows", block_size,
                     claimed);
    }
    return claimed;
  }

  // Decodes the block after the header into `out`, which has the claimed size.
  static void decode_block(ByteView encoded, MutableByteView out) {
    const ByteView block = encoded.subspan(kHeaderSize);
    // Fails unless the block is well formed, ends exactly at the end of the input, and
    // stays within `claimed` bytes of output.
    const int decoded = LZ4_decompress_safe(reinterpret_cast<const char*>(block.data()),
                                            reinterpret_cast<char*>(out.data()), static_cast<int>(block.size()),
                                            static_cast<int>(out.size()));
    if (decoded < 0) {
      fail_data_loss("lz4 codec: corrupt LZ4 block ({} bytes, said to decode to {})", block.size(), out.size());
    }
    if (static_cast<std::size_t>(decoded) != out.size()) {
      fail_data_loss("lz4 codec: the LZ4 block decoded to {} bytes but its header says {}", decoded, out.size());
    }
  }

  int acceleration_;  // LZ4 treats values below 1 as 1
};

std::shared_ptr<const Codec> make_lz4(const nlohmann::json& config, ConfigForm form) {
  compressor_support::check_keys(config, {"acceleration"}, "lz4", form, "lz4");
  auto acceleration = compressor_support::optional_int(config, "acceleration", INT_MIN, INT_MAX, "lz4")
                          .value_or(kNumcodecsDefaultAcceleration);
  return std::make_shared<Lz4Codec>(static_cast<int>(acceleration));
}

}  // namespace

void register_lz4_codec(CodecRegistry& registry) {
  registry.add_v3("numcodecs.lz4",
                  [](const nlohmann::json& c, const CodecContext&) { return make_lz4(c, ConfigForm::kV3Numcodecs); });
  registry.add_v2("lz4", [](const nlohmann::json& c, const CodecContext&) { return make_lz4(c, ConfigForm::kV2); });
}

}  // namespace zarrkit
