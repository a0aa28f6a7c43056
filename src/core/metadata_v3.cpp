// Zarr v3 zarr.json: parsing (untrusted) and serialising, for arrays and groups.
#include <algorithm>
#include <set>
#include <string>

#include "core/metadata_util.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;
using namespace metadata_detail;

void check_zarr_format_and_node_type(const json& doc, std::string_view expected_node_type) {
  if (!doc.is_object()) fail_invalid("zarr.json must be a JSON object, got {}", describe(doc));
  const json& format = require_member(doc, "zarr_format", "zarr.json");
  if (as_uint(format) != std::optional<std::uint64_t>{3}) {
    fail_invalid("zarr.json: zarr_format must be the integer 3, got {}", describe(format));
  }
  const json& node_type = require_member(doc, "node_type", "zarr.json");
  if (!node_type.is_string() || (node_type != "array" && node_type != "group")) {
    fail_invalid("zarr.json: node_type must be \"array\" or \"group\", got {}", describe(node_type));
  }
  if (node_type != expected_node_type) {
    fail_invalid("zarr.json describes a {}, not a{} {}", node_type.get<std::string>(),
                 expected_node_type == "array" ? "n" : "", expected_node_type);
  }
}

// v3 core: a field the reader does not know must make it refuse the node, unless the field
// is an object that says "must_understand": false.
void check_unknown_fields(const json& doc, const std::set<std::string_view>& known) {
  for (const auto& [key, value] : doc.items()) {
    if (known.count(key) != 0) continue;
    const json* must_understand = find_member(value, "must_understand");
    if (must_understand != nullptr && must_understand->is_boolean() && !must_understand->get<bool>()) continue;
    fail_unsupported("zarr.json: unsupported metadata field \"{}\" (it does not say \"must_understand\": false)", key);
  }
}

json parse_attributes(const json* value, std::string_view where) {
  if (value == nullptr) return json::object();
  if (!value->is_object()) fail_invalid("{}: attributes must be an object, got {}", where, describe(*value));
  return *value;
}

struct ParsedGrid {
  Shape chunk_shape;
  std::optional<ChunkGrid> rectilinear;
};

Shape parse_regular_grid(const json& configuration, const Shape& shape, const MetadataLimits& limits) {
  check_configuration_keys(configuration, {"chunk_shape"}, "chunk_grid");
  const json& chunk_shape_json = require_member(configuration, "chunk_shape", "chunk_grid configuration");
  Shape chunk_shape = get_shape(chunk_shape_json, "chunk_grid chunk_shape", limits.max_ndim, /*positive=*/true);
  if (chunk_shape.size() != shape.size()) {
    fail_invalid("chunk_grid chunk_shape {} has {} dimensions but shape {} has {}", describe(chunk_shape_json),
                 chunk_shape.size(), json(shape).dump(), shape.size());
  }
  return chunk_shape;
}

std::uint64_t get_positive(const json& value, std::string_view what, std::size_t axis) {
  const auto n = as_uint(value);
  if (!n || *n == 0) fail_invalid("chunk_grid chunk_shapes axis {}: {} must be an integer >= 1, got {}", axis, what, describe(value));
  return *n;
}

// One axis of "chunk_shapes": a bare size (chunks of that size without end) or a list of
// sizes and [size, count] runs.
AxisGrid parse_rectilinear_axis(const json& value, std::size_t axis) {
  if (!value.is_array()) return AxisGrid::regular(get_positive(value, "a chunk size", axis));
  if (value.empty()) fail_invalid("chunk_grid chunk_shapes axis {} lists no chunk sizes", axis);
  std::vector<ChunkRun> runs;
  runs.reserve(value.size());
  for (const json& item : value) {
    if (!item.is_array()) {
      runs.push_back({get_positive(item, "a chunk size", axis), 1});
      continue;
    }
    if (item.size() != 2) {
      fail_invalid("chunk_grid chunk_shapes axis {}: a run must be [size, count], got {}", axis, describe(item));
    }
    runs.push_back({get_positive(item[0], "a run's size", axis), get_positive(item[1], "a run's count", axis)});
  }
  try {
    return AxisGrid::explicit_runs(runs);
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("chunk_grid chunk_shapes axis {}", axis));
  }
}

