// `zarrkit info PATH [--json]`: a readable summary of an array (like h5dump -H / ncdump -h)
// or the tree of a group. --json prints the metadata documents as stored, as one JSON object
// keyed by store key relative to PATH ("zarr.json", ".zarray", "a/b/zarr.json", ...).
#include <algorithm>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "zarrkit/commands.h"
#include "zarrkit/error.h"
#include "zarrkit/format.h"
#include "zarrkit/location.h"

namespace zarrkit::cli {
namespace {

void row(std::string_view label, std::string_view value) {
  if (value.empty()) return fmt::print("  {}\n", label);  // a heading for the lines below
  fmt::print("  {:<16}{}\n", label, value);
}

// Long attribute values are cut: info is a summary; --json has everything.
std::string short_json(const nlohmann::json& value, std::size_t limit = 100) {
  std::string text = value.dump();
  if (text.size() > limit) text = text.substr(0, limit - 3) + "...";
  return text;
}

std::string fill_text(const ArrayMetadata& m) {
  if (m.fill_value.is_null()) return "null";
  return (m.zarr_format == 3 ? fill_value_to_v3_json(m.fill_value, m.dtype)
                             : fill_value_to_v2_json(m.fill_value, m.dtype))
      .dump();
}

std::string chunk_key_text(const ArrayMetadata& m) {
  const auto& e = m.chunk_key_encoding;
  return fmt::format("{}, separator \"{}\" (first chunk: {})",
                     e.kind == ChunkKeyEncoding::Kind::kDefault ? "default" : "v2", e.separator,
                     m.chunk_key(Shape(m.ndim(), 0)));
}

void print_attributes(const nlohmann::json& attributes) {
  if (attributes.empty()) return row("attributes", "(none)");
  row("attributes", "");
  for (const auto& [key, value] : attributes.items()) fmt::print("    {}: {}\n", key, short_json(value));
}

void print_array(const OpenedNode& node, const Array& array) {
  const ArrayMetadata& m = array.metadata();
  fmt::print("{}\n", node.location);
  row("node", fmt::format("array (zarr v{})", m.zarr_format));
  row("shape", format_shape(m.shape));
  const nlohmann::json v2_dtype = m.zarr_format == 2 ? dtype_to_v2_json(m.dtype) : nlohmann::json();
  row("dtype", v2_dtype.is_string() ? fmt::format("{} ({})", m.dtype.name(), v2_dtype.get<std::string>())
                                    : m.dtype.name());
  if (m.rectilinear_grid) {
    // Per axis: one size, or the sizes as runs ("10 x2, 5 x2"), as the metadata lists them.
    std::vector<std::string> axes;
    for (const AxisGrid& axis : m.rectilinear_grid->axes()) {
      if (axis.is_regular()) {
        axes.push_back(fmt::format("{}", axis.regular_size()));
        continue;
      }
      std::vector<std::string> runs;
      for (const ChunkRun& run : axis.runs()) {
        runs.push_back(run.count == 1 ? fmt::format("{}", run.size) : fmt::format("{} x{}", run.size, run.count));
      }
      axes.push_back(fmt::format("[{}]", fmt::join(runs, ", ")));
    }
    row("chunks", fmt::format("rectilinear ({}), largest {}", fmt::join(axes, ", "), format_shape(m.chunk_shape)));
  } else {
    row("chunks", format_shape(m.chunk_shape));
  }
  if (const Shape* inner = m.codecs->array_to_bytes()->inner_chunk_shape()) {
    row("inner chunks", fmt::format("{} (each chunk above is a shard)", format_shape(*inner)));
  }
  row("grid", fmt::format("{} = {} chunks", format_shape(m.chunk_grid_shape()), m.num_chunks()));
  row("fill value", fill_text(m));
  if (m.zarr_format == 2) row("order", std::string(1, m.v2_order));
  row("chunk keys", chunk_key_text(m));
  row("codecs", "");
  auto print_codec = [](const Codec& c) {
    const auto j = c.to_json();
    fmt::print("    {:<15} {}\n", c.name(), j.contains("configuration") ? j["configuration"].dump() : "{}");
  };
  for (const auto& c : m.codecs->array_to_array()) print_codec(*c);
  print_codec(*m.codecs->array_to_bytes());
  for (const auto& c : m.codecs->bytes_to_bytes()) print_codec(*c);
  if (m.dimension_names) {
    std::string names;
    for (const auto& n : *m.dimension_names) names += fmt::format("{}{}", names.empty() ? "" : ", ", n.value_or("-"));
    row("dimension names", "(" + names + ")");
  }
  print_attributes(m.attributes);
  if (!node.store->capabilities().listable) {
    return row("stored chunks", "(not counted: the store cannot list its keys)");
  }
  const StorageInfo s = array.storage_info();
  row("stored chunks", fmt::format("{} of {}", s.chunks_stored, s.chunks_total));
  row("stored bytes", fmt::format("{} ({} bytes)", format_bytes(s.bytes_stored), s.bytes_stored));
  if (m.dtype.is_variable_length()) return row("logical bytes", "(variable-length elements)");
  row("logical bytes", fmt::format("{} ({} bytes)", format_bytes(s.bytes_logical), s.bytes_logical));
  row("ratio", s.bytes_stored ? fmt::format("{:.2f}", static_cast<double>(s.bytes_logical) /
                                                          static_cast<double>(s.bytes_stored))
                              : "-");
}

std::string relative_path(const std::string& path, const std::string& base) {
  if (base.empty()) return path;
  return path.size() > base.size() ? path.substr(base.size() + 1) : std::string();
}

// The members as an indented tree; returns how many could not be opened.
std::size_t print_group(const OpenedNode& node) {
  Group group = Group::open(node.store, node.path);
  fmt::print("{}\n", node.location);
  row("node", fmt::format("group (zarr v{})", group.zarr_format()));
  print_attributes(group.attributes());
  if (!node.store->capabilities().listable) {
    row("members", "(not shown: the store cannot list its keys; name an array inside the group)");
    return 0;
  }
  const auto members = group.walk();
  const auto arrays = std::count_if(members.begin(), members.end(), [](const NodeInfo& n) { return n.type == NodeType::kArray; });
  row("members", fmt::format("{} arrays, {} groups", arrays, members.size() - static_cast<std::size_t>(arrays)));
  std::size_t failures = 0;
  for (const auto& member : members) {
    const std::string rel = relative_path(member.path, node.path);
    const auto depth = static_cast<std::size_t>(std::count(rel.begin(), rel.end(), '/'));
    const std::string name = std::string(2 * depth, ' ') + member.name + (member.type == NodeType::kGroup ? "/" : "");
    if (member.type == NodeType::kGroup) {
      fmt::print("    {}\n", name);
      continue;
    }
    try {
      Array a = Array::open(node.store, member.path);
      fmt::print("    {:<24} {} {}  chunks {}  v{}\n", name, format_shape(a.shape()), a.dtype().name(),
                 format_shape(a.metadata().chunk_shape), a.metadata().zarr_format);
    } catch (const Error& e) {
      fmt::print("    {:<24} (cannot open: {})\n", name, e.what());
      ++failures;
    }
  }
  return failures;
}

// The metadata documents of one node, keyed by `prefix` + key.
void collect_documents(Store& store, const std::string& path, const std::string& prefix, nlohmann::json& out) {
  for (const char* key : {"zarr.json", ".zarray", ".zgroup", ".zattrs"}) {
    auto value = store.get(join_key(path, key));
    if (!value) continue;
    try {
      out[prefix + key] = parse_json(as_chars(value->view()));
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("metadata {}", join_key(path, key)));
    }
  }
}

void print_json(const OpenedNode& node) {
  nlohmann::json documents = nlohmann::json::object();
  collect_documents(*node.store, node.path, "", documents);
  if (node.info.type == NodeType::kGroup) {
    for (const auto& member : Group::open(node.store, node.path).walk()) {
      collect_documents(*node.store, member.path, relative_path(member.path, node.path) + "/", documents);
    }
  }
  fmt::print("{}\n", dump_json(documents));
}

void run_info(const std::string& location, bool json) {
  OpenedNode node = open_node(location);
  try {
    if (json) return print_json(node);
    if (node.info.type == NodeType::kArray) return print_array(node, Array::open(node.store, node.path));
    if (std::size_t failures = print_group(node)) fail_data_loss("{} members could not be opened", failures);
  } catch (const Error& e) {
    rethrow_with_context(e, location);
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  struct Options {
    std::string location;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("info", "summary of an array, or the tree of a group");
  cmd->add_option("path", options->location, "array or group (directory or file:// URL)")->required();
  cmd->add_flag("--json", options->json, "print the metadata documents, keyed by store key");
  cmd->callback([options] { run_info(options->location, options->json); });
}

}  // namespace zarrkit::cli
