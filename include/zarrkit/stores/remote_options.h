// Settings of one remote store (HttpStore, S3Store). Every field left unset takes its value
// from Config::remote of the settings in force when the store is opened (zarrkit/config.h;
// its defaults, shown here, come from the environment variables named). Stores whose
// transport fields (concurrency and the timeouts) are all unset share the connection pool
// of the settings they were opened under.
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
  // get_ranges merges ranges of one value that are at most this far apart (256 KiB), into
  // requests of at most coalesce_max_bytes (32 MiB).
  std::optional<std::uint64_t> coalesce_gap_bytes;
  std::optional<std::uint64_t> coalesce_max_bytes;
};

}  // namespace zarrkit
