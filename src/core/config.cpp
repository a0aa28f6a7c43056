#include "zarrkit/config.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>

#include "core/settings_env.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {
thread_local const Config* t_scoped = nullptr;
}

std::uint64_t usable_memory_bytes() {
  static const std::uint64_t bytes = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGE_SIZE);
    // Without an answer, assume a small machine: limits then err on the side of refusing.
    std::uint64_t memory = pages > 0 && page_size > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size)
                                                      : std::uint64_t{8} << 30;
    // A container's limit (cgroup v2) is what an allocation really runs into.
    std::ifstream cgroup("/sys/fs/cgroup/memory.max");
    std::string line;
    if (cgroup && std::getline(cgroup, line)) {
      std::uint64_t limit = 0;
      const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), limit);
      if (ec == std::errc() && limit > 0) memory = std::min(memory, limit);
    }
    return memory;
  }();
  return bytes;
}

std::uint64_t default_max_chunk_bytes() {
  return std::max<std::uint64_t>(std::min<std::uint64_t>(std::uint64_t{2} << 30, usable_memory_bytes() / 8), 64u << 20);
}

std::uint64_t default_max_request_bytes() {
  return std::max(std::min<std::uint64_t>(std::uint64_t{8} << 30, usable_memory_bytes() / 4), default_max_chunk_bytes());
}

const Config& environment_config() {
  // A malformed variable throws here, and again at each later call: static initialisation
  // that throws is tried again.
  static const Config config = config_from_environment(environment_variable);
  return config;
}

Config& global_config() {
  static Config config = environment_config();
  return config;
}

const Config& current_config() { return t_scoped != nullptr ? *t_scoped : global_config(); }

ScopedConfig::ScopedConfig(const std::function<void(Config&)>& change)
    : previous_(t_scoped), config_(current_config()) {
  change(config_);
  t_scoped = &config_;
}

ScopedConfig::~ScopedConfig() { t_scoped = previous_; }

ThreadPool& shared_thread_pool() {
  // Pools are kept alive for the life of the process once made: a pool may still be in use
  // by another thread when the size changes, so old ones are retired, not destroyed.
  static std::mutex mutex;
  static std::vector<std::unique_ptr<ThreadPool>> pools;
  std::size_t wanted = current_config().num_threads;
  if (wanted == 0) {
    // One process of several sharing the host (one per GPU) takes its share of the threads.
    const std::size_t sharing = std::clamp<std::size_t>(current_config().gpu.devices_sharing_host, 1, 1024);
    wanted = std::max<std::size_t>(1, std::max(1u, std::thread::hardware_concurrency()) / sharing);
  }
  std::lock_guard lock(mutex);
  for (auto& p : pools) {
    if (p->size() == wanted) return *p;
  }
  pools.push_back(std::make_unique<ThreadPool>(wanted));
  return *pools.back();
}

namespace {
std::atomic<Allocator*> g_allocators[3] = {nullptr, nullptr, nullptr};
}

void register_allocator(MemoryKind kind, Allocator* allocator) {
  g_allocators[static_cast<int>(kind)].store(allocator);
}

Allocator* registered_allocator(MemoryKind kind) {
  if (kind == MemoryKind::kHost) return &host_allocator();
  return g_allocators[static_cast<int>(kind)].load();
}

BufferPrototype default_prototype() {
  const MemoryKind kind = current_config().memory;
  Allocator* allocator = registered_allocator(kind);
  if (allocator == nullptr) {
    fail_unsupported("{} memory was asked for, but no GPU is available to this build or machine",
                     memory_kind_name(kind));
  }
  return BufferPrototype(*allocator);
}

}  // namespace zarrkit
