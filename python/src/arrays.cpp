// zarrkit::Array for Python: open/create, metadata, attributes, reads and writes.
//
// Reads land in a NumPy array the Python side allocates (np.empty of the selection's
// shape): the engine scatters decoded chunks straight into it, so the result needs no
// further copy. The GIL is released for all IO and codec work.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "dtypes.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit::python {
namespace {

using json = nlohmann::json;

ChunkKeyEncoding chunk_key_encoding_from_json(const json& j) {
  ChunkKeyEncoding e;
  const std::string name = j.value("name", "default");
  if (name == "default") {
    e.kind = ChunkKeyEncoding::Kind::kDefault;
    e.separator = '/';
  } else if (name == "v2") {
    e.kind = ChunkKeyEncoding::Kind::kV2;
    e.separator = '.';
  } else {
    fail_invalid("chunk_key_encoding name must be 'default' or 'v2', got '{}'", name);
  }
  if (const auto c = j.find("configuration"); c != j.end() && c->contains("separator")) {
    const std::string sep = (*c)["separator"].get<std::string>();
    if (sep != "/" && sep != ".") fail_invalid("chunk_key_encoding separator must be '/' or '.', got '{}'", sep);
    e.separator = sep[0];
  }
  return e;
}

// The spec the Python side built (zarrkit.api.create_array) as an ArraySpec. `fill` is
// one element's bytes in native order, None for the default (zero), or the string "null"
// for a v2 null fill value.
ArraySpec array_spec_from_python(const json& j, nb::handle fill) {
  ArraySpec spec;
  spec.zarr_format = j.at("zarr_format").get<int>();
  spec.shape = j.at("shape").get<Shape>();
  spec.chunks = j.value("chunks", Shape{});
  if (const auto rect = j.find("rectilinear_chunks"); rect != j.end()) {
    // Per axis: a size (a regular axis) or the list of the chunks' sizes.
    std::vector<AxisGrid> axes;
    for (const json& axis : *rect) {
      if (!axis.is_array()) {
        axes.push_back(AxisGrid::regular(axis.get<std::uint64_t>()));
        continue;
      }
      std::vector<ChunkRun> runs;
      for (const json& size : axis) runs.push_back({size.get<std::uint64_t>(), 1});
      axes.push_back(AxisGrid::explicit_runs(runs));
    }
    spec.rectilinear_chunks = ChunkGrid(std::move(axes));
  }
  spec.dtype = dtype_from_python(j.at("dtype"));
  if (spec.zarr_format == 3) {
    spec.dtype = spec.dtype.with_storage_endian(std::nullopt);
    if (j.contains("codecs")) spec.codecs = j["codecs"];
  } else {
    if (j.contains("compressor")) spec.v2_compressor = j["compressor"];
    if (j.contains("filters")) spec.v2_filters = j["filters"];
    const std::string order = j.value("order", "C");
    if (order != "C" && order != "F") fail_invalid("order must be 'C' or 'F', got '{}'", order);
    spec.v2_order = order[0];
  }
  if (j.contains("chunk_key_encoding")) spec.chunk_key_encoding = chunk_key_encoding_from_json(j["chunk_key_encoding"]);
  if (j.contains("dimension_names")) {
    std::vector<std::optional<std::string>> names;
    for (const auto& n : j["dimension_names"]) {
      names.push_back(n.is_null() ? std::nullopt : std::optional<std::string>(n.get<std::string>()));
    }
    spec.dimension_names = std::move(names);
  }
  if (j.contains("attributes")) spec.attributes = j["attributes"];
  if (nb::isinstance<nb::str>(fill)) {
    if (nb::cast<std::string>(fill) != "null") fail_invalid("fill value must be bytes, None or 'null'");
    if (spec.zarr_format != 2) fail_invalid("a null fill value is a Zarr v2 feature; v3 needs a value");
    spec.fill_value = json(nullptr);
  } else if (!fill.is_none()) {
    PyBufferView bytes(fill, false);
    if (bytes.size() != spec.dtype.size()) {
      fail_invalid("the fill value has {} bytes, {} needs {}", bytes.size(), spec.dtype.name(), spec.dtype.size());
    }
    const FillValue value = FillValue::from_bytes(bytes.bytes());
    spec.fill_value = spec.zarr_format == 3 ? fill_value_to_v3_json(value, spec.dtype)
                                            : fill_value_to_v2_json(value, spec.dtype);
  }
  return spec;
}

json metadata_document(const ArrayMetadata& m) {
  if (m.zarr_format == 3) return array_metadata_to_v3_json(m);
  json doc = array_metadata_to_v2_json(m);
  doc["attributes"] = m.attributes;
  return doc;
}

nb::object storage_info_dict(const StorageInfo& info) {
  nb::dict d;
  d["chunks_stored"] = info.chunks_stored;
  d["chunks_total"] = info.chunks_total;
  d["bytes_stored"] = info.bytes_stored;
  d["bytes_logical"] = info.bytes_logical;
  return d;
}

// Per axis, the sizes of the grid's chunks inside the array (the last one cut by the
// extent), as zarr-python's write_chunk_sizes lists them.
std::vector<std::vector<std::uint64_t>> chunk_sizes_inside(const ArrayMetadata& m) {
  // A list per axis: refuse one longer than a Python list of that many ints can reasonably be.
  constexpr std::uint64_t kMaxListed = std::uint64_t{1} << 26;
  const ChunkGrid grid = m.chunk_grid();
  const Shape counts = grid.grid_shape(m.shape);
  std::vector<std::vector<std::uint64_t>> sizes(m.ndim());
  for (std::size_t a = 0; a < m.ndim(); ++a) {
    if (counts[a] > kMaxListed) fail_resource("axis {} has {} chunks, too many to list", a, counts[a]);
    for (std::uint64_t c = 0; c < counts[a]; ++c) {
      const std::uint64_t origin = grid.axis(a).origin(c);
      sizes[a].push_back(std::min(grid.axis(a).size(c), m.shape[a] - origin));
    }
  }
  return sizes;
}

}  // namespace

