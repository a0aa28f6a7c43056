// The gzip codec (bytes->bytes): an RFC 1952 gzip stream, as the v3 spec's "gzip" codec and
// numcodecs' GZip (v2 id "gzip") write it. Not to be confused with numcodecs' "zlib".
#include "codecs/compressor_support.h"
#include "codecs/deflate_support.h"
#include "codecs/register.h"
#include "zarrkit/codec_registry.h"

namespace zarrkit {
namespace {

using compressor_support::ConfigForm;

constexpr int kNumcodecsDefaultLevel = 1;  // numcodecs GZip(level=1)
constexpr int kZlibDefaultLevel = 6;       // what level -1 means to zlib

class GzipCodec final : public BytesToBytesCodec {
 public:
  explicit GzipCodec(int level) : level_(level) {}

  std::string_view name() const override { return "gzip"; }
  nlohmann::json to_json() const override { return codec_json(name(), {{"level", level_}}); }
  std::optional<nlohmann::json> to_v2_json() const override {
    return nlohmann::json{{"id", "gzip"}, {"level", level_}};
  }

  Buffer encode(ByteView decoded, const ChunkSpec&) const override {
    return deflate_support::compress(decoded, level_, deflate_support::Container::kGzip);
  }
  Buffer decode(ByteView encoded, SizeBound decoded_size, const ChunkSpec&) const override {
    return deflate_support::decompress(encoded, decoded_size, deflate_support::Container::kGzip, "gzip");
  }
  void decode_into(ByteView encoded, MutableByteView out, const ChunkSpec&) const override {
    deflate_support::decompress_into(encoded, out, deflate_support::Container::kGzip, "gzip");
  }

 private:
  int level_;
};

std::shared_ptr<const Codec> make_gzip(const nlohmann::json& config, ConfigForm form) {
  compressor_support::check_keys(config, {"level"}, "gzip", form, "gzip");
  int level = 0;
  if (form == ConfigForm::kV3) {
    // The v3 spec requires the level and allows 0-9.
    level = static_cast<int>(compressor_support::required_int(config, "level", 0, 9, "gzip"));
  } else {
    // numcodecs passes the level to zlib, which also takes -1 for its default.
    level = static_cast<int>(
        compressor_support::optional_int(config, "level", -1, 9, "gzip").value_or(kNumcodecsDefaultLevel));
    if (level == -1) level = kZlibDefaultLevel;  // so that the v3 form we write stays valid
  }
  return std::make_shared<GzipCodec>(level);
}

}  // namespace

void register_gzip_codec(CodecRegistry& registry) {
  registry.add_v3("gzip", [](const nlohmann::json& c, const CodecContext&) { return make_gzip(c, ConfigForm::kV3); });
  registry.add_v3("numcodecs.gzip",
                  [](const nlohmann::json& c, const CodecContext&) { return make_gzip(c, ConfigForm::kV3Numcodecs); });
  registry.add_v2("gzip", [](const nlohmann::json& c, const CodecContext&) { return make_gzip(c, ConfigForm::kV2); });
}

}  // namespace zarrkit
