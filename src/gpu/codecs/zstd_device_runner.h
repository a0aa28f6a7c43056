// The zstd kernels (zstd_device.h) on chunks held on the host, outside the read path: for
// the GPU tests and the kernel benchmark. The chunks are planned (the walk, on the host)
// and uploaded once; each launch decodes them all into slots followed by guard bytes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "gpu/codecs/zstd_device.h"

namespace zarrkit::gpu {

class ZstdDeviceRunner {
 public:
  static constexpr std::uint64_t kGuard = 64;
  static constexpr std::uint8_t kPoison = 0xA5;

  ZstdDeviceRunner(const std::vector<std::vector<std::uint8_t>>& inputs, const std::vector<std::uint64_t>& output_sizes);
  ~ZstdDeviceRunner();
  ZstdDeviceRunner(const ZstdDeviceRunner&) = delete;
  ZstdDeviceRunner& operator=(const ZstdDeviceRunner&) = delete;

  // Fills the output slots and their guards with kPoison.
  void poison();
  // Resets the statuses and queues the stages on `stream`.
  void launch(cudaStream_t stream = nullptr, const ZstdStageEvents* events = nullptr);
  // Per chunk: the walk's error for a chunk it refused (never launched), else the device's.
  std::vector<std::int32_t> statuses() const;
  std::vector<std::uint8_t> output(std::size_t chunk) const;
  // Whether every guard still holds kPoison.
  bool guards_intact() const;

  double plan_seconds() const { return plan_seconds_; }
  std::size_t planned_chunks() const { return planned_.size(); }
  std::size_t blocks() const { return tables_.blocks.size(); }

 private:
  std::vector<std::uint64_t> output_sizes_;
  std::vector<std::uint64_t> slot_offsets_;  // per chunk, into output_
  std::vector<std::int32_t> walk_errors_;
  std::vector<ZstdPlannedChunk> planned_;
  ZstdTables tables_;
  double plan_seconds_ = 0;
  std::uint64_t output_bytes_ = 0;
  std::uint8_t* input_ = nullptr;
  std::uint8_t* output_ = nullptr;
  std::byte* scratch_ = nullptr;
  std::byte* device_tables_ = nullptr;
  std::int32_t* status_ = nullptr;
  std::uint64_t at_frames_ = 0, at_blocks_ = 0;
};

}  // namespace zarrkit::gpu
