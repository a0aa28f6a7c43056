// Standard Base64 (RFC 4648, with padding), as zarr-python writes fill values of fixed-size
// bytes, raw bytes and structured types.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zarrkit/buffer.h"

namespace zarrkit {

std::string base64_encode(ByteView bytes);
// Strict decoding: the standard alphabet, length a multiple of 4, '=' only as padding at the
// end, unused bits zero. nullopt when the text is not canonical Base64.
std::optional<std::vector<std::byte>> base64_decode(std::string_view text);

}  // namespace zarrkit
