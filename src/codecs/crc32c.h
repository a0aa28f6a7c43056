// CRC-32C (Castagnoli), as the crc32c codec and the sharding index use it.
#pragma once

#include <cstdint>

#include "zarrkit/buffer.h"

namespace zarrkit {

// The CRC-32C of `data`, continuing from `crc` (the result of an earlier call, 0 to start).
std::uint32_t crc32c(ByteView data, std::uint32_t crc = 0);

}  // namespace zarrkit
