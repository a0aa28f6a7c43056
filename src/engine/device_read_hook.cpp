#include "engine/device_read_hook.h"

#include <atomic>

#include "zarrkit/array.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {
std::atomic<DeviceReadHook> g_hook{nullptr};
std::atomic<DeviceWriteHook> g_write_hook{nullptr};
std::atomic<DeviceDecodeHook> g_decode_hook{nullptr};
}

void set_device_read_hook(DeviceReadHook hook) { g_hook.store(hook); }
void set_device_write_hook(DeviceWriteHook hook) { g_write_hook.store(hook); }
void set_device_decode_hook(DeviceDecodeHook hook) { g_decode_hook.store(hook); }

void decode_on_device(const DeviceDecodeBatch& batch) {
  const DeviceDecodeHook hook = g_decode_hook.load();
  if (hook == nullptr) {
    fail_unsupported("decoding chunks into device memory needs the GPU module (install_gpu_support() in a build "
                     "with CUDA)");
  }
  hook(batch);
}

void read_into_device(const Array& array, const Selection& selection, const NDView& out) {
  const DeviceReadHook hook = g_hook.load();
  if (hook == nullptr) {
    fail_unsupported("array '{}': reading into {} memory needs the GPU module (install_gpu_support() in a "
                     "build with CUDA)",
                     array.path(), memory_kind_name(out.kind));
  }
  hook(array, selection, out);
}

void write_from_device(Array& array, const Selection& selection, const NDView& data) {
  const DeviceWriteHook hook = g_write_hook.load();
  if (hook == nullptr) {
    fail_unsupported("array '{}': writing from {} memory needs the GPU module (install_gpu_support() in a "
                     "build with CUDA)",
                     array.path(), memory_kind_name(data.kind));
  }
  hook(array, selection, data);
}

}  // namespace zarrkit
