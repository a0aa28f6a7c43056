// `zarrkit migrate v3 PATH [--dry-run]`: rewrites the metadata of a Zarr v2 array or
// hierarchy as Zarr v3 (zarr.json beside the v2 documents, as zarr-python's `zarr migrate v3`
// does) where the chunks can stay as they are: the v3 array keeps the v2 chunk keys (the "v2"
// chunk key encoding with the same separator) and gets the codecs that decode the same bytes
// (transpose for F order, bytes with the v2 byte order, the filters and the compressor).
// Every node is planned first; where one cannot be expressed that way nothing is written and
// the error names it and says to use `cp`.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "zarrkit/convert.h"
#include "zarrkit/app.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/commands.h"
#include "zarrkit/error.h"
#include "zarrkit/group.h"
#include "zarrkit/location.h"
#include "zarrkit/write_options.h"
#include "zarrkit/stores/open_store.h"

namespace zarrkit::cli {
namespace {

struct MigrateOptions {
  std::string version;
  std::string location;
  bool dry_run = false;
};

// One node's new zarr.json, and where it goes.
struct PlannedDocument {
  std::string node_path;  // inside the store ("" the root)
  bool is_array = false;
  nlohmann::json document;
};

std::string shown(const std::string& path) { return path.empty() ? "/" : path; }

nlohmann::json migrated_array(const Array& source) {
  const ArrayMetadata& m = source.metadata();
  WriteOptions as_v3;
  as_v3.zarr_format = 3;
  ArraySpec spec = copy_spec(m, as_v3);
  // The chunks stay where they are: v2 keys, with the v2 separator.
  spec.chunk_key_encoding = ChunkKeyEncoding{ChunkKeyEncoding::Kind::kV2, m.chunk_key_encoding.separator};
  // The stored bytes keep their byte order: the bytes codec says it (copy_spec makes the
  // element type native, which is what a v3 data type names).
  const ArrayMetadata migrated = make_array_metadata(spec, CodecRegistry::builtin());
  return array_metadata_to_v3_json(migrated);
}

std::vector<PlannedDocument> plan(const OpenedNode& node) {
  std::vector<PlannedDocument> out;
  auto plan_array = [&](const Array& array) {
    try {
      out.push_back({array.path(), true, migrated_array(array)});
    } catch (const UnsupportedError& e) {
      fail_unsupported("array '{}' cannot keep its chunks as they are in Zarr v3 ({}); where its codecs are "
                       "the obstacle, `zarrkit cp SOURCE DEST --zarr-format 3` rewrites the chunks",
                       shown(array.path()), e.what());
    }
  };
  if (node.info.zarr_format != 2) {
    fail_invalid("{} is already Zarr v{}: nothing to migrate", node.location, node.info.zarr_format);
  }
  if (node.info.type == NodeType::kArray) {
    plan_array(Array::open(node.store, node.path));
    return out;
  }
  // The store itself, not consolidated metadata: every node as it is now.
  const Group root = Group::open(node.store, node.path, ConsolidatedUse::kIgnore);
  GroupMetadata group = root.metadata();
  group.zarr_format = 3;
  out.push_back({root.path(), false, group_metadata_to_v3_json(group)});
  for (const NodeInfo& member : root.walk()) {
    const std::string relative = member.path.substr(root.path().empty() ? 0 : root.path().size() + 1);
    if (member.type == NodeType::kGroup) {
      GroupMetadata g = root.open_group(relative).metadata();
      g.zarr_format = 3;
      g.consolidated.reset();
      out.push_back({member.path, false, group_metadata_to_v3_json(g)});
    } else {
      plan_array(root.open_array(relative));
    }
  }
  return out;
}

void run_migrate(const MigrateOptions& o) {
  if (o.version != "v3") throw UsageError(fmt::format("migrate: only \"v3\" is a target, got \"{}\"", o.version));
  const OpenedNode node = open_node(o.location);
  const std::vector<PlannedDocument> documents = plan(node);
  if (o.dry_run) {
    for (const PlannedDocument& d : documents) {
      std::cout << fmt::format("{} '{}': would write {}\n{}\n", d.is_array ? "array" : "group", shown(d.node_path),
                               join_key(d.node_path, "zarr.json"), d.document.dump(2));
    }
    std::cout << fmt::format("dry run: {} nodes, nothing written\n", documents.size());
    return;
  }
  StoreLocation target = open_location(o.location, /*for_writing=*/true);
  for (const PlannedDocument& d : documents) {
    target.store->set(join_key(d.node_path, "zarr.json"), as_bytes(d.document.dump(2)));
  }
  finish_writes(target, o.location);
  std::cout << fmt::format(
      "migrated {} nodes of {} to Zarr v3: zarr.json written beside the v2 metadata (.zarray, .zgroup, .zattrs "
      "kept; readers that find zarr.json use it), chunks unchanged\n",
      documents.size(), o.location);
}

}  // namespace

void add_migrate_command(CLI::App& app) {
  auto options = std::make_shared<MigrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "migrate", "rewrite the metadata of a Zarr v2 array or hierarchy as Zarr v3, keeping its chunks (as zarr-python's "
                 "`zarr migrate v3`)");
  cmd->add_option("version", options->version, "the Zarr version to migrate to: v3")->required();
  cmd->add_option("path", options->location, "the v2 array or group")->required();
  cmd->add_flag("--dry-run", options->dry_run, "print the zarr.json documents that would be written, write nothing");
  add_durable_flag(*cmd);
  cmd->footer("Each node gets a zarr.json beside its v2 documents; the chunks keep their keys (the \"v2\" chunk key "
              "encoding). Codecs with no v3 form that reads the same bytes stop the migration before anything is "
              "written; `zarrkit cp --zarr-format 3` rewrites such arrays. Consolidated metadata is not carried: run "
              "`zarrkit consolidate` afterwards.");
  cmd->callback([options] { run_migrate(*options); });
}

}  // namespace zarrkit::cli
