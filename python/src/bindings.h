// Shared pieces of the zarrkit._zarrkit extension module: one bind_* function per area,
// and the helpers they share (settings, buffers, selections).
//
// The module is private: the public API is the Python package (python/zarrkit), which
// checks and converts arguments and calls these functions. JSON crosses the boundary as
// text (Python's json module on one side, nlohmann::json on the other), and array data as
// objects with the buffer protocol (NumPy arrays), so that any fixed-size dtype works.
#pragma once

#include <Python.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nlohmann/json.hpp>

#include "zarrkit/array.h"
#include "zarrkit/buffer.h"
#include "zarrkit/config.h"
#include "zarrkit/dtype.h"
#include "zarrkit/ndbuffer.h"
#include "zarrkit/selection.h"
#include "zarrkit/store.h"

namespace zarrkit::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);
void bind_config(nb::module_& m);
void bind_stores(nb::module_& m);
void bind_arrays(nb::module_& m);
void bind_groups(nb::module_& m);
void bind_codecs(nb::module_& m);
// Stores whose values live in zarr-python stores (python/src/python_store.cpp).
void bind_python_store(nb::module_& m);
// Adds coordinate, mask and block selections, resize and append to the Array class.
void bind_array_selections(nb::class_<Array>& cls);
// Reads into and writes from device memory (python/src/device_arrays.cpp).
void bind_device_arrays(nb::class_<Array>& cls);
// A view of device memory at `pointer` (a __cuda_array_interface__'s shape and byte strides)
// with the array's dtype; installs the GPU module's hooks where it is built.
NDView device_view(const Array& a, std::uintptr_t pointer, const Shape& shape,
                   const std::vector<std::int64_t>& byte_strides);
// Waits for the work a device array's producer queued on `stream` (0: none given).
void wait_for_device_producer(std::uintptr_t stream);
// Splitting a selection into parts, and reading into / writing from several devices at once
// (python/src/multi_device.cpp).
void bind_multi_device(nb::class_<Array>& cls);

// ---- Settings ------------------------------------------------------------------------------
// The settings Python asked for (zarrkit.config). Every call into the engine runs under a
// ScopedConfig made from a snapshot of them, so that changing them from one Python thread
// never races with work running on another.
Config python_settings();
void set_python_settings(const Config& config);

// Holds the snapshot for the duration of one engine call, on the calling thread. Writes pass
// their array's own write_empty_chunks (create_array(config=...)), which wins over the
// global one.
class SettingsScope {
 public:
  explicit SettingsScope(std::optional<bool> write_empty_chunks = std::nullopt);

 private:
  ScopedConfig scope_;
};

// ---- Stores --------------------------------------------------------------------------------
// What Python holds for a store: the C++ store and how to re-open it in another process.
struct StoreHandle {
  std::shared_ptr<Store> store;
};

// ---- Buffers -------------------------------------------------------------------------------
// A Python buffer (PEP 3118) held for as long as this object lives; released with the GIL.
class PyBufferView {
 public:
  PyBufferView(nb::handle object, bool writable);
  ~PyBufferView();
  PyBufferView(const PyBufferView&) = delete;
  PyBufferView& operator=(const PyBufferView&) = delete;

  std::byte* data() const { return static_cast<std::byte*>(view_.buf); }
  std::size_t size() const { return static_cast<std::size_t>(view_.len); }
  ByteView bytes() const { return {data(), size()}; }
  // The buffer as an array view of `dtype` (its item size must match).
  NDView as_ndview(const DataType& dtype, const char* what) const;

 private:
  Py_buffer view_{};
};

// A 1-d uint8 NumPy array that owns `buffer` (no copy).
nb::object buffer_to_numpy(Buffer buffer);

// ---- Selections ----------------------------------------------------------------------------
// A tuple (or one entry) of int, slice, Ellipsis, and 1-d int64 or bool NumPy arrays (lists
// along one axis; the Python package has converted other forms) as a Selection.
Selection to_selection(nb::handle key);
// A Selection as an index tuple (ints, slices, ...; lists of indices as Python lists).
nb::tuple from_selection(const Selection& selection);

// ---- JSON -----------------------------------------------------------------------------------
// JSON text from Python (json.dumps) as nlohmann::json; InvalidArgumentError if malformed.
nlohmann::json parse_json_argument(const std::string& text, const char* what);

}  // namespace zarrkit::python
