// The device half of numcodecs.delta for integer chunks: the running sum of each chunk's
// elements, in place, one thread block per chunk (delta_device.cu). The sum wraps in the
// element's width, as the host's does, so any summation order gives the host's values;
// float chunks (whose sums depend on the order) decode on the host.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace zarrkit::gpu {

struct DeltaJob {
  std::uint64_t data;   // device address of the chunk's first element
  std::uint64_t count;  // elements
  std::uint32_t chunk;
  std::uint32_t width;  // bytes per element: 1, 2, 4 or 8
};

void load_delta_kernels();

// Replaces each job's elements by their running sum; skips chunks whose status is already
// an error.
cudaError_t launch_delta_running_sums(const DeltaJob* jobs, std::uint32_t count, const std::int32_t* chunk_status,
                                      cudaStream_t stream);

}  // namespace zarrkit::gpu