ChunkGrid parse_rectilinear_grid(const json& configuration, const Shape& shape, const MetadataLimits& limits) {
  check_configuration_keys(configuration, {"kind", "chunk_shapes"}, "chunk_grid");
  const json& kind = require_member(configuration, "kind", "rectilinear chunk_grid configuration");
  if (!kind.is_string()) fail_invalid("rectilinear chunk_grid: kind must be a string, got {}", describe(kind));
  if (kind != "inline") fail_unsupported("rectilinear chunk_grid: unsupported kind {} (only \"inline\")", describe(kind));
  const json& shapes = require_member(configuration, "chunk_shapes", "rectilinear chunk_grid configuration");
  if (!shapes.is_array()) fail_invalid("chunk_grid chunk_shapes must be a list, got {}", describe(shapes));
  if (shapes.size() != shape.size()) {
    fail_invalid("chunk_grid chunk_shapes has {} dimensions but shape {} has {}", shapes.size(), json(shape).dump(),
                 shape.size());
  }
  std::vector<AxisGrid> axes;
  axes.reserve(std::min(shapes.size(), limits.max_ndim));
  for (std::size_t a = 0; a < shapes.size(); ++a) axes.push_back(parse_rectilinear_axis(shapes[a], a));
  ChunkGrid grid(std::move(axes));
  try {
    grid.check_covers(shape);
  } catch (const Error& e) {
    rethrow_with_context(e, "chunk_grid");
  }
  return grid;
}

ParsedGrid parse_chunk_grid(const json& value, const Shape& shape, const MetadataLimits& limits) {
  constexpr std::string_view kWhat = "chunk_grid";
  const Extension grid = parse_extension(value, kWhat);
  require_must_understand(grid, kWhat);
  if (grid.name == "regular") return {parse_regular_grid(grid.configuration, shape, limits), std::nullopt};
  if (grid.name == "rectilinear") {
    ChunkGrid rectilinear = parse_rectilinear_grid(grid.configuration, shape, limits);
    return {rectilinear.largest_chunk(), std::move(rectilinear)};
  }
  fail_unsupported("unsupported chunk_grid \"{}\" (only \"regular\" and \"rectilinear\")", grid.name);
}

// Validates the chain against every chunk size the grid has: a rectilinear grid's largest
// chunk, then each axis's other sizes in turn (a codec such as sharding constrains each
// axis's size on its own; the number of specs is the number of runs, not of chunks).
void validate_chain_for_grid(const CodecChain& chain, const ArrayMetadata& m) {
  chain.validate(m.chunk_spec());
  if (!m.rectilinear_grid) return;
  for (std::size_t a = 0; a < m.ndim(); ++a) {
    for (const ChunkRun& run : m.rectilinear_grid->axis(a).runs()) {
      if (run.size == m.chunk_shape[a]) continue;
      ChunkSpec spec = m.chunk_spec();
      spec.shape[a] = run.size;
      chain.validate(spec);
    }
  }
}

std::optional<std::vector<std::optional<std::string>>> parse_dimension_names(const json* value, std::size_t ndim) {
  // The spec describes a list; zarr-python also writes null for "none" (SPEC-NOTES rule 6).
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (!value->is_array()) fail_invalid("dimension_names must be a list, got {}", describe(*value));
  if (value->size() != ndim) {
    fail_invalid("dimension_names has {} entries but the array has {} dimensions", value->size(), ndim);
  }
  std::vector<std::optional<std::string>> names;
  for (const auto& item : *value) {
    if (item.is_null()) names.emplace_back(std::nullopt);
    else if (item.is_string()) names.emplace_back(item.get<std::string>());
    else fail_invalid("dimension_names entries must be strings or null, got {}", describe(item));
  }
  return names;
}

void check_storage_transformers(const json* value) {
  if (value == nullptr) return;
  if (!value->is_array()) fail_invalid("storage_transformers must be a list, got {}", describe(*value));
  if (value->empty()) return;
  const json& first = (*value)[0];
  const json* name = find_member(first, "name");
  fail_unsupported("unsupported storage transformer {}", name != nullptr ? describe(*name) : describe(first));
}

}  // namespace

