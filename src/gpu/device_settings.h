// The GPU settings one device read or write runs under: Config::gpu of the settings in
// force on the thread that starts it, read once when it starts (the pool's workers that
// help it never read settings), with values out of range brought into range.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zarrkit/config.h"

namespace zarrkit::gpu {

struct DeviceSettings {
  std::uint64_t batch_budget_bytes = 0;  // at least 1
  std::size_t pipeline_depth = 0;        // 1 to 8
  bool nvcomp_decode = false;
  std::uint64_t nvcomp_min_chunks = 0;   // at least 1
  KernelUse zstd_kernels = KernelUse::kAuto;
  KernelUse deflate_kernels = KernelUse::kAuto;
  bool gds_direct = false;
};

DeviceSettings device_settings(const GpuConfig& gpu);
// device_settings(current_config().gpu).
DeviceSettings device_settings();

}  // namespace zarrkit::gpu
