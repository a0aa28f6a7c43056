// The numcodecs 32-bit checksum codecs (crc32, adler32, fletcher32) share one shape: the
// data plus 4 bytes of checksum, little-endian, at the start or at the end. This is that
// shape; each codec file supplies its checksum function, names and default placement.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "zarrkit/buffer.h"
#include "zarrkit/codec.h"
#include "zarrkit/codec_registry.h"

namespace zarrkit::checksum32_support {

using ChecksumFunction = std::uint32_t (*)(ByteView data);

enum class Location : std::uint8_t { kStart, kEnd };

struct ChecksumKind {
  const char* numcodecs_id;      // "crc32": the v2 id; the v3 name is "numcodecs." + id
  ChecksumFunction checksum;
  Location default_location;
  bool location_configurable;    // numcodecs' Checksum32 subclasses take "location"; fletcher32 does not
};

// Builds the codec from a v2 object ({"id": ..., "location"?}) or a v3 configuration.
std::shared_ptr<const Codec> make_checksum_codec(const ChecksumKind& kind, const nlohmann::json& config);

// Registers v2 `id` and v3 "numcodecs.<id>". `kind` must outlive the registry (a static).
void register_checksum_codec(CodecRegistry& registry, const ChecksumKind& kind);

}  // namespace zarrkit::checksum32_support
