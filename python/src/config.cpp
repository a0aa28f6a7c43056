// zarrkit.config's engine side: the settings every engine call runs under.
#include <mutex>
#include <nanobind/stl/string.h>
#include <thread>

#include "bindings.h"
#include "zarrkit/error.h"
#ifdef ZARRKIT_HAVE_CUDA
#include "zarrkit/gpu.h"
#endif

namespace zarrkit::python {
namespace {

std::mutex g_settings_mutex;
Config g_settings;

MemoryKind memory_kind_from_name(const std::string& name) {
  if (name == "host") return MemoryKind::kHost;
  if (name == "pinned") return MemoryKind::kPinnedHost;
  if (name == "device") return MemoryKind::kDevice;
  fail_invalid("memory must be 'host', 'pinned' or 'device', got '{}'", name);
}

const char* memory_kind_to_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kHost: return "host";
    case MemoryKind::kPinnedHost: return "pinned";
    case MemoryKind::kDevice: return "device";
  }
  return "host";
}

// Throws UnsupportedError with the reason when `kind` memory cannot be had here.
void require_memory(MemoryKind kind) {
  if (kind == MemoryKind::kHost) return;
#ifdef ZARRKIT_HAVE_CUDA
  install_gpu_support();
  if (!gpu_available()) {
    fail_unsupported("{} memory was asked for, but no GPU can be used: {}", memory_kind_name(kind),
                     gpu_unavailable_reason());
  }
#else
  fail_unsupported("{} memory was asked for, but this build of zarrkit has no GPU support (it was "
                   "built without the CUDA toolkit)",
                   memory_kind_name(kind));
#endif
}

bool memory_available(MemoryKind kind) {
  if (kind == MemoryKind::kHost) return true;
#ifdef ZARRKIT_HAVE_CUDA
  install_gpu_support();
  return gpu_available();
#else
  return false;
#endif
}

}  // namespace

Config python_settings() {
  std::lock_guard lock(g_settings_mutex);
  return g_settings;
}

void set_python_settings(const Config& config) {
  std::lock_guard lock(g_settings_mutex);
  g_settings = config;
}

SettingsScope::SettingsScope(std::optional<bool> write_empty_chunks)
    : scope_([settings = python_settings(), write_empty_chunks](Config& c) {
        c = settings;
        if (write_empty_chunks) c.write_empty_chunks = *write_empty_chunks;
      }) {}

void bind_config(nb::module_& m) {
  m.def("get_settings", [] {
        const Config c = python_settings();
        nb::dict d;
        d["num_threads"] = c.num_threads;
        d["write_empty_chunks"] = c.write_empty_chunks;
        d["memory"] = memory_kind_to_name(c.memory);
        return d;
      },
      "The settings engine calls run under, as a dict.");
  m.def("set_settings",
        [](std::size_t num_threads, bool write_empty_chunks, const std::string& memory) {
          Config c;
          c.num_threads = num_threads;
          c.write_empty_chunks = write_empty_chunks;
          c.memory = memory_kind_from_name(memory);
          require_memory(c.memory);
          set_python_settings(c);
        },
        nb::arg("num_threads"), nb::arg("write_empty_chunks"), nb::arg("memory"),
        "Replaces the settings engine calls run under.");
  m.def("memory_available",
        [](const std::string& memory) { return memory_available(memory_kind_from_name(memory)); },
        nb::arg("memory"), "True when this build and machine can allocate that kind of memory.");
  m.def("hardware_threads", [] { return std::max(1u, std::thread::hardware_concurrency()); },
        "The number of hardware threads (what num_threads=0 means).");
}

}  // namespace zarrkit::python
