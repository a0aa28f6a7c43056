// The resource limits of a read (Config::max_chunk_bytes, Config::max_request_bytes): how
// large a chunk may be decoded, and how many may be decoded at once, so that the sum of the
// chunks in flight stays within the request's budget, not only each chunk within its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "zarrkit/codec_chain.h"
#include "zarrkit/config.h"

namespace zarrkit {

// The most one task of a read decodes into memory at a time: the chunk, or for a chain read
// in part (sharding) the innermost chunk it decodes one by one.
std::uint64_t decoded_unit_bytes(const PreparedChain& chain);

// How many chunks of `unit_bytes` (decoded_unit_bytes) a read may decode at once on a pool
// of `threads`: all of them where the request's budget allows, fewer otherwise, never 0.
// ResourceExhaustedError naming `array` ("array 'a' in file:///x"), `key` (a chunk the read
// touches) and the setting, when one chunk exceeds max_chunk_bytes or max_request_bytes.
std::size_t chunks_decoded_at_once(std::uint64_t unit_bytes, std::size_t threads, const Config& config,
                                   std::string_view array, std::string_view key);

}  // namespace zarrkit
