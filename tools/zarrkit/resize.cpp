// `zarrkit resize ARRAY SHAPE` and `zarrkit append ARRAY IN.npy [--axis N]`: change an
// array's shape in place, like zarr-python's Array.resize and Array.append.
#include <charconv>
#include <memory>
#include <utility>

#include <CLI/CLI.hpp>
#include <fmt/ranges.h>

#include "zarrkit/app.h"
#include "zarrkit/array.h"
#include "zarrkit/commands.h"
#include "zarrkit/write_options.h"
#include "zarrkit/error.h"
#include "zarrkit/location.h"
#include "zarrkit/npy.h"
#include "zarrkit/stores/open_store.h"

namespace zarrkit::cli {
namespace {

struct ResizeOptions {
  std::string array;
  std::string shape;
};

struct AppendOptions {
  std::string array;
  std::string input;
  std::size_t axis = 0;
};

// "10,20,30": non-negative integers, comma-separated ("" is the 0-d shape).
Shape parse_shape(const std::string& text) {
  Shape shape;
  std::string_view rest = text;
  if (rest.find_first_not_of(" \t") == std::string_view::npos) return shape;
  while (true) {
    const auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size()) {
      fail_invalid("\"{}\" is not a shape: \"{}\" is not a non-negative integer", text, item);
    }
    shape.push_back(n);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return shape;
}

// The array at `location`, opened for writing (it must exist), and where it is.
std::pair<Array, StoreLocation> open_array_for_writing(const std::string& location) {
  open_array(location);  // NotFoundError / "is a group" before anything is created
  StoreLocation where = open_location(location, /*for_writing=*/true);
  try {
    return {Array::open(where.store, where.path), where};
  } catch (const Error& e) {
    rethrow_with_context(e, location);
  }
}

void run_resize(const ResizeOptions& o) {
  Shape shape;
  as_usage_error("shape " + o.shape, [&] { shape = parse_shape(o.shape); });
  auto [array, where] = open_array_for_writing(o.array);
  if (shape.size() != array.ndim()) {
    throw UsageError(fmt::format("shape {}: the array {} has {} axes, the shape has {}", o.shape, o.array,
                                 array.ndim(), shape.size()));
  }
  array.resize(shape);
  finish_writes(where, o.array);
}

void run_append(const AppendOptions& o) {
  auto [array, where] = open_array_for_writing(o.array);
  NpyReader reader(o.input);
  if (!(reader.dtype() == array.dtype())) {
    fail_invalid("{} holds {}, the array {} holds {}", o.input, reader.dtype().name(), o.array, array.dtype().name());
  }
  if (o.axis >= array.ndim()) {
    throw UsageError(fmt::format("--axis {}: the array {} has {} axes", o.axis, o.array, array.ndim()));
  }
  // The data is read whole: appends are usually small next to the array.
  const NDBuffer data = reader.read_all();
  array.append(data.view(), o.axis);
  finish_writes(where, o.array);
}

}  // namespace

void add_resize_command(CLI::App& app) {
  auto resize = std::make_shared<ResizeOptions>();
  CLI::App* cmd = app.add_subcommand("resize", "change an array's shape in place");
  cmd->add_option("array", resize->array, "the array")->required();
  cmd->add_option("shape", resize->shape, "the new shape, comma-separated: 100,20")->required();
  add_durable_flag(*cmd);
  cmd->footer("Chunks wholly outside the new shape are deleted; elements beyond the old shape read as the "
              "fill value. The metadata is rewritten last.");
  cmd->callback([resize] { run_resize(*resize); });

  auto append = std::make_shared<AppendOptions>();
  CLI::App* add = app.add_subcommand("append", "append a NumPy .npy file to an array along an axis");
  add->add_option("array", append->array, "the array")->required();
  add->add_option("input", append->input, "the .npy file: the array's shape on every other axis, same dtype")
      ->required();
  add->add_option("--axis", append->axis, "the axis to grow (default 0)");
  add_durable_flag(*add);
  add->callback([append] { run_append(*append); });
}

}  // namespace zarrkit::cli
