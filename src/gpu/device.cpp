// Device discovery, CUDA error mapping, the pinned and device allocators, and the switches
// that make reads land in device memory.
#include <cuda_runtime_api.h>

#include <cstring>
#include <limits>
#include <mutex>

#include "engine/device_read_hook.h"
#include "gpu/cuda_check.h"
#include "gpu/device_codec.h"
#include "gpu/device_read.h"
#include "gpu/device_write.h"
#include "gpu/gds_engine.h"
#include "zarrkit/error.h"
#include "zarrkit/gpu.h"

namespace zarrkit {
namespace gpu {
namespace {

struct DeviceProbe {
  bool available = false;
  std::string reason;
};

const DeviceProbe& probe() {
  static const DeviceProbe result = [] {
    DeviceProbe p;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      p.reason = std::string("the CUDA runtime reports ") + cudaGetErrorName(status) + " (" +
                 cudaGetErrorString(status) + ")";
      cudaGetLastError();  // clear it, so that it does not surface in an unrelated check
    } else if (count == 0) {
      p.reason = "the CUDA runtime finds no device";
    } else {
      p.available = true;
    }
    return p;
  }();
  return result;
}

}  // namespace

void check_cuda(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // a sticky error stays; a non-sticky one is cleared for the next call
  const std::string detail = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
  switch (status) {
    case cudaErrorMemoryAllocation:
      fail_resource("{}: out of GPU or pinned memory ({})", what, detail);
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
      fail_unsupported("{}: no CUDA device ({})", what, detail);
    default:
      throw InternalError(fmt::format("{}: CUDA error {}", what, detail));
  }
}

void require_device(const char* what) {
  if (!probe().available) fail_unsupported("no CUDA device: {} needs one, and {}", what, probe().reason);
}

namespace {

// Sizes no allocator can satisfy are refused before CUDA sees them (they could wrap).
void check_size(std::size_t bytes, const char* kind) {
  if (bytes > static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max())) {
    fail_resource("cannot allocate {} bytes of {} memory", bytes, kind);
  }
}

class PinnedAllocator final : public Allocator {
 public:
  MemoryKind kind() const override { return MemoryKind::kPinnedHost; }
  void* allocate(std::size_t bytes) override {
    require_device("allocating pinned host memory");
    check_size(bytes, "pinned host");
    void* p = nullptr;
    check_cuda(cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable),
               "allocating pinned host memory");
    return p;
  }
  void deallocate(void* p, std::size_t) noexcept override { cudaFreeHost(p); }
};

class DeviceAllocator final : public Allocator {
 public:
  MemoryKind kind() const override { return MemoryKind::kDevice; }
  void* allocate(std::size_t bytes) override {
    require_device("allocating device memory");
    check_size(bytes, "device");
    void* p = nullptr;
    check_cuda(cudaMalloc(&p, bytes == 0 ? 1 : bytes), "allocating device memory");
    return p;
  }
  void deallocate(void* p, std::size_t) noexcept override { cudaFree(p); }
};

}  // namespace
}  // namespace gpu

bool gpu_available() { return gpu::probe().available; }
std::string gpu_unavailable_reason() { return gpu::probe().reason; }

namespace gpu {
namespace {
Allocator& pinned_instance() {
  static PinnedAllocator allocator;
  return allocator;
}
Allocator& device_instance() {
  static DeviceAllocator allocator;
  return allocator;
}
}  // namespace
}  // namespace gpu

// Whoever holds one of these allocators may hand device memory to the engine or a store
// (GdsStore): the GPU module's hooks are installed first.
Allocator& pinned_host_allocator() {
  install_gpu_support();
  return gpu::pinned_instance();
}

Allocator& device_allocator() {
  install_gpu_support();
  return gpu::device_instance();
}

void install_gpu_support() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_allocator(MemoryKind::kPinnedHost, &gpu::pinned_instance());
    register_allocator(MemoryKind::kDevice, &gpu::device_instance());
    set_device_read_hook(&gpu::read_into_device);
    set_device_write_hook(&gpu::write_from_device);
    set_device_decode_hook(&gpu::decode_batch_on_device);
    detail::set_gds_engine_factory(&gpu::gds_engine_for);
    gpu::register_builtin_device_codecs(CodecRegistry::builtin());
  });
}

void enable_gpu() {
  install_gpu_support();
  gpu::require_device("enable_gpu()");
  global_config().memory = MemoryKind::kDevice;
}

void disable_gpu() { global_config().memory = MemoryKind::kHost; }

void warm_up_gpu(const Array& array, const Selection& selection) {
  install_gpu_support();
  gpu::warm_up_reads(array, selection);
}

bool ScopedGpu::prepare() {
  install_gpu_support();
  gpu::require_device("ScopedGpu");
  return true;
}

ScopedGpu::ScopedGpu()
    : prepared_(prepare()), scoped_([](Config& c) { c.memory = MemoryKind::kDevice; }) {}

void copy_memory(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  gpu::require_device("copying between host and device memory");
  gpu::check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "copying between host and device memory");
}

Buffer to_host(const Buffer& buffer) {
  if (is_host_accessible(buffer.kind())) return buffer;
  Buffer out = Buffer::allocate(buffer.size());
  copy_memory(out.data(), buffer.data(), buffer.size());
  return out;
}

NDBuffer to_host(const NDBuffer& array) {
  return NDBuffer(to_host(array.buffer()), array.shape(), array.dtype());
}

Buffer to_device(ByteView bytes) {
  Buffer out = Buffer::allocate(bytes.size(), device_allocator());
  copy_memory(out.data(), bytes.data(), bytes.size());
  return out;
}

}  // namespace zarrkit
