// zarrkit::Group for Python: open/create, members, walks, attributes.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "zarrkit/group.h"

namespace zarrkit::python {
namespace {

nb::list node_list(const std::vector<NodeInfo>& nodes) {
  nb::list out;
  for (const auto& n : nodes) {
    out.append(nb::make_tuple(n.name, n.path, n.type == NodeType::kArray ? "array" : "group", n.zarr_format));
  }
  return out;
}

}  // namespace

void bind_groups(nb::module_& m) {
  nb::class_<Group>(m, "Group", "A group in a store (the engine side of zarrkit.Group).")
      .def_prop_ro("path", &Group::path)
      .def_prop_ro("store", [](const Group& g) { return StoreHandle{g.store()}; })
      .def_prop_ro("zarr_format", &Group::zarr_format)
      .def("attributes_json", [](const Group& g) { return g.attributes().dump(); })
      .def("set_attributes",
           [](Group& g, const std::string& attributes) {
             const nlohmann::json value = parse_json_argument(attributes, "attributes");
             nb::gil_scoped_release release;
             SettingsScope settings;
             g.set_attributes(value);
           },
           nb::arg("attributes_json"))
      .def("members",
           [](const Group& g) {
             std::vector<NodeInfo> nodes;
             {
               nb::gil_scoped_release release;
               SettingsScope settings;
               nodes = g.members();
             }
             return node_list(nodes);
           },
           "Direct children as (name, path, 'array'|'group', zarr_format), sorted by name.")
      .def("walk",
           [](const Group& g) {
             std::vector<NodeInfo> nodes;
             {
               nb::gil_scoped_release release;
               SettingsScope settings;
               nodes = g.walk();
             }
             return node_list(nodes);
           },
           "Every node below, depth first, as (name, path, kind, zarr_format).");

  m.def("open_group",
        [](const StoreHandle& store, const std::string& path, std::optional<bool> use_consolidated) {
          const ConsolidatedUse use = !use_consolidated ? ConsolidatedUse::kIfPresent
                                      : *use_consolidated ? ConsolidatedUse::kRequire
                                                          : ConsolidatedUse::kIgnore;
          nb::gil_scoped_release release;
          SettingsScope settings;
          return Group::open(store.store, path, use);
        },
        nb::arg("store"), nb::arg("path") = "", nb::arg("use_consolidated").none() = nb::none(),
        "Opens the group at path. use_consolidated: None uses consolidated metadata where present, "
        "True requires it, False reads the store.");
  m.def("consolidate_metadata",
        [](const StoreHandle& store, const std::string& path) {
          nb::gil_scoped_release release;
          SettingsScope settings;
          return consolidate_metadata(store.store, path);
        },
        nb::arg("store"), nb::arg("path") = "",
        "Stores the metadata of every node below the group consolidated (v3 inline in zarr.json, v2 .zmetadata) "
        "and returns the group, opened with it.");
  m.def("create_group",
        [](const StoreHandle& store, const std::string& path, int zarr_format, const std::string& attributes,
           bool overwrite) {
          const nlohmann::json attrs = parse_json_argument(attributes, "attributes");
          nb::gil_scoped_release release;
          SettingsScope settings;
          return Group::create(store.store, path, zarr_format, attrs, overwrite);
        },
        nb::arg("store"), nb::arg("path"), nb::arg("zarr_format"), nb::arg("attributes_json"),
        nb::arg("overwrite"));
  m.def("probe_node",
        [](const StoreHandle& store, const std::string& path) -> nb::object {
          std::optional<NodeInfo> info;
          {
            nb::gil_scoped_release release;
            SettingsScope settings;
            info = probe_node(*store.store, path);
          }
          if (!info) return nb::none();
          return nb::make_tuple(info->type == NodeType::kArray ? "array" : "group", info->zarr_format);
        },
        nb::arg("store"), nb::arg("path") = "", "('array'|'group', zarr_format) of the node at `path`, or None.");
}

}  // namespace zarrkit::python
