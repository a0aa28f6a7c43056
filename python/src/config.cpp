// zarrkit.config's engine side: the settings every engine call runs under.
#include <algorithm>
#include <chrono>
#include <functional>
#include <mutex>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <thread>
#include <vector>

#include "bindings.h"
#include "core/chunk_cache.h"
#include "core/settings_env.h"
#include "zarrkit/chunk_cache.h"
#include "zarrkit/error.h"
#ifdef ZARRKIT_HAVE_CUDA
#include "gpu/batch_support.h"
#include "gpu/device_read.h"
#include "zarrkit/gpu.h"
#endif

namespace zarrkit::python {
namespace {

std::mutex g_settings_mutex;
std::optional<Config> g_settings;  // set at the first use

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

// One setting as Python names it: "num_threads", "remote.concurrency", "gpu.gds_mode".
// Durations cross as whole milliseconds (their keys end in _ms), enums as their names.
struct Setting {
  const char* key;
  std::function<nb::object(const Config&)> get;
  std::function<void(Config&, nb::handle)> set;
};

template <typename T>
nb::object to_python(const T& value) {
  return nb::cast(value);
}
nb::object to_python(std::chrono::milliseconds value) { return nb::cast(static_cast<std::int64_t>(value.count())); }
nb::object to_python(MemoryKind kind) { return nb::cast(std::string(memory_kind_to_name(kind))); }
nb::object to_python(GdsMode mode) { return nb::cast(std::string(detail::gds_mode_name(mode))); }
nb::object to_python(KernelUse use) { return nb::cast(std::string(detail::kernel_use_name(use))); }

template <typename T>
void from_python(nb::handle value, const char*, T& out) {
  out = nb::cast<T>(value);
}
void from_python(nb::handle value, const char*, std::chrono::milliseconds& out) {
  out = std::chrono::milliseconds(nb::cast<std::int64_t>(value));
}
void from_python(nb::handle value, const char*, MemoryKind& out) { out = memory_kind_from_name(nb::cast<std::string>(value)); }
void from_python(nb::handle value, const char* key, GdsMode& out) {
  out = detail::parse_gds_mode(nb::cast<std::string>(value), key);
}
// True and False as well as "auto", "on" and "off".
void from_python(nb::handle value, const char* key, KernelUse& out) {
  if (nb::isinstance<bool>(value)) {
    out = nb::cast<bool>(value) ? KernelUse::kOn : KernelUse::kOff;
  } else {
    out = detail::parse_kernel_use(nb::cast<std::string>(value), key);
  }
}

template <typename T>
Setting setting(const char* key, T Config::*field) {
  return {key, [field](const Config& c) { return to_python(c.*field); },
          [key, field](Config& c, nb::handle v) { from_python(v, key, c.*field); }};
}

template <typename Group, typename T>
Setting setting(const char* key, Group Config::*group, T Group::*field) {
  return {key, [group, field](const Config& c) { return to_python(c.*group.*field); },
          [key, group, field](Config& c, nb::handle v) { from_python(v, key, c.*group.*field); }};
}

// Every field of Config (docs/settings.md lists them with their variables).
const std::vector<Setting>& settings_table() {
  static const std::vector<Setting> table = {
      setting("num_threads", &Config::num_threads),
      setting("write_empty_chunks", &Config::write_empty_chunks),
      setting("durable_writes", &Config::durable_writes),
      setting("memory", &Config::memory),
      setting("shard_coalesce_gap_bytes", &Config::shard_coalesce_gap_bytes),
      setting("shard_read_window_bytes", &Config::shard_read_window_bytes),
      setting("max_chunk_bytes", &Config::max_chunk_bytes),
      setting("max_request_bytes", &Config::max_request_bytes),
      setting("remote.concurrency", &Config::remote, &RemoteConfig::concurrency),
      setting("remote.event_loops", &Config::remote, &RemoteConfig::event_loops),
      setting("remote.connect_timeout_ms", &Config::remote, &RemoteConfig::connect_timeout),
      setting("remote.stall_timeout_ms", &Config::remote, &RemoteConfig::stall_timeout),
      setting("remote.request_timeout_ms", &Config::remote, &RemoteConfig::request_timeout),
      setting("remote.max_attempts", &Config::remote, &RemoteConfig::max_attempts),
      setting("remote.retry_initial_delay_ms", &Config::remote, &RemoteConfig::retry_initial_delay),
      setting("remote.retry_max_delay_ms", &Config::remote, &RemoteConfig::retry_max_delay),
      setting("remote.retry_total_ms", &Config::remote, &RemoteConfig::retry_total),
      setting("remote.verify_tls", &Config::remote, &RemoteConfig::verify_tls),
      setting("remote.ca_bundle", &Config::remote, &RemoteConfig::ca_bundle),
      setting("remote.coalesce_gap_bytes", &Config::remote, &RemoteConfig::coalesce_gap_bytes),
      setting("remote.coalesce_max_bytes", &Config::remote, &RemoteConfig::coalesce_max_bytes),
      setting("remote.s3_multipart_threshold_bytes", &Config::remote, &RemoteConfig::s3_multipart_threshold_bytes),
      setting("remote.s3_part_size_bytes", &Config::remote, &RemoteConfig::s3_part_size_bytes),
      setting("gpu.batch_budget_bytes", &Config::gpu, &GpuConfig::batch_budget_bytes),
      setting("gpu.pipeline_depth", &Config::gpu, &GpuConfig::pipeline_depth),
      setting("gpu.devices_sharing_host", &Config::gpu, &GpuConfig::devices_sharing_host),
      setting("gpu.nvcomp_decode", &Config::gpu, &GpuConfig::nvcomp_decode),
      setting("gpu.nvcomp_min_chunks", &Config::gpu, &GpuConfig::nvcomp_min_chunks),
      setting("gpu.zstd_kernels", &Config::gpu, &GpuConfig::zstd_kernels),
      setting("gpu.deflate_kernels", &Config::gpu, &GpuConfig::deflate_kernels),
      setting("gpu.gds_direct", &Config::gpu, &GpuConfig::gds_direct),
      setting("gpu.gds_mode", &Config::gpu, &GpuConfig::gds_mode),
      setting("gpu.gds_threads", &Config::gpu, &GpuConfig::gds_threads),
      setting("gpu.gds_piece_bytes", &Config::gpu, &GpuConfig::gds_piece_bytes),
      setting("gpu.cufile_library", &Config::gpu, &GpuConfig::cufile_library),
      setting("gpu.nvcomp_library", &Config::gpu, &GpuConfig::nvcomp_library),
      setting("cache.host_bytes", &Config::cache, &CacheConfig::host_bytes),
      setting("cache.array_bytes", &Config::cache, &CacheConfig::array_bytes),
      setting("cache.device_bytes", &Config::cache, &CacheConfig::device_bytes),
  };
  return table;
}

nb::dict settings_dict(const Config& c) {
  nb::dict d;
  for (const Setting& s : settings_table()) d[s.key] = s.get(c);
  return d;
}

}  // namespace

Config python_settings() {
  std::lock_guard lock(g_settings_mutex);
  // The process's defaults (the environment applied) until Python changes them; a malformed
  // ZARRKIT_* variable raises here, at the first engine call.
  if (!g_settings) g_settings = environment_config();
  return *g_settings;
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
  m.def("get_settings", [] { return settings_dict(python_settings()); },
        "The settings engine calls run under, as a dict of every setting.");
  m.def("memory_setting", [] { return std::string(memory_kind_to_name(python_settings().memory)); },
        "The `memory` setting alone (what every read asks; get_settings() builds every setting).");
  m.def("default_settings", [] { return settings_dict(environment_config()); },
        "The defaults: zarrkit's, with the ZARRKIT_* environment variables applied.");
  m.def("set_settings",
        [](const nb::dict& changes) {
          Config c = python_settings();
          for (const auto& [key, value] : changes) {
            const std::string name = nb::cast<std::string>(key);
            const auto& table = settings_table();
            auto it = std::find_if(table.begin(), table.end(), [&](const Setting& s) { return name == s.key; });
            if (it == table.end()) fail_invalid("unknown zarrkit setting '{}'", name);
            it->set(c, value);
          }
          require_memory(c.memory);
          set_python_settings(c);
          // The process's cache takes its new budget now (0 empties it), not at the next read.
          process_chunk_cache(c.cache.host_bytes);
        },
        nb::arg("changes"), "Changes the given settings (all or none) of engine calls.");
  m.def("memory_available",
        [](const std::string& memory) { return memory_available(memory_kind_from_name(memory)); },
        nb::arg("memory"), "True when this build and machine can allocate that kind of memory.");
  m.def(
      "gpu_read_stats",
      [] {
        nb::dict d;
#ifdef ZARRKIT_HAVE_CUDA
        const gpu::ReadStats& s = gpu::read_stats();
        d["chunks_decoded_on_gpu"] = s.chunks_decoded_on_gpu.load();
        d["chunks_decoded_on_cpu"] = s.chunks_decoded_on_cpu.load();
        d["chunks_missing"] = s.chunks_missing.load();
        d["chunks_from_cache"] = s.chunks_from_cache.load();
        d["chunks_decoded_by_nvcomp"] = s.chunks_decoded_by_nvcomp.load();
        d["chunks_decoded_by_zstd_kernels"] = s.chunks_decoded_by_zstd_kernels.load();
        d["chunks_decoded_by_deflate_kernels"] = s.chunks_decoded_by_deflate_kernels.load();
        d["gpu_rejections_recovered"] = s.gpu_rejections_recovered.load();
        d["batches"] = s.batches.load();
        d["bytes_uploaded_pinned"] = s.bytes_uploaded_pinned.load();
        d["bytes_uploaded_pageable"] = s.bytes_uploaded_pageable.load();
        d["host_phase_ns"] = s.host_phase_ns.load();
        d["gpu_wait_ns"] = s.gpu_wait_ns.load();
        d["pinned_arenas_made"] = gpu::arena_pool().arenas_made();
        d["pinned_arena_ns"] = gpu::arena_pool().arena_ns();
#endif
        return d;
      },
      "Counters of the device reads over the life of the process (empty without the CUDA path): "
      "chunks decoded on the GPU and on the host, bytes uploaded from pinned and pageable memory, "
      "time in the host phase and waiting for the GPU, pinned staging arenas made (and the time it took). "
      "For benchmarks and diagnosis.");
  m.def(
      "chunk_cache_stats",
      [](std::optional<int> device) {
        const ChunkCacheStats s = device ? device_chunk_cache_stats(*device) : chunk_cache_stats();
        nb::dict d;
        d["hits"] = s.hits;
        d["misses"] = s.misses;
        d["insertions"] = s.insertions;
        d["evictions"] = s.evictions;
        d["invalidations"] = s.invalidations;
        d["dropped"] = s.dropped;
        d["entries"] = s.entries;
        d["bytes"] = s.bytes;
        d["budget"] = s.budget;
        return d;
      },
      nb::arg("device") = nb::none(),
      "Counters of the process's decoded-chunk cache (or of GPU `device`'s): hits, misses, insertions, "
      "evictions, invalidations by writes, values dropped because a write came while they were read, and "
      "the entries, bytes and budget it holds now.");
  m.def("clear_chunk_caches", [] { clear_chunk_caches(); },
        "Empties every decoded-chunk cache of the process (host, arrays' own, GPUs'); the counters stay.");
  m.def("hardware_threads", [] { return std::max(1u, std::thread::hardware_concurrency()); },
        "The number of hardware threads (what num_threads=0 means).");
}

}  // namespace zarrkit::python
