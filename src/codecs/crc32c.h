// CRC-32C (Castagnoli), as the crc32c codec and the sharding index use it.
#pragma once

#include <cstdint>

#include "zarrkit/buffer.h"
#include "zarrkit/codec.h"

namespace zarrkit {

// The CRC-32C of `data`, continuing from `crc` (the result of an earlier call, 0 to start):
// crc32c(b, crc32c(a)) == crc32c(a followed by b). Uses the SSE4.2 instruction when the CPU
// has it.
std::uint32_t crc32c(ByteView data, std::uint32_t crc = 0);

// True when the crc32c codec `codec` puts its checksum before the data (numcodecs'
// location "start"), false for after it (the v3 form). InternalError for another codec.
bool crc32c_codec_checksum_first(const Codec& codec);

namespace crc32c_detail {
// The two implementations behind crc32c(), exposed so that tests can check both.
std::uint32_t portable(ByteView data, std::uint32_t crc);
bool hardware_available();
std::uint32_t hardware(ByteView data, std::uint32_t crc);  // only when hardware_available()
}  // namespace crc32c_detail

}  // namespace zarrkit
