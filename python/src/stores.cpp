// Stores: LocalStore, MemoryStore, and opening a location ("data.zarr", "file://...").
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "stores/wrappers/key_map_store.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/http_store.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/stores/memory_store.h"
#include "zarrkit/stores/open_store.h"
#include "zarrkit/stores/s3_store.h"
#include "zarrkit/stores/zip_store.h"
#ifdef ZARRKIT_HAVE_CUDA
#include "zarrkit/stores/gpu_memory_store.h"
#endif

namespace zarrkit::python {
namespace {

std::string store_kind(const Store& store) {
  if (dynamic_cast<const LocalStore*>(&store) != nullptr) return "local";
#ifdef ZARRKIT_HAVE_CUDA
  if (dynamic_cast<const GpuMemoryStore*>(&store) != nullptr) return "gpu-memory";
#endif
  if (dynamic_cast<const MemoryStore*>(&store) != nullptr) return "memory";
  if (dynamic_cast<const S3Store*>(&store) != nullptr) return "s3";
  if (dynamic_cast<const HttpStore*>(&store) != nullptr) return "http";
  if (dynamic_cast<const ZipStore*>(&store) != nullptr) return "zip";
  return "other";
}

}  // namespace

void bind_stores(nb::module_& m) {
  nb::class_<StoreHandle>(m, "Store", "A key-value store of the engine.")
      .def_prop_ro("kind", [](const StoreHandle& s) { return store_kind(*s.store); },
                   "'local', 'memory', 'gpu-memory', 's3', 'http', 'zip' or 'other'.")
      .def_prop_ro("root",
                   [](const StoreHandle& s) -> std::optional<std::string> {
                     if (auto* local = dynamic_cast<const LocalStore*>(s.store.get())) {
                       return local->root().string();
                     }
                     if (auto* zip = dynamic_cast<const ZipStore*>(s.store.get())) return zip->path().string();
                     return std::nullopt;
                   },
                   "The directory of a local store or the file of a zip store, else None.")
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
          LocalStoreOptions options;
          options.read_only = read_only;
          options.create = create && !read_only;
          return StoreHandle{LocalStore::open(root, options)};
        },
        nb::arg("root"), nb::arg("read_only") = false, nb::arg("create") = true);
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
          ZipStoreOptions options;
          options.read_only = read_only;
          options.truncate = truncate && !read_only;
          return StoreHandle{ZipStore::open(path, options)};
        },
        nb::arg("path"), nb::arg("read_only") = true, nb::arg("truncate") = false);
  m.def("open_location",
        [](const std::string& location, bool for_writing) {
          nb::gil_scoped_release release;
          StoreLocation l = open_location(location, for_writing);
          return std::make_pair(StoreHandle{std::move(l.store)}, std::move(l.path));
        },
        nb::arg("location"), nb::arg("for_writing") = false,
        "Opens the store holding `location` and returns (store, node path).");
}

}  // namespace zarrkit::python
