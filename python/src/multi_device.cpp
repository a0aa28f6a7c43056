// Several devices at once on the Python side (zarrkit.read_devices, write_devices,
// split_selection): the parts come as (index, pointer, shape, byte strides[, stream]) tuples
// of device arrays' __cuda_array_interface__, and run with the GIL released.
#include <cstdint>
#include <tuple>

#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/optional.h>

#include "bindings.h"
#include "zarrkit/multi_device.h"

namespace zarrkit::python {
namespace {

using ReadPart = std::tuple<nb::object, std::uintptr_t, Shape, std::vector<std::int64_t>>;
using WritePart = std::tuple<nb::object, std::uintptr_t, Shape, std::vector<std::int64_t>, std::uintptr_t>;

template <typename Part>
std::vector<DevicePart> device_parts(const Array& a, const std::vector<Part>& parts) {
  std::vector<DevicePart> out;
  for (const Part& p : parts) {
    out.push_back({to_selection(std::get<0>(p)), device_view(a, std::get<1>(p), std::get<2>(p), std::get<3>(p))});
  }
  return out;
}

}  // namespace

void bind_multi_device(nb::class_<Array>& cls) {
  cls.def(
         "split_selection",
         [](const Array& a, nb::handle key, std::size_t axis, std::size_t parts) {
           nb::list out;
           for (const Selection& s : split_selection(a.metadata(), to_selection(key), axis, parts)) {
             out.append(from_selection(s));
           }
           return out;
         },
         nb::arg("key"), nb::arg("axis"), nb::arg("parts"),
         "The selection cut along array axis `axis` into at most `parts` index tuples, at stored chunk "
         "(shard) boundaries.")
      .def(
          "read_into_devices",
          [](const Array& a, const std::vector<ReadPart>& parts) {
            const std::vector<DevicePart> work = device_parts(a, parts);
            nb::gil_scoped_release release;
            SettingsScope settings;
            read_into_devices(a, work);
          },
          nb::arg("parts"),
          "Reads every (index, pointer, shape, byte_strides) part at once, each on the device that holds it.")
      .def(
          "write_from_devices",
          [](Array& a, const std::vector<WritePart>& parts, std::optional<bool> write_empty_chunks) {
            const std::vector<DevicePart> work = device_parts(a, parts);
            nb::gil_scoped_release release;
            for (const WritePart& p : parts) wait_for_device_producer(std::get<4>(p));
            SettingsScope settings(write_empty_chunks);
            write_from_devices(a, work);
          },
          nb::arg("parts"), nb::arg("write_empty_chunks").none() = nb::none(),
          "Writes every (index, pointer, shape, byte_strides, stream) part at once, each from its device.");
}

}  // namespace zarrkit::python
