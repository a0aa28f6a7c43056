// The zlib codec (bytes->bytes): an RFC 1950 zlib stream, as numcodecs' Zlib writes it
// (v2 id "zlib"; v3 "numcodecs.zlib", an extension: the v3 spec itself only has gzip).
#include "codecs/compressor_support.h"
#include "codecs/deflate_support.h"
#include "codecs/register.h"
#include "zarrkit/codec_registry.h"

namespace zarrkit {
namespace {

using compressor_support::ConfigForm;

constexpr int kNumcodecsDefaultLevel = 1;  // numcodecs Zlib(level=1)

class ZlibCodec final : public BytesToBytesCodec {
 public:
  explicit ZlibCodec(int level) : level_(level) {}

  std::string_view name() const override { return "numcodecs.zlib"; }
  nlohmann::json to_json() const override { return codec_json(name(), {{"level", level_}}); }
  std::optional<nlohmann::json> to_v2_json() const override {
    return nlohmann::json{{"id", "zlib"}, {"level", level_}};
  }

  Buffer encode(ByteView decoded, const ChunkSpec&) const override {
    return deflate_support::compress(decoded, level_, deflate_support::Container::kZlib);
  }
  Buffer decode(ByteView encoded, SizeBound decoded_size, const ChunkSpec&) const override {
    return deflate_support::decompress(encoded, decoded_size, deflate_support::Container::kZlib, "zlib");
  }
  void decode_into(ByteView encoded, MutableByteView out, const ChunkSpec&) const override {
    deflate_support::decompress_into(encoded, out, deflate_support::Container::kZlib, "zlib");
  }

 private:
  int level_;  // -1 (zlib's default) is kept as written
};

std::shared_ptr<const Codec> make_zlib(const nlohmann::json& config, ConfigForm form) {
  compressor_support::check_keys(config, {"level"}, "zlib", form, "zlib");
  auto level = compressor_support::optional_int(config, "level", -1, 9, "zlib").value_or(kNumcodecsDefaultLevel);
  return std::make_shared<ZlibCodec>(static_cast<int>(level));
}

}  // namespace

void register_zlib_codec(CodecRegistry& registry) {
  registry.add_v3("numcodecs.zlib",
                  [](const nlohmann::json& c, const CodecContext&) { return make_zlib(c, ConfigForm::kV3Numcodecs); });
  registry.add_v2("zlib", [](const nlohmann::json& c, const CodecContext&) { return make_zlib(c, ConfigForm::kV2); });
}

}  // namespace zarrkit
