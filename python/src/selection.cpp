// Python index tuples -> Selection.
#include <nanobind/stl/string.h>

#include "bindings.h"

#include "zarrkit/error.h"

namespace zarrkit::python {
namespace {

std::optional<std::int64_t> slice_bound(PyObject* value) {
  if (value == Py_None) return std::nullopt;
  return nb::cast<std::int64_t>(nb::handle(value));
}

AxisSelector to_axis_selector(nb::handle item) {
  if (item.ptr() == Py_Ellipsis) return Ellipsis{};
  if (PySlice_Check(item.ptr())) {
    auto* s = reinterpret_cast<PySliceObject*>(item.ptr());
    Slice slice;
    slice.start = slice_bound(s->start);
    slice.stop = slice_bound(s->stop);
    if (s->step != Py_None) slice.step = nb::cast<std::int64_t>(nb::handle(s->step));
    if (slice.step == 0) fail_invalid("slice step cannot be zero");
    return slice;
  }
  // Lists along one axis: the Python side sends 1-d int64 or bool NumPy arrays.
  nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> indices;
  if (nb::try_cast(item, indices, false)) {
    IndexArray a;
    a.indices.assign(indices.data(), indices.data() + indices.shape(0));
    return a;
  }
  nb::ndarray<const bool, nb::ndim<1>, nb::c_contig, nb::device::cpu> mask;
  if (nb::try_cast(item, mask, false)) {
    BoolArray b;
    b.mask.resize(mask.shape(0));
    for (std::size_t i = 0; i < b.mask.size(); ++i) b.mask[i] = mask.data()[i] ? 1 : 0;
    return b;
  }
  // (NumPy arrays have __index__ too, so integers are tried after arrays.)
  if (PyIndex_Check(item.ptr()) && !PyBool_Check(item.ptr())) {
    return nb::cast<std::int64_t>(nb::int_(item));
  }
  fail_invalid("unsupported index entry {} (expected an integer, a slice, ..., or a 1-d integer "
               "or boolean array)",
               nb::cast<std::string>(nb::repr(item)));
}

}  // namespace

Selection to_selection(nb::handle key) {
  Selection selection;
  if (!PyTuple_Check(key.ptr())) {
    selection.push_back(to_axis_selector(key));
    return selection;
  }
  for (nb::handle item : key) selection.push_back(to_axis_selector(item));
  return selection;
}

nb::tuple from_selection(const Selection& selection) {
  nb::list items;
  for (const AxisSelector& s : selection) {
    if (const auto* i = std::get_if<std::int64_t>(&s)) {
      items.append(nb::int_(*i));
    } else if (const auto* slice = std::get_if<Slice>(&s)) {
      auto bound = [](const std::optional<std::int64_t>& v) { return v ? nb::object(nb::int_(*v)) : nb::none(); };
      items.append(nb::steal(PySlice_New(bound(slice->start).ptr(), bound(slice->stop).ptr(), nb::int_(slice->step).ptr())));
    } else if (const auto* list = std::get_if<IndexArray>(&s)) {
      nb::list indices;
      for (std::int64_t v : list->indices) indices.append(nb::int_(v));
      items.append(indices);
    } else if (std::holds_alternative<Ellipsis>(s)) {
      items.append(nb::ellipsis());
    } else {
      const auto& mask = std::get<BoolArray>(s).mask;
      nb::list flags;
      for (std::uint8_t v : mask) flags.append(nb::bool_(v != 0));
      items.append(flags);
    }
  }
  return nb::tuple(items);
}

nlohmann::json parse_json_argument(const std::string& text, const char* what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail_invalid("{} is not valid JSON: {}", what, e.what());
  }
}

}  // namespace zarrkit::python
