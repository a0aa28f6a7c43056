// Which GPU a request runs on: the device that holds its output (or input) memory. Every
// device read, write and batch decode makes that device current on its thread for as long as
// it runs, so that one process can read into several GPUs at once (a thread per device) and
// a CuPy array on device 1 is read into from a thread whose current device is 0.
#pragma once

#include <cuda_runtime_api.h>

#include "gpu/cuda_check.h"
#include "zarrkit/error.h"

namespace zarrkit::gpu {

// The device that holds `pointer`; InvalidArgumentError where it is not device memory
// (or managed memory, which belongs to no single device).
inline int device_holding(const void* pointer, std::string_view what) {
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, pointer);
  if (status != cudaSuccess) {
    cudaGetLastError();
    fail_invalid("{}: cannot tell which device holds the memory at {} ({})", what, pointer, cudaGetErrorName(status));
  }
  if (attributes.type != cudaMemoryTypeDevice || attributes.device < 0) {
    fail_invalid("{}: the memory at {} is not device memory", what, pointer);
  }
  return attributes.device;
}

inline int current_device() {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "finding the current CUDA device");
  return device;
}

// Makes `device` current on this thread until destroyed, then restores the one before.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) : previous_(current_device()) {
    if (device != previous_) check_cuda(cudaSetDevice(device), "making the output's device current");
  }
  ~ScopedDevice() {
    int now = previous_;
    if (cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
    cudaGetLastError();
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_;
};

}  // namespace zarrkit::gpu
