// Python index tuples -> Selection.
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
  if (PyIndex_Check(item.ptr()) && !PyBool_Check(item.ptr())) {
    return nb::cast<std::int64_t>(nb::int_(item));
  }
  fail_invalid("unsupported index entry {} (expected an integer, a slice or ...)",
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

nlohmann::json parse_json_argument(const std::string& text, const char* what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail_invalid("{} is not valid JSON: {}", what, e.what());
  }
}

}  // namespace zarrkit::python
