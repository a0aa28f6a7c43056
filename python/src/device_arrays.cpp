// GPU (device) memory on the Python side of zarrkit::Array: reads into, and writes from,
// arrays described by __cuda_array_interface__ (CuPy, Numba, PyTorch; DLPack producers are
// converted to one by the Python package).
//
// The caller's data may still be being produced on the stream it names (the interface's
// "stream" entry): a write waits for that stream before the engine, which works on streams
// of its own, reads the memory. A read returns only after every kernel that writes the
// output has finished, so the result is ready on any stream.
#include <cstdint>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "zarrkit/error.h"
#ifdef ZARRKIT_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "zarrkit/gpu.h"
#endif

namespace zarrkit::python {

NDView device_view(const Array& a, std::uintptr_t pointer, const Shape& shape,
                   const std::vector<std::int64_t>& byte_strides) {
  if (shape.size() != byte_strides.size()) {
    fail_invalid("a device array view has {} dimensions but {} strides", shape.size(), byte_strides.size());
  }
#ifdef ZARRKIT_HAVE_CUDA
  install_gpu_support();  // the engine's device paths, also when enable_gpu() was never called
#endif
  NDView view;
  view.data = reinterpret_cast<std::byte*>(pointer);
  view.shape = shape;
  view.byte_strides = byte_strides;
  view.dtype = a.dtype();
  view.kind = MemoryKind::kDevice;
  return view;
}

// Waits for the work the producer queued on `stream` (0: none given; 1 and 2 are CUDA's
// legacy and per-thread default streams, as __cuda_array_interface__ defines them).
void wait_for_device_producer(std::uintptr_t stream) {
#ifdef ZARRKIT_HAVE_CUDA
  if (stream == 0) return;
  const cudaError_t status = cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream));
  if (status != cudaSuccess) {
    fail_invalid("waiting for the stream of the device array to write failed: {}", cudaGetErrorString(status));
  }
#else
  (void)stream;
#endif
}

void bind_device_arrays(nb::class_<Array>& cls) {
  cls.def("warm_up_gpu",
          [](const Array& a, nb::handle key) {
#ifdef ZARRKIT_HAVE_CUDA
            const Selection selection = to_selection(key);
            install_gpu_support();
            nb::gil_scoped_release release;
            SettingsScope settings;
            warm_up_gpu(a, selection);
#else
            (void)a;
            (void)key;
            fail_unsupported("this zarrkit was built without the CUDA path: nothing to warm up");
#endif
          },
          nb::arg("key"),
          "Makes ahead what reading the selection into device memory needs (pinned staging, "
          "device memory, streams, kernels), so that the first read costs what later ones do.")
      .def("read_into_device",
          [](const Array& a, nb::handle key, std::uintptr_t pointer, const Shape& shape,
             const std::vector<std::int64_t>& byte_strides) {
            const Selection selection = to_selection(key);
            const NDView target = device_view(a, pointer, shape, byte_strides);
            nb::gil_scoped_release release;
            SettingsScope settings;
            a.read_into(selection, target);
          },
          nb::arg("key"), nb::arg("pointer"), nb::arg("shape"), nb::arg("byte_strides"),
          "Reads the selection into device memory at `pointer` (a device array's "
          "__cuda_array_interface__: its shape and byte strides).")
      .def("write_from_device",
           [](Array& a, nb::handle key, std::uintptr_t pointer, const Shape& shape,
              const std::vector<std::int64_t>& byte_strides, std::uintptr_t stream,
              std::optional<bool> write_empty_chunks) {
             const Selection selection = to_selection(key);
             const NDView source = device_view(a, pointer, shape, byte_strides);
             nb::gil_scoped_release release;
             wait_for_device_producer(stream);
             SettingsScope settings(write_empty_chunks);
             a.write(selection, source);
           },
           nb::arg("key"), nb::arg("pointer"), nb::arg("shape"), nb::arg("byte_strides"), nb::arg("stream"),
           nb::arg("write_empty_chunks").none() = nb::none(),
           "Writes the device array at `pointer` (the selection's shape, any byte strides) to the "
           "selection, after waiting for `stream` (0: none).");
}

}  // namespace zarrkit::python
