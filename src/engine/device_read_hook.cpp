#include "engine/device_read_hook.h"

#include <atomic>

#include "zarrkit/array.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {
std::atomic<DeviceReadHook> g_hook{nullptr};
}

void set_device_read_hook(DeviceReadHook hook) { g_hook.store(hook); }

void read_into_device(const Array& array, const Selection& selection, const NDView& out) {
  const DeviceReadHook hook = g_hook.load();
  if (hook == nullptr) {
    fail_unsupported("array '{}': reading into {} memory needs the GPU module (install_gpu_support() in a "
                     "build with CUDA)",
                     array.path(), memory_kind_name(out.kind));
  }
  hook(array, selection, out);
}

}  // namespace zarrkit
