// Settings shared by the remote stores (HttpStore, S3Store). Every field left unset takes
// its value from the environment (docs/remote-stores.md lists the variables) or else the
// default shown. Stores whose transport settings are all unset share one connection pool.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace zarrkit {

struct RemoteOptions {
  // Requests in flight at once (ZARRKIT_HTTP_CONCURRENCY, 64).
  std::optional<std::size_t> concurrency;
  // ZARRKIT_HTTP_CONNECT_TIMEOUT_MS (10 s), ZARRKIT_HTTP_STALL_TIMEOUT_MS (30 s: a transfer
  // that moves no bytes for this long fails and is retried), ZARRKIT_HTTP_REQUEST_TIMEOUT_MS
  // (0: none).
  std::optional<std::chrono::milliseconds> connect_timeout;
  std::optional<std::chrono::milliseconds> stall_timeout;
  std::optional<std::chrono::milliseconds> request_timeout;
  // Retries (exponential backoff, full jitter): ZARRKIT_HTTP_MAX_ATTEMPTS (8 tries in all),
  // ZARRKIT_HTTP_RETRY_INITIAL_MS (100), ZARRKIT_HTTP_RETRY_MAX_MS (5000),
  // ZARRKIT_HTTP_RETRY_TOTAL_MS (60000: no retry starts later than this after the first try).
  std::optional<int> max_attempts;
  std::optional<std::chrono::milliseconds> retry_initial_delay;
  std::optional<std::chrono::milliseconds> retry_max_delay;
  std::optional<std::chrono::milliseconds> retry_total;
  // get_ranges merges ranges of one value that are at most this far apart, into requests of
  // at most coalesce_max_bytes.
  std::uint64_t coalesce_gap_bytes = 256 * 1024;
  std::uint64_t coalesce_max_bytes = 32 * 1024 * 1024;
};

}  // namespace zarrkit
