// The Array methods beyond plain selections: coordinate (vindex), mask and block
// selections, resize and append.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "zarrkit/array.h"
#include "zarrkit/error.h"
#include "zarrkit/vlen.h"

namespace zarrkit::python {
namespace {

// One int64 NumPy array (C-contiguous, any number of dimensions) per axis.
CoordinateSelection to_coordinates(nb::list arrays) {
  CoordinateSelection coordinates;
  for (nb::handle item : arrays) {
    nb::ndarray<const std::int64_t, nb::c_contig, nb::device::cpu> a;
    if (!nb::try_cast(item, a, false)) fail_invalid("coordinate arrays must be C-contiguous int64 arrays");
    Shape shape(a.ndim());
    for (std::size_t d = 0; d < a.ndim(); ++d) shape[d] = a.shape(d);
    coordinates.emplace_back(std::move(shape), std::vector<std::int64_t>(a.data(), a.data() + a.size()));
  }
  return coordinates;
}

MaskSelection to_mask(nb::handle item) {
  nb::ndarray<const bool, nb::c_contig, nb::device::cpu> m;
  if (!nb::try_cast(item, m, false)) fail_invalid("a mask selection must be a C-contiguous boolean array");
  MaskSelection mask;
  mask.shape.resize(m.ndim());
  for (std::size_t d = 0; d < m.ndim(); ++d) mask.shape[d] = m.shape(d);
  mask.mask.resize(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) mask.mask[i] = m.data()[i] ? 1 : 0;
  return mask;
}

// A variable-length result as (shape, elements in C order): str for string arrays, bytes
// for bytes arrays.
nb::tuple var_result(const VarNDBuffer& result) {
  const bool text = result.dtype().kind() == DataTypeKind::kString;
  nb::list elements;
  for (const std::string& e : result.elements()) {
    if (text) {
      elements.append(nb::steal(PyUnicode_DecodeUTF8(e.data(), static_cast<Py_ssize_t>(e.size()), "replace")));
    } else {
      elements.append(nb::bytes(e.data(), e.size()));
    }
  }
  return nb::make_tuple(nb::cast(result.shape()), elements);
}

// Runs `read` (an engine read of variable-length elements) without the GIL under the
// Python settings, then hands the elements to Python.
template <typename Read>
nb::tuple read_var_released(Read read) {
  VarNDBuffer result;
  {
    nb::gil_scoped_release release;
    SettingsScope settings;
    result = read();
  }
  return var_result(result);
}

// Elements given as str or bytes objects, in C order of `shape`.
VarNDBuffer var_values(const Array& a, nb::list values, const Shape& shape) {
  std::vector<std::string> elements;
  elements.reserve(nb::len(values));
  for (nb::handle v : values) {
    if (nb::isinstance<nb::str>(v)) {
      elements.emplace_back(nb::cast<std::string>(v));
    } else if (nb::isinstance<nb::bytes>(v)) {
      nb::bytes b = nb::borrow<nb::bytes>(v);
      elements.emplace_back(b.c_str(), b.size());
    } else {
      fail_invalid("elements of a string array must be str or bytes, got {}", nb::cast<std::string>(nb::str(v.type())));
    }
  }
  return VarNDBuffer(shape, a.dtype(), std::move(elements));
}

}  // namespace

void bind_array_selections(nb::class_<Array>& cls) {
  // Variable-length strings and bytes: elements cross as Python str / bytes objects.
  cls.def("read_var",
          [](const Array& a, nb::handle key) {
            const Selection selection = to_selection(key);
            return read_var_released([&] { return a.read_var(selection); });
          },
          nb::arg("key"), "(shape, elements in C order) of a variable-length string or bytes array.")
      .def("write_var",
           [](Array& a, nb::handle key, nb::list values, const Shape& shape, std::optional<bool> write_empty_chunks) {
             const Selection selection = to_selection(key);
             const VarNDBuffer data = var_values(a, values, shape);
             nb::gil_scoped_release release;
             SettingsScope settings(write_empty_chunks);
             a.write_var(selection, data);
           },
           nb::arg("key"), nb::arg("values"), nb::arg("shape"), nb::arg("write_empty_chunks").none() = nb::none())
      .def("read_var_coordinates",
           [](const Array& a, nb::list coordinates) {
             const CoordinateSelection c = to_coordinates(coordinates);
             return read_var_released([&] { return a.read_var_coordinates(c); });
           },
           nb::arg("coordinates"), "(shape, elements in C order) at the coordinates of a string or bytes array.")
      .def("write_var_coordinates",
           [](Array& a, nb::list coordinates, nb::list values, const Shape& shape,
              std::optional<bool> write_empty_chunks) {
             const CoordinateSelection c = to_coordinates(coordinates);
             const VarNDBuffer data = var_values(a, values, shape);
             nb::gil_scoped_release release;
             SettingsScope settings(write_empty_chunks);
             a.write_var_coordinates(c, data);
           },
           nb::arg("coordinates"), nb::arg("values"), nb::arg("shape"),
           nb::arg("write_empty_chunks").none() = nb::none())
      .def("read_var_mask",
           [](const Array& a, nb::handle mask) {
             const MaskSelection m = to_mask(mask);
             return read_var_released([&] { return a.read_var_mask(m); });
           },
           nb::arg("mask"), "(shape, elements in C order) where the mask is true, of a string or bytes array.")
      .def("write_var_mask",
           [](Array& a, nb::handle mask, nb::list values, const Shape& shape, std::optional<bool> write_empty_chunks) {
             const MaskSelection m = to_mask(mask);
             const VarNDBuffer data = var_values(a, values, shape);
             nb::gil_scoped_release release;
             SettingsScope settings(write_empty_chunks);
             a.write_var_mask(m, data);
           },
           nb::arg("mask"), nb::arg("values"), nb::arg("shape"), nb::arg("write_empty_chunks").none() = nb::none())
      .def("read_coordinates_into",
          [](const Array& a, nb::list coordinates, nb::handle out) {
            const CoordinateSelection c = to_coordinates(coordinates);
            PyBufferView view(out, true);
            const NDView target = view.as_ndview(a.dtype(), "reading into the output array");
            nb::gil_scoped_release release;
            SettingsScope settings;
            a.read_coordinates_into(c, target);
          },
          nb::arg("coordinates"), nb::arg("out"),
          "Reads the elements at the coordinates (one int64 array per axis, broadcast together) into `out`.")
      .def("write_coordinates",
           [](Array& a, nb::list coordinates, nb::handle value, std::optional<bool> write_empty_chunks) {
             const CoordinateSelection c = to_coordinates(coordinates);
             PyBufferView view(value, false);
             const NDView source = view.as_ndview(a.dtype(), "writing the value");
             nb::gil_scoped_release release;
             SettingsScope settings(write_empty_chunks);
             a.write_coordinates(c, source);
           },
           nb::arg("coordinates"), nb::arg("value"), nb::arg("write_empty_chunks").none() = nb::none())
      .def("read_mask",
           [](const Array& a, nb::handle mask) {
             const MaskSelection m = to_mask(mask);
             NDBuffer result;
             {
               nb::gil_scoped_release release;
               SettingsScope settings;
               result = a.read_mask(m);
             }
             return buffer_to_numpy(std::move(result.buffer()));
           },
           nb::arg("mask"), "The selected elements (C order) as the bytes of a 1-d array.")
      .def("write_mask",
           [](Array& a, nb::handle mask, nb::handle value, std::optional<bool> write_empty_chunks) {
             const MaskSelection m = to_mask(mask);
             PyBufferView view(value, false);
             const NDView source = view.as_ndview(a.dtype(), "writing the value");
             nb::gil_scoped_release release;
             SettingsScope settings(write_empty_chunks);
             a.write_mask(m, source);
           },
           nb::arg("mask"), nb::arg("value"), nb::arg("write_empty_chunks").none() = nb::none())
      .def("block_selection_shape",
           [](const Array& a, nb::handle key) { return a.selection_shape(a.block_selection(to_selection(key))); },
           nb::arg("key"))
      .def("read_var_blocks",
           [](const Array& a, nb::handle key) {
             const Selection selection = a.block_selection(to_selection(key));
             return read_var_released([&] { return a.read_var(selection); });
           },
           nb::arg("key"), "(shape, elements in C order) of whole chunks of a string or bytes array.")
      .def("write_var_blocks",
           [](Array& a, nb::handle key, nb::list values, const Shape& shape, std::optional<bool> write_empty_chunks) {
             const Selection selection = a.block_selection(to_selection(key));
             const VarNDBuffer data = var_values(a, values, shape);
             nb::gil_scoped_release release;
             SettingsScope settings(write_empty_chunks);
             a.write_var(selection, data);
           },
           nb::arg("key"), nb::arg("values"), nb::arg("shape"), nb::arg("write_empty_chunks").none() = nb::none())
      .def("read_blocks_into",
           [](const Array& a, nb::handle key, nb::handle out) {
             const Selection selection = a.block_selection(to_selection(key));
             PyBufferView view(out, true);
             const NDView target = view.as_ndview(a.dtype(), "reading into the output array");
             nb::gil_scoped_release release;
             SettingsScope settings;
             a.read_into(selection, target);
           },
           nb::arg("key"), nb::arg("out"))
      .def("write_blocks",
           [](Array& a, nb::handle key, nb::handle value, std::optional<bool> write_empty_chunks) {
             const Selection selection = a.block_selection(to_selection(key));
             PyBufferView view(value, false);
             const NDView source = view.as_ndview(a.dtype(), "writing the value");
             nb::gil_scoped_release release;
             SettingsScope settings(write_empty_chunks);
             a.write(selection, source);
           },
           nb::arg("key"), nb::arg("value"), nb::arg("write_empty_chunks").none() = nb::none())
      .def("resize",
           [](Array& a, const Shape& shape) {
             nb::gil_scoped_release release;
             SettingsScope settings;
             a.resize(shape);
           },
           nb::arg("shape"))
      .def("append",
           [](Array& a, nb::handle value, std::size_t axis) {
             PyBufferView view(value, false);
             const NDView source = view.as_ndview(a.dtype(), "appending the value");
             nb::gil_scoped_release release;
             SettingsScope settings;
             return a.append(source, axis);
           },
           nb::arg("value"), nb::arg("axis"));
}

}  // namespace zarrkit::python
