// CUDA error handling: every CUDA call of the GPU path goes through check_cuda(), which turns
// a failure into the matching typed error (out of memory -> ResourceExhaustedError, no
// device -> UnsupportedError, anything else -> InternalError) naming what was being done.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace zarrkit::gpu {

// Throws unless `status` is cudaSuccess. `what` says what was being done ("copying chunks
// to the device").
void check_cuda(cudaError_t status, const char* what);

// Throws UnsupportedError("no CUDA device: <reason>") unless a device is usable.
void require_device(const char* what);

}  // namespace zarrkit::gpu
