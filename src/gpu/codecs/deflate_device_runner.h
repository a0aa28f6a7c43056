// The deflate kernel (deflate_device.h) on chunks held on the host, outside the read path:
// for the GPU tests and the kernel benchmark. The chunks are uploaded once; each launch
// decodes them all into slots preceded and followed by guard bytes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "gpu/codecs/deflate_device.h"

namespace zarrkit::gpu {

class DeflateDeviceRunner {
 public:
  static constexpr std::uint64_t kGuard = 64;
  static constexpr std::uint8_t kPoison = 0xA5;

  DeflateDeviceRunner(const std::vector<std::vector<std::uint8_t>>& inputs, const std::vector<std::uint64_t>& output_sizes,
                      const std::vector<deflate::Format>& formats);
  ~DeflateDeviceRunner();
  DeflateDeviceRunner(const DeflateDeviceRunner&) = delete;
  DeflateDeviceRunner& operator=(const DeflateDeviceRunner&) = delete;

  // Fills the output slots and their guards with kPoison.
  void poison();
  // Resets the statuses and queues the kernel on `stream`.
  void launch(cudaStream_t stream = nullptr);
  // Per chunk: kErrTooLarge for a chunk not launched (4 GiB or more), else the device's status.
  std::vector<std::int32_t> statuses() const;
  std::vector<std::uint8_t> output(std::size_t chunk) const;
  // Whether every guard still holds kPoison.
  bool guards_intact() const;

 private:
  std::vector<std::uint64_t> output_sizes_;
  std::vector<std::uint64_t> slot_offsets_;
  std::vector<std::int32_t> plan_errors_;
  std::vector<deflate::DeflateChunkJob> jobs_;
  std::uint64_t output_bytes_ = 0;
  std::uint8_t* input_ = nullptr;
  std::uint8_t* output_ = nullptr;
  deflate::DeflateChunkJob* device_jobs_ = nullptr;
  std::int32_t* status_ = nullptr;
};

}  // namespace zarrkit::gpu
