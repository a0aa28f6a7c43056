// GdsStore's door to the GPU module: the engine that moves file bytes into device memory
// (cuFile, or pinned staging with overlapped copies). The GPU module registers a factory
// when it is installed (install_gpu_support); the stores library does not link it, so
// without it (a build without CUDA) device reads are UnsupportedError.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "zarrkit/stores/gds_store.h"

namespace zarrkit::detail {

class FileIo;

// The settings an engine is made for (GdsStores with the same settings share one: its
// threads and staging buffers).
struct GdsEngineSettings {
  GdsMode mode = GdsMode::kAuto;
  std::size_t threads = 16;
  std::uint64_t piece_bytes = 4u << 20;
  // Where cuFile is loaded from, if this engine is the first to load it (Config::gpu).
  std::string cufile_library;
  bool operator==(const GdsEngineSettings&) const = default;
};

// `length` bytes of the open file `fd` from `file_offset` into device memory at `dest`.
struct DeviceFileRead {
  int fd = -1;
  FileIo* io = nullptr;  // the store's system calls (tests make them fail)
  std::uint64_t file_offset = 0;
  std::uint64_t length = 0;
  std::byte* dest = nullptr;
};

struct DeviceReadOutcome {
  struct Failure {
    std::size_t read = 0;  // index into the reads
    std::string what;      // "the file ended at byte 10 of the 20 expected", "Input/output error"
  };
  std::vector<Failure> failures;  // the reads not read in full (their destinations are undefined)
  // Reads (and their bytes) done by each path; refused: cuFile refused them, compat read them.
  std::uint64_t reads_cufile = 0, reads_compat = 0, bytes_cufile = 0, bytes_compat = 0, cufile_refused = 0;
  std::string cufile_refusal;  // the direct reader's reason for its first refusal, if any
};

class GdsEngine {
 public:
  virtual ~GdsEngine() = default;
  virtual const GdsPathReport& path() const = 0;
  // Reads every read in full and returns when the bytes are in device memory (or have
  // failed). `max_gap`: destinations of consecutive reads that are at most this far apart
  // may be written in one copy, gap included (plan_pieces).
  virtual DeviceReadOutcome read(std::span<const DeviceFileRead> reads, std::uint64_t max_gap) = 0;
};

// Returns the engine for `settings` (shared), or throws UnsupportedError without a device
// and when a forced cuFile cannot be used.
using GdsEngineFactory = std::shared_ptr<GdsEngine> (*)(const GdsEngineSettings& settings);
void set_gds_engine_factory(GdsEngineFactory factory);
GdsEngineFactory gds_engine_factory();

}  // namespace zarrkit::detail
