#include "engine/read_limits.h"

#include <algorithm>

#include "core/partial_chunk_codec.h"
#include "zarrkit/error.h"

namespace zarrkit {

std::uint64_t decoded_unit_bytes(const PreparedChain& chain) {
  const PreparedChain* level = &chain;
  while (level->partial() != nullptr && level->partial()->inner_chain()) level = level->partial()->inner_chain().get();
  return level->chunk_bytes();
}

std::size_t chunks_decoded_at_once(std::uint64_t unit_bytes, std::size_t threads, const Config& config,
                                   std::string_view array, std::string_view key) {
  if (unit_bytes > config.max_chunk_bytes) {
    fail_resource("{}, chunk '{}': a chunk decodes to {} bytes, more than the limit of {} (max_chunk_bytes, "
                  "ZARRKIT_MAX_CHUNK_BYTES)",
                  array, key, unit_bytes, config.max_chunk_bytes);
  }
  if (unit_bytes > config.max_request_bytes) {
    fail_resource("{}, chunk '{}': a chunk decodes to {} bytes, more than the limit of {} for one read "
                  "(max_request_bytes, ZARRKIT_MAX_REQUEST_BYTES)",
                  array, key, unit_bytes, config.max_request_bytes);
  }
  const std::uint64_t fit = unit_bytes == 0 ? threads : config.max_request_bytes / unit_bytes;
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(fit, 1, std::max<std::size_t>(threads, 1)));
}

}  // namespace zarrkit
