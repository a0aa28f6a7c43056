// `zarrkit export ARRAY OUT.npy [--select EXPR]`: the selection as a NumPy .npy file, in
// native byte order. The selection is read into memory whole.
#include <memory>

#include <CLI/CLI.hpp>

#include "zarrkit/app.h"
#include "zarrkit/commands.h"
#include "zarrkit/error.h"
#include "zarrkit/location.h"
#include "zarrkit/npy.h"

namespace zarrkit::cli {
namespace {

struct ExportOptions {
  std::string array;
  std::string output;
  std::string select;
};

void run_export(const ExportOptions& o) {
  Selection selection;
  if (!o.select.empty()) {
    as_usage_error("--select " + o.select, [&] { selection = parse_selection(o.select); });
  }
  Array array = open_array(o.array);
  if (array.dtype().is_variable_length()) {
    fail_unsupported("export: {} holds variable-length {} elements, which a .npy file cannot hold without "
                     "pickled objects; export supports fixed-size types only",
                     o.array, array.dtype().name());
  }
  // Out-of-range indices and zero steps are the user's mistake too: check before reading.
  as_usage_error("--select " + o.select, [&] { array.selection_shape(selection); });
  // Read errors already name the store, the array and the chunk key.
  write_npy(o.output, array.read(selection));
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand("export", "write an array, or a selection of it, as a NumPy .npy file");
  cmd->add_option("array", options->array, "the array")->required();
  cmd->add_option("output", options->output, "the .npy file to write")->required();
  cmd->add_option("--select", options->select,
                  "NumPy index expression per axis: 3, 0:10, ::-2, ..., -1, and integer or boolean "
                  "lists ([1,5,9], [True,False]), each list selecting along its own axis");
  cmd->callback([options] { run_export(*options); });
}

}  // namespace zarrkit::cli