void bind_arrays(nb::module_& m) {
  nb::class_<Array> array_class(m, "Array", "An array in a store (the engine side of zarrkit.Array).");
  bind_array_selections(array_class);
  bind_device_arrays(array_class);
  bind_multi_device(array_class);
  array_class
      .def_prop_ro("path", &Array::path)
      .def_prop_ro("store", [](const Array& a) { return StoreHandle{a.store()}; })
      .def_prop_ro("shape", [](const Array& a) { return a.shape(); })
      .def_prop_ro("chunk_shape", [](const Array& a) { return a.metadata().chunk_shape; },
                   "The chunk grid's chunk shape (the shard shape for sharded arrays); for a rectilinear grid "
                   "its largest chunk.")
      .def_prop_ro("is_rectilinear", [](const Array& a) { return a.metadata().is_rectilinear(); },
                   "Whether the chunk grid is rectilinear (chunk sizes listed per axis).")
      .def_prop_ro("chunk_grid_shape", [](const Array& a) { return a.metadata().chunk_grid_shape(); },
                   "The number of chunks (shards, for sharded arrays) along each axis.")
      .def_prop_ro("chunk_sizes", [](const Array& a) { return chunk_sizes_inside(a.metadata()); },
                   "Per axis, the sizes of the chunks (shards) inside the array's extent.")
      .def_prop_ro("zarr_format", [](const Array& a) { return a.metadata().zarr_format; })
      .def_prop_ro("dtype_name", [](const Array& a) { return a.dtype().name(); })
      .def_prop_ro("numpy_descr", [](const Array& a) { return numpy_descr(a.dtype()).dump(); },
                   "A NumPy dtype descriptor as JSON text.")
      .def_prop_ro("fill_value_bytes",
                   [](const Array& a) {
                     const ByteView b = a.metadata().fill_value.bytes();
                     return nb::bytes(reinterpret_cast<const char*>(b.data()), b.size());
                   })
      .def_prop_ro("fill_value_is_null", [](const Array& a) { return a.metadata().fill_value.is_null(); })
      .def("metadata_json", [](const Array& a) { return metadata_document(a.metadata()).dump(); },
           "The metadata document (zarr.json, or .zarray plus \"attributes\") as JSON text.")
      .def("attributes_json", [](const Array& a) { return a.metadata().attributes.dump(); })
      .def("set_attributes",
           [](Array& a, const std::string& attributes) {
             const json value = parse_json_argument(attributes, "attributes");
             nb::gil_scoped_release release;
             SettingsScope settings;
             a.set_attributes(value);
           },
           nb::arg("attributes_json"))
      .def("selection_shape", [](const Array& a, nb::handle key) { return a.selection_shape(to_selection(key)); },
           nb::arg("key"))
      .def("read_into",
           [](const Array& a, nb::handle key, nb::handle out) {
             const Selection selection = to_selection(key);
             PyBufferView view(out, true);
             const NDView target = view.as_ndview(a.dtype(), "reading into the output array");
             nb::gil_scoped_release release;
             SettingsScope settings;
             a.read_into(selection, target);
           },
           nb::arg("key"), nb::arg("out"),
           "Reads the selection `key` into `out` (a writable array of the selection's shape).")
      .def("write",
           [](Array& a, nb::handle key, nb::handle value, std::optional<bool> write_empty_chunks) {
             const Selection selection = to_selection(key);
             PyBufferView view(value, false);
             const NDView source = view.as_ndview(a.dtype(), "writing the value");
             nb::gil_scoped_release release;
             SettingsScope settings(write_empty_chunks);
             a.write(selection, source);
           },
           nb::arg("key"), nb::arg("value"), nb::arg("write_empty_chunks").none() = nb::none(),
           "Writes `value` (an array of the selection's shape or one that broadcasts to it).")
      .def("storage_info",
           [](const Array& a) {
             StorageInfo info;
             {
               nb::gil_scoped_release release;
               SettingsScope settings;
               info = a.storage_info();
             }
             return storage_info_dict(info);
           });

  m.def("open_array",
        [](const StoreHandle& store, const std::string& path) {
          nb::gil_scoped_release release;
          SettingsScope settings;
          return Array::open(store.store, path);
        },
        nb::arg("store"), nb::arg("path") = "");
  m.def("create_array",
        [](const StoreHandle& store, const std::string& path, const std::string& spec_json, nb::handle fill,
           bool overwrite) {
          const ArraySpec spec = array_spec_from_python(parse_json_argument(spec_json, "array spec"), fill);
          nb::gil_scoped_release release;
          SettingsScope settings;
          const ArrayMetadata metadata = make_array_metadata(spec, CodecRegistry::builtin());
          return Array::create(store.store, path, metadata, overwrite);
        },
        nb::arg("store"), nb::arg("path"), nb::arg("spec_json"), nb::arg("fill").none(), nb::arg("overwrite"));
}

}  // namespace zarrkit::python
