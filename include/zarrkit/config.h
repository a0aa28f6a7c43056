// Runtime settings: global, and overridable for a scope (like zarr.config.set).
//
//   zarrkit::global_config().num_threads = 8;         // global
//   { zarrkit::ScopedConfig scoped([](Config& c) { c.write_empty_chunks = true; }); ... }
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "zarrkit/buffer.h"

namespace zarrkit {

class ThreadPool;

struct Config {
  // Worker threads for encoding/decoding; 0 means the number of hardware threads.
  std::size_t num_threads = 0;
  // Store chunks that are entirely the fill value (zarr-python's write_empty_chunks).
  bool write_empty_chunks = false;
  // Memory that reads land in by default (host now; pinned/device with the GPU module).
  MemoryKind memory = MemoryKind::kHost;
  // Reading part of a shard: inner chunks whose byte ranges are at most this far apart are
  // fetched as one range (one request instead of two, at the cost of the bytes between).
  std::uint64_t shard_coalesce_gap_bytes = 64 * 1024;
  // Reading whole shards from a store that reads values in parts (LocalStore): the encoded
  // inner chunks are read and decoded this many bytes at a time, so that a thread holds one
  // window rather than a whole shard (16 threads each holding a 12-16 MiB shard raised a
  // read's peak memory by ~20% of its output). Large enough that one read serves many
  // inner chunks.
  std::uint64_t shard_read_window_bytes = 4 << 20;
};

// The process-wide settings. Change them before starting work, not during.
Config& global_config();
// The settings in force on this thread: the innermost ScopedConfig, else the global ones.
const Config& current_config();

// Overrides settings on this thread until destroyed.
class ScopedConfig {
 public:
  explicit ScopedConfig(const std::function<void(Config&)>& change);
  ~ScopedConfig();
  ScopedConfig(const ScopedConfig&) = delete;
  ScopedConfig& operator=(const ScopedConfig&) = delete;

 private:
  const Config* previous_;
  Config config_;
};

// The shared pool, sized by current_config().num_threads (re-created if that changed).
ThreadPool& shared_thread_pool();

// The buffer prototype for current_config().memory.
BufferPrototype default_prototype();

// The GPU module registers its pinned and device allocators here at start-up; without it
// asking for those kinds of memory is an UnsupportedError.
void register_allocator(MemoryKind kind, Allocator* allocator);
Allocator* registered_allocator(MemoryKind kind);

}  // namespace zarrkit
