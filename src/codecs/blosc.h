// What the rest of zarrkit may ask the blosc codec (the device encoder compresses with the
// same settings c-blosc would use).
#pragma once

#include <cstddef>
#include <string>

#include "zarrkit/codec.h"

namespace zarrkit {

struct BloscCodecSettings {
  std::string cname;            // "lz4", "zstd", ...
  int clevel = 5;               // 0: stored raw
  enum class Shuffle : int { kNone = 0, kByte = 1, kBit = 2 } shuffle = Shuffle::kByte;  // as c-blosc applies it
  std::size_t typesize = 1;     // as the header will record it
  std::size_t blocksize = 0;    // 0: chosen by the compressor
};

// The settings `codec` compresses with. InternalError unless it is a blosc codec (v3
// "blosc" or "numcodecs.blosc").
BloscCodecSettings blosc_codec_settings(const Codec& codec);

}  // namespace zarrkit
