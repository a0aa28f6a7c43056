// Python buffers <-> engine views, and engine buffers -> NumPy without copies.
#include "bindings.h"

#include "zarrkit/error.h"

namespace zarrkit::python {

PyBufferView::PyBufferView(nb::handle object, bool writable) {
  const int flags = PyBUF_STRIDES | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(object.ptr(), &view_, flags) != 0) throw nb::python_error();
}

PyBufferView::~PyBufferView() {
  if (view_.obj == nullptr) return;
  // Releasing may run Python code (the exporter's release hook): take the GIL for it.
  nb::gil_scoped_acquire gil;
  PyBuffer_Release(&view_);
}

NDView PyBufferView::as_ndview(const DataType& dtype, const char* what) const {
  if (static_cast<std::size_t>(view_.itemsize) != dtype.size()) {
    fail_invalid("{}: the buffer has {}-byte items, {} needs {}", what, view_.itemsize, dtype.name(),
                 dtype.size());
  }
  NDView v;
  v.data = data();
  v.dtype = dtype;
  v.kind = MemoryKind::kHost;
  const auto ndim = static_cast<std::size_t>(view_.ndim);
  v.shape.resize(ndim);
  v.byte_strides.resize(ndim);
  for (std::size_t d = 0; d < ndim; ++d) {
    v.shape[d] = static_cast<std::uint64_t>(view_.shape[d]);
    v.byte_strides[d] = view_.strides != nullptr ? static_cast<std::int64_t>(view_.strides[d]) : 0;
  }
  if (view_.strides == nullptr) v.byte_strides = NDView::c_strides(v.shape, dtype.size());
  return v;
}

nb::object buffer_to_numpy(Buffer buffer) {
  auto* owner = new Buffer(std::move(buffer));
  nb::capsule capsule(owner, [](void* p) noexcept { delete static_cast<Buffer*>(p); });
  const std::size_t shape[1] = {owner->size()};
  // A zero-length buffer may have no memory; NumPy still wants a non-null pointer.
  static std::uint8_t empty = 0;
  auto* data = owner->size() == 0 ? &empty : reinterpret_cast<std::uint8_t*>(owner->data());
  return nb::cast(nb::ndarray<nb::numpy, std::uint8_t, nb::ndim<1>>(data, 1, shape, capsule));
}

}  // namespace zarrkit::python
