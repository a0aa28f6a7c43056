// zarrkit.config's engine side: the settings every engine call runs under.
#include <mutex>
#include <nanobind/stl/string.h>
#include <thread>

#include "bindings.h"
#include "zarrkit/error.h"

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

}  // namespace

Config python_settings() {
  std::lock_guard lock(g_settings_mutex);
  return g_settings;
}

void set_python_settings(const Config& config) {
  std::lock_guard lock(g_settings_mutex);
  g_settings = config;
}

SettingsScope::SettingsScope()
    : scope_([settings = python_settings()](Config& c) { c = settings; }) {}

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
          if (c.memory != MemoryKind::kHost && registered_allocator(c.memory) == nullptr) {
            fail_unsupported(
                "{} memory was asked for, but this build of zarrkit has no GPU support or the "
                "machine has no usable GPU",
                memory_kind_name(c.memory));
          }
          set_python_settings(c);
        },
        nb::arg("num_threads"), nb::arg("write_empty_chunks"), nb::arg("memory"),
        "Replaces the settings engine calls run under.");
  m.def("memory_available",
        [](const std::string& memory) { return registered_allocator(memory_kind_from_name(memory)) != nullptr; },
        nb::arg("memory"), "True when this build and machine can allocate that kind of memory.");
  m.def("hardware_threads", [] { return std::max(1u, std::thread::hardware_concurrency()); },
        "The number of hardware threads (what num_threads=0 means).");
}

}  // namespace zarrkit::python
