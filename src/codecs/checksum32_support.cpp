#include "codecs/checksum32_support.h"

#include <cstring>

#include "codecs/compressor_support.h"
#include "core/checked_math.h"
#include "zarrkit/error.h"

namespace zarrkit::checksum32_support {
namespace {

constexpr std::size_t kChecksumSize = 4;

class Checksum32Codec final : public BytesToBytesCodec {
 public:
  Checksum32Codec(const ChecksumKind& kind, Location location)
      : kind_(kind), location_(location), name_(std::string("numcodecs.") + kind.numcodecs_id) {}

  std::string_view name() const override { return name_; }

  nlohmann::json to_json() const override { return codec_json(name_, configuration()); }

  std::optional<nlohmann::json> to_v2_json() const override {
    nlohmann::json entry = configuration();
    entry["id"] = kind_.numcodecs_id;
    return entry;
  }

  std::optional<std::uint64_t> encoded_size(std::uint64_t decoded_size) const override {
    return checked_add(decoded_size, kChecksumSize, "checksum encoded size");
  }

  Buffer encode(ByteView decoded, const ChunkSpec&) const override {
    Buffer out = Buffer::allocate(to_size(checked_add(decoded.size(), kChecksumSize, "checksum encoded size")));
    const bool first = location_ == Location::kStart;
    std::byte* payload = out.data() + (first ? kChecksumSize : 0);
    std::byte* checksum = out.data() + (first ? 0 : decoded.size());
    if (!decoded.empty()) std::memcpy(payload, decoded.data(), decoded.size());
    const std::uint32_t value = kind_.checksum(decoded);
    for (std::size_t i = 0; i < kChecksumSize; ++i) checksum[i] = static_cast<std::byte>(value >> (8 * i));
    return out;
  }

  Buffer decode(ByteView encoded, SizeBound decoded_size, const ChunkSpec&) const override {
    if (encoded.size() < kChecksumSize) {
      fail_data_loss("{} codec: {} bytes cannot hold the 4-byte checksum", kind_.numcodecs_id, encoded.size());
    }
    const bool first = location_ == Location::kStart;
    ByteView payload = encoded.subspan(first ? kChecksumSize : 0, encoded.size() - kChecksumSize);
    ByteView checksum = encoded.subspan(first ? 0 : payload.size(), kChecksumSize);
    compressor_support::check_decoded_size(payload.size(), decoded_size, kind_.numcodecs_id);
    std::uint32_t stored = 0;
    for (std::size_t i = 0; i < kChecksumSize; ++i) {
      stored |= static_cast<std::uint32_t>(std::to_integer<std::uint8_t>(checksum[i])) << (8 * i);
    }
    const std::uint32_t computed = kind_.checksum(payload);
    if (stored != computed) {
      fail_data_loss("{} codec: checksum mismatch: stored 0x{:08x}, computed 0x{:08x} over {} bytes",
                     kind_.numcodecs_id, stored, computed, payload.size());
    }
    return Buffer::copy_of(payload);
  }

 private:
  nlohmann::json configuration() const {
    nlohmann::json config = nlohmann::json::object();
    if (kind_.location_configurable && location_ != kind_.default_location) {
      config["location"] = location_ == Location::kStart ? "start" : "end";
    }
    return config;
  }

  const ChecksumKind& kind_;
  Location location_;
  std::string name_;
};

}  // namespace

std::shared_ptr<const Codec> make_checksum_codec(const ChecksumKind& kind, const nlohmann::json& config) {
  if (!config.is_object()) {
    fail_invalid("{} codec: configuration must be an object, got {}", kind.numcodecs_id, config.dump());
  }
  Location location = kind.default_location;
  for (const auto& [key, value] : config.items()) {
    if (key == "id" && value == kind.numcodecs_id) continue;
    if (key == "location" && kind.location_configurable) {
      if (value == "start") {
        location = Location::kStart;
      } else if (value == "end") {
        location = Location::kEnd;
      } else if (!value.is_null()) {
        fail_invalid("{} codec: \"location\" must be \"start\" or \"end\", got {}", kind.numcodecs_id, value.dump());
      }
      continue;
    }
    fail_invalid("{} codec: unexpected configuration key \"{}\"", kind.numcodecs_id, key);
  }
  return std::make_shared<Checksum32Codec>(kind, location);
}

void register_checksum_codec(CodecRegistry& registry, const ChecksumKind& kind) {
  auto factory = [&kind](const nlohmann::json& config, const CodecContext&) {
    return make_checksum_codec(kind, config);
  };
  registry.add_v2(kind.numcodecs_id, factory);
  registry.add_v3(std::string("numcodecs.") + kind.numcodecs_id, factory);
}

}  // namespace zarrkit::checksum32_support