ArrayMetadata parse_array_metadata_v3(const json& doc, const CodecRegistry& registry, const MetadataLimits& limits) {
  check_zarr_format_and_node_type(doc, "array");
  check_unknown_fields(doc, {"zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
                             "fill_value", "codecs", "attributes", "dimension_names", "storage_transformers"});
  check_storage_transformers(find_member(doc, "storage_transformers"));

  ArrayMetadata m;
  m.zarr_format = 3;
  m.shape = get_shape(require_member(doc, "shape", "zarr.json"), "shape", limits.max_ndim, /*positive=*/false);
  m.dtype = parse_dtype_v3(require_member(doc, "data_type", "zarr.json"));
  ParsedGrid grid = parse_chunk_grid(require_member(doc, "chunk_grid", "zarr.json"), m.shape, limits);
  m.chunk_shape = std::move(grid.chunk_shape);
  m.rectilinear_grid = std::move(grid.rectilinear);
  check_array_sizes(m.shape, m.chunk_shape, m.dtype, limits);
  m.chunk_key_encoding = parse_chunk_key_encoding_v3(require_member(doc, "chunk_key_encoding", "zarr.json"));
  m.fill_value = parse_fill_value_v3(require_member(doc, "fill_value", "zarr.json"), m.dtype);

  const json& codecs = require_member(doc, "codecs", "zarr.json");
  if (!codecs.is_array() || codecs.empty()) fail_invalid("codecs must be a non-empty list, got {}", describe(codecs));
  try {
    auto chain = CodecChain::from_v3_json(codecs, m.dtype, registry);
    validate_chain_for_grid(chain, m);
    m.codecs = std::make_shared<const CodecChain>(std::move(chain));
  } catch (const Error& e) {
    rethrow_with_context(e, "codecs");
  }

  m.attributes = parse_attributes(find_member(doc, "attributes"), "zarr.json");
  m.dimension_names = parse_dimension_names(find_member(doc, "dimension_names"), m.shape.size());
  return m;
}

GroupMetadata parse_group_metadata_v3(const json& doc) {
  check_zarr_format_and_node_type(doc, "group");
  check_unknown_fields(doc, {"zarr_format", "node_type", "attributes", "consolidated_metadata"});
  GroupMetadata g;
  g.zarr_format = 3;
  g.attributes = parse_attributes(find_member(doc, "attributes"), "zarr.json");
  if (const json* consolidated = find_member(doc, "consolidated_metadata"); consolidated && !consolidated->is_null()) {
    // zarr-python's inline consolidated metadata (the historical exception to "no
    // must_understand: false on core fields"); anything else that opts out is skipped.
    const json* kind = find_member(*consolidated, "kind");
    const json* must_understand = find_member(*consolidated, "must_understand");
    const bool optional = must_understand && must_understand->is_boolean() && !must_understand->get<bool>();
    if (kind && *kind == "inline") {
      if (const json* metadata = find_member(*consolidated, "metadata"); metadata && !metadata->is_object()) {
        fail_invalid("zarr.json: consolidated_metadata.metadata must be an object, got {}", describe(*metadata));
      }
      g.consolidated = *consolidated;
    } else if (!optional) {
      fail_unsupported("zarr.json: unsupported consolidated_metadata {}", describe(*consolidated));
    }
  }
  return g;
}

json chunk_grid_to_v3_json(const ChunkGrid& grid) {
  json shapes = json::array();
  for (const AxisGrid& axis : grid.axes()) {
    if (axis.is_regular()) {
      shapes.push_back(axis.regular_size());
      continue;
    }
    // Runs of one chunk as bare sizes, longer ones as [size, count], as zarr-python writes them.
    json sizes = json::array();
    for (const ChunkRun& run : axis.runs()) {
      if (run.count == 1) sizes.push_back(run.size);
      else sizes.push_back(json::array({run.size, run.count}));
    }
    shapes.push_back(std::move(sizes));
  }
  return {{"name", "rectilinear"}, {"configuration", {{"kind", "inline"}, {"chunk_shapes", std::move(shapes)}}}};
}

json array_metadata_to_v3_json(const ArrayMetadata& m) {
  if (!m.codecs) fail_invalid("array metadata has no codec chain");
  json doc = {
      {"zarr_format", 3},
      {"node_type", "array"},
      {"shape", m.shape},
      {"data_type", dtype_to_v3_json(m.dtype)},
      {"chunk_grid", m.rectilinear_grid ? chunk_grid_to_v3_json(*m.rectilinear_grid)
                                        : json{{"name", "regular"}, {"configuration", {{"chunk_shape", m.chunk_shape}}}}},
      {"chunk_key_encoding", m.chunk_key_encoding.to_json()},
      {"fill_value", fill_value_to_v3_json(m.fill_value, m.dtype)},
      {"codecs", m.codecs->to_json()},
      {"attributes", m.attributes},
      {"storage_transformers", json::array()},
  };
  if (m.dimension_names) {
    json names = json::array();
    for (const auto& n : *m.dimension_names) names.push_back(n ? json(*n) : json(nullptr));
    doc["dimension_names"] = std::move(names);
  }
  return doc;
}

json group_metadata_to_v3_json(const GroupMetadata& g) {
  json doc = {{"zarr_format", 3}, {"node_type", "group"}, {"attributes", g.attributes}};
  if (g.consolidated) doc["consolidated_metadata"] = *g.consolidated;
  return doc;
}

}  // namespace zarrkit
