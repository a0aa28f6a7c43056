// Stores: LocalStore, MemoryStore, and opening a location ("data.zarr", "file://...").
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "core/checked_math.h"
#include "stores/wrappers/key_map_store.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"
#include "zarrkit/stores/gds_store.h"
#include "zarrkit/stores/http_store.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/stores/memory_store.h"
#include "zarrkit/stores/open_store.h"
#include "zarrkit/stores/s3_store.h"
#include "zarrkit/stores/zip_store.h"
#ifdef ZARRKIT_HAVE_CUDA
#include "zarrkit/gpu.h"
#include "zarrkit/stores/gpu_memory_store.h"
#endif

namespace zarrkit::python {
namespace {

std::string store_kind(const Store& store) {
  if (dynamic_cast<const LocalStore*>(&store) != nullptr) return "local";
  if (dynamic_cast<const GdsStore*>(&store) != nullptr) return "gds";
#ifdef ZARRKIT_HAVE_CUDA
  if (dynamic_cast<const GpuMemoryStore*>(&store) != nullptr) return "gpu-memory";
#endif
  if (dynamic_cast<const MemoryStore*>(&store) != nullptr) return "memory";
  if (dynamic_cast<const S3Store*>(&store) != nullptr) return "s3";
  if (dynamic_cast<const HttpStore*>(&store) != nullptr) return "http";
  if (dynamic_cast<const ZipStore*>(&store) != nullptr) return "zip";
  return "other";
}

GdsMode detail_parse_gds_mode(const std::string& text) {
  if (text == "auto") return GdsMode::kAuto;
  if (text == "cufile") return GdsMode::kCufile;
  if (text == "compat") return GdsMode::kCompat;
  fail_invalid("GDS mode \"{}\": it must be 'auto', 'cufile' or 'compat'", text);
}

GdsStore& gds_of(const StoreHandle& s) {
  auto* gds = dynamic_cast<GdsStore*>(s.store.get());
  if (gds == nullptr) fail_invalid("{} is not a GDS store", s.store->describe());
#ifdef ZARRKIT_HAVE_CUDA
  install_gpu_support();  // its device reads need the GPU module's engine
#endif
  return *gds;
}

std::string gds_mode_text(GdsMode mode) {
  switch (mode) {
    case GdsMode::kAuto: return "auto";
    case GdsMode::kCufile: return "cufile";
    case GdsMode::kCompat: return "compat";
  }
  return "auto";
}

}  // namespace

void bind_stores(nb::module_& m) {
  nb::class_<StoreHandle>(m, "Store", "A key-value store of the engine.")
      .def_prop_ro("kind", [](const StoreHandle& s) { return store_kind(*s.store); },
                   "'local', 'gds', 'memory', 'gpu-memory', 's3', 'http', 'zip' or 'other'.")
      .def_prop_ro("root",
                   [](const StoreHandle& s) -> std::optional<std::string> {
                     if (auto* local = dynamic_cast<const LocalStore*>(s.store.get())) {
                       return local->root().string();
                     }
                     if (auto* gds = dynamic_cast<const GdsStore*>(s.store.get())) return gds->root().string();
                     if (auto* zip = dynamic_cast<const ZipStore*>(s.store.get())) return zip->path().string();
                     return std::nullopt;
                   },
                   "The directory of a local or GDS store or the file of a zip store, else None.")
      .def_prop_ro("writable", [](const StoreHandle& s) { return s.store->capabilities().writable; })
      .def("describe", [](const StoreHandle& s) { return s.store->describe(); })
      .def("get",
           [](const StoreHandle& s, const std::string& key) -> nb::object {
             std::optional<Buffer> value;
             {
               nb::gil_scoped_release release;
               SettingsScope settings;
               value = s.store->get(key);
             }
             if (!value) return nb::none();
             return buffer_to_numpy(std::move(*value));
           },
           nb::arg("key"), "The value of `key` as a uint8 NumPy array, or None.")
      .def("get_many",
           [](const StoreHandle& s, const std::vector<std::string>& keys) -> nb::list {
             std::vector<std::optional<Buffer>> values;
             {
               nb::gil_scoped_release release;
               SettingsScope settings;
               if (s.store->capabilities().batched_gets) {
                 values = s.store->get_many(keys);
               } else {
                 values.resize(keys.size());
                 shared_thread_pool().parallel_for(keys.size(), [&](std::size_t i) { values[i] = s.store->get(keys[i]); });
               }
             }
             nb::list out;
             for (auto& v : values) out.append(v ? buffer_to_numpy(std::move(*v)) : nb::none());
             return out;
           },
           nb::arg("keys"),
           "The values of `keys` (uint8 NumPy arrays, None where absent), fetched together: in "
           "parallel on the thread pool, or with many requests in flight on remote stores.")
      .def("set",
           [](const StoreHandle& s, const std::string& key, nb::handle value) {
             PyBufferView bytes(value, false);
             nb::gil_scoped_release release;
             s.store->set(key, bytes.bytes());
           },
           nb::arg("key"), nb::arg("value"))
      .def("erase",
           [](const StoreHandle& s, const std::string& key) {
             nb::gil_scoped_release release;
             s.store->erase(key);
           },
           nb::arg("key"))
      .def("erase_prefix",
           [](const StoreHandle& s, const std::string& prefix) {
             nb::gil_scoped_release release;
             s.store->erase_prefix(prefix);
           },
           nb::arg("prefix"))
      .def("exists",
           [](const StoreHandle& s, const std::string& key) {
             nb::gil_scoped_release release;
             return s.store->exists(key);
           },
           nb::arg("key"))
      .def("list",
           [](const StoreHandle& s, const std::string& prefix) {
             nb::gil_scoped_release release;
             return s.store->list(prefix);
           },
           nb::arg("prefix") = "", "Every key below `prefix`, sorted.")
      .def("list_dir",
           [](const StoreHandle& s, const std::string& prefix) {
             nb::gil_scoped_release release;
             DirListing listing = s.store->list_dir(prefix);
             return std::make_pair(std::move(listing.keys), std::move(listing.prefixes));
           },
           nb::arg("prefix") = "", "(keys, prefixes) directly below `prefix`.")
      .def("same_as", [](const StoreHandle& a, const StoreHandle& b) { return a.store == b.store; })
      .def("gds_options",
           [](const StoreHandle& s) {
             const GdsOptions& o = gds_of(s).options();
             return std::make_tuple(gds_mode_text(*o.mode), o.threads, o.piece_bytes);
           },
           "A GDS store's (mode, threads, piece_bytes), as resolved.")
      .def("gds_device_path",
           [](const StoreHandle& s) {
             GdsStore& gds = gds_of(s);
             nb::gil_scoped_release release;
             const GdsPathReport report = gds.device_path();
             return std::make_pair(report.name(), report.detail);
           },
           "A GDS store's device read path ('cufile', 'cufile-compat' or 'compat') and what was found.")
      .def("gds_stats",
           [](const StoreHandle& s) {
             const GdsStats st = gds_of(s).stats();
             std::map<std::string, std::uint64_t> out = {{"values_cufile", st.values_cufile},
                                                         {"values_compat", st.values_compat},
                                                         {"bytes_cufile", st.bytes_cufile},
                                                         {"bytes_compat", st.bytes_compat},
                                                         {"cufile_refused", st.cufile_refused}};
             return out;
           },
           "A GDS store's device reads so far, per path.")
      .def("gds_read_values_into_device",
           [](const StoreHandle& s, const std::vector<std::string>& keys, const std::vector<std::uintptr_t>& pointers,
              const std::vector<std::uint64_t>& capacities) {
             if (pointers.size() != keys.size() || capacities.size() != keys.size()) {
               fail_invalid("{} keys, {} pointers and {} capacities", keys.size(), pointers.size(), capacities.size());
             }
             GdsStore& gds = gds_of(s);
             std::vector<MutableByteView> dests;
             for (std::size_t i = 0; i < keys.size(); ++i) {
               dests.emplace_back(reinterpret_cast<std::byte*>(pointers[i]), to_size(capacities[i]));
             }
             nb::gil_scoped_release release;
             return gds.read_values_into(keys, dests, MemoryKind::kDevice);
           },
           nb::arg("keys"), nb::arg("pointers"), nb::arg("capacities"),
           "Reads the whole values of `keys` into device memory at `pointers` (each holding `capacities` "
           "bytes) through a GDS store; returns their sizes (None: absent; larger than the capacity: not read).")
      .def("flush",
           [](const StoreHandle& s) {
             nb::gil_scoped_release release;
             if (auto* zip = dynamic_cast<ZipStore*>(s.store.get())) zip->flush();
           },
           "Writes pending changes (zip stores); nothing to do for other stores.")
      .def("close",
           [](const StoreHandle& s) {
             nb::gil_scoped_release release;
             if (auto* zip = dynamic_cast<ZipStore*>(s.store.get())) zip->close();
           },
           "Flushes and closes a zip store; nothing to do for other stores.");

  m.def("local_store",
        [](const std::string& root, bool read_only, bool create) {
          nb::gil_scoped_release release;
          SettingsScope settings;  // durable_writes, taken when the store is opened
          LocalStoreOptions options;
          options.read_only = read_only;
          options.create = create && !read_only;
          return StoreHandle{LocalStore::open(root, options)};
        },
        nb::arg("root"), nb::arg("read_only") = false, nb::arg("create") = true);
  m.def("gds_store",
        [](const std::string& root, bool read_only, bool create, std::optional<std::string> mode, std::size_t threads,
           std::uint64_t piece_bytes) {
          GdsOptions options;
          if (mode) options.mode = detail_parse_gds_mode(*mode);
          options.threads = threads;
          options.piece_bytes = piece_bytes;
          nb::gil_scoped_release release;
          SettingsScope settings;  // unset options take zarrkit.config's gpu.gds_* settings
          LocalStoreOptions local;
          local.read_only = read_only;
          local.create = create && !read_only;
          return StoreHandle{GdsStore::open(root, local, options)};
        },
        nb::arg("root"), nb::arg("read_only") = false, nb::arg("create") = true, nb::arg("mode").none() = nb::none(),
        nb::arg("threads") = 0, nb::arg("piece_bytes") = 0,
        "A directory store whose reads into device memory go through GPUDirect Storage (mode 'auto', "
        "'cufile' or 'compat'; None, and threads or piece_bytes 0: the gpu.gds_* settings).");
  m.def("memory_store", [] { return StoreHandle{MemoryStore::create()}; });
  m.def("key_map_store",
        [](const StoreHandle& inner, std::map<std::string, std::string, std::less<>> renames,
           const std::map<std::string, nb::bytes>& held) {
          std::map<std::string, Buffer, std::less<>> values;
          for (const auto& [key, value] : held) {
            values.emplace(key, Buffer::copy_of({reinterpret_cast<const std::byte*>(value.c_str()), value.size()}));
          }
          return StoreHandle{std::make_shared<KeyMapStore>(inner.store, std::move(renames), std::move(values))};
        },
        nb::arg("inner"), nb::arg("renames"), nb::arg("held"),
        "A read-only view of `inner`: key -> inner key for each of `renames`, plus `held` values.");
  m.def("gpu_memory_store", [] {
#ifdef ZARRKIT_HAVE_CUDA
    return StoreHandle{GpuMemoryStore::create()};
#else
    fail_unsupported("a GPU memory store was asked for, but this build of zarrkit has no GPU support (it was "
                     "built without the CUDA toolkit)");
    return StoreHandle{};
#endif
  });
  m.def("zip_store",
        [](const std::string& path, bool read_only, bool truncate) {
          nb::gil_scoped_release release;
          SettingsScope settings;  // max_chunk_bytes and durable_writes, taken when the store is opened
          ZipStoreOptions options;
          options.read_only = read_only;
          options.truncate = truncate && !read_only;
          return StoreHandle{ZipStore::open(path, options)};
        },
        nb::arg("path"), nb::arg("read_only") = true, nb::arg("truncate") = false);
  m.def("open_location",
        [](const std::string& location, bool for_writing) {
          nb::gil_scoped_release release;
          SettingsScope settings;  // remote and GDS stores keep the settings they are opened under
          StoreLocation l = open_location(location, for_writing);
          return std::make_pair(StoreHandle{std::move(l.store)}, std::move(l.path));
        },
        nb::arg("location"), nb::arg("for_writing") = false,
        "Opens the store holding `location` and returns (store, node path).");
}

}  // namespace zarrkit::python
