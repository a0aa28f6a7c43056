// `zarrkit consolidate GROUP`: stores the metadata of every node below a group in one
// document, as zarr-python's consolidate_metadata does (v3: inline in the group's zarr.json;
// v2: .zmetadata), so that readers open the whole hierarchy with one get.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "zarrkit/commands.h"
#include "zarrkit/write_options.h"
#include "zarrkit/error.h"
#include "zarrkit/location.h"
#include "zarrkit/stores/open_store.h"

namespace zarrkit::cli {
namespace {

void run_consolidate(const std::string& location) {
  // Opened read-only first: a missing path must not be created by opening it for writing.
  const OpenedNode node = open_node(location);
  if (node.info.type != NodeType::kGroup) {
    fail_invalid("consolidate: {} is an array; consolidated metadata belongs to a group", location);
  }
  StoreLocation target = open_location(location, /*for_writing=*/true);
  const Group group = consolidate_metadata(target.store, target.path);
  finish_writes(target, location);
  std::cout << fmt::format("consolidated the metadata of {} nodes below {} into {}\n", group.walk().size(), location,
                           group.zarr_format() == 3 ? "zarr.json" : ".zmetadata");
}

}  // namespace

void add_consolidate_command(CLI::App& app) {
  auto location = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "consolidate", "store the metadata of every node below a group in one document (zarr-python's consolidated "
                     "metadata), so that the hierarchy opens with one read");
  cmd->add_option("group", *location, "the group")->required();
  add_durable_flag(*cmd);
  cmd->footer("v3: inline in the group's zarr.json (\"consolidated_metadata\"); v2: .zmetadata. Run it again after "
              "changing the hierarchy: readers that use it do not see later changes.");
  cmd->callback([location] { run_consolidate(*location); });
}

}  // namespace zarrkit::cli
