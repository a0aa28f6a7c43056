#include "gpu/device_settings.h"

#include <algorithm>

namespace zarrkit::gpu {

DeviceSettings device_settings(const GpuConfig& gpu) {
  return {.batch_budget_bytes = std::max<std::uint64_t>(gpu.batch_budget_bytes, 1),
          .pipeline_depth = std::clamp<std::size_t>(gpu.pipeline_depth, 1, 8),
          .nvcomp_decode = gpu.nvcomp_decode,
          .nvcomp_min_chunks = std::max<std::uint64_t>(gpu.nvcomp_min_chunks, 1),
          .zstd_kernels = gpu.zstd_kernels,
          .deflate_kernels = gpu.deflate_kernels,
          .gds_direct = gpu.gds_direct};
}

DeviceSettings device_settings() { return device_settings(current_config().gpu); }

}  // namespace zarrkit::gpu
