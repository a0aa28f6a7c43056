// Temporary names of LocalStore writes and node swaps, and telling an abandoned one from a
// live writer's (local_store_internal.h).
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <functional>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "stores/local_store_internal.h"

namespace zarrkit::detail {

std::string temp_name_for(std::string_view final_name) {
  thread_local std::mt19937_64 random_bits([] {
    std::random_device device;
    std::uint64_t seed = (std::uint64_t{device()} << 32) ^ device();
    return seed ^ std::hash<std::thread::id>{}(std::this_thread::get_id());
  }());
  // ::getpid() on every call, not cached: a forked child writes under its own id.
  return fmt::format(".{}{}{}-{:016x}", final_name.substr(0, kTempNameMaxStem), kTempMarker, static_cast<long>(::getpid()),
                     random_bits());
}

std::optional<long> temp_name_writer(std::string_view name) {
  const std::size_t marker = name.rfind(kTempMarker);
  if (!name.starts_with('.') || marker == std::string_view::npos) return std::nullopt;
  std::string_view rest = name.substr(marker + kTempMarker.size());
  const std::size_t dash = rest.find('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;  // an older name: no process id
  long pid = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + dash, pid);
  if (error != std::errc() || end != rest.data() + dash || pid <= 0) return std::nullopt;
  return pid;
}

bool temp_writer_is_gone(std::string_view name) {
  const std::optional<long> pid = temp_name_writer(name);
  if (!pid) return false;
  if (*pid == static_cast<long>(::getpid())) return false;
  // ESRCH: no such process. EPERM means it exists (under another user): alive.
  return ::kill(static_cast<pid_t>(*pid), 0) == -1 && errno == ESRCH;
}

}  // namespace zarrkit::detail
