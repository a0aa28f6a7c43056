#include "zarrkit/write_options.h"

#include <charconv>

#include <CLI/CLI.hpp>

#include "zarrkit/app.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit::cli {
namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    auto comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

}  // namespace

void add_write_options(CLI::App& command, WriteOptions& o) {
  command.add_option("--zarr-format", o.zarr_format, "Zarr format of the new array: 2 or 3")
      ->check(CLI::IsMember({2, 3}));
  command.add_option("--chunks", o.chunks,
                     "chunk shape, comma-separated: 10,20 (one value: the same on every axis); an axis of chunks of "
                     "varying sizes (v3 rectilinear grid) lists them joined by '+', SIZExCOUNT repeating one: "
                     "10x2+5x2,4");
  command.add_option("--shards", o.shards,
                     "shard shape (v3 sharding_indexed), comma-separated, a multiple of the chunk shape: each "
                     "shard stores a grid of --chunks inner chunks, compressed one by one, in one key; shards of "
                     "varying sizes as for --chunks (each a multiple of the chunk shape)");
  command.add_option("--codec", o.codecs,
                     "a bytes->bytes codec NAME[:key=value,...]; repeat for a chain (v2: one compressor). "
                     "zstd:level=3, gzip:level=6, zlib:level=1, bz2:level=9, lz4, lzma[:preset=6], crc32c, "
                     "blosc:cname=lz4,clevel=5,shuffle=noshuffle|shuffle|bitshuffle, none")
      ->expected(1)
      ->take_all();
  command.add_option("--fill-value", o.fill_value, "fill value as JSON, as in the metadata: 0, \"NaN\", 1.5, true");
  command.add_option("--order", o.order, "memory order inside chunks (v2 order; v3 a transpose codec)")
      ->check(CLI::IsMember({"C", "F"}));
  command.add_option("--separator", o.separator, "chunk key separator")->check(CLI::IsMember({"/", "."}));
  command.add_option("--dimension-names", o.dimension_names,
                     "comma-separated dimension names (v2: stored as the _ARRAY_DIMENSIONS attribute)");
  command.add_flag("--overwrite", o.overwrite, "replace an existing node at the destination");
  command.add_flag("--write-empty-chunks", o.write_empty_chunks, "also store chunks that are all fill value");
  add_durable_flag(command);
}

void add_durable_flag(CLI::App& command) {
  // Set while the command line is parsed: the stores the command opens take it then.
  command
      .add_flag_callback(
          "--durable", [] { global_config().durable_writes = true; },
          "sync every file written to disk, then its directory, before the write counts as done (local "
          "directories and zip archives; S3 acknowledges only stored objects anyway)")
      ->trigger_on_parse();
}

namespace {

Shape parse_shape_option(const char* option, const std::string& text, std::size_t ndim) {
  Shape shape;
  for (const auto& part : split_commas(text)) {
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (ec != std::errc() || end != part.data() + part.size() || value == 0) {
      throw UsageError(fmt::format("{} {}: '{}' is not a positive integer", option, text, part));
    }
    shape.push_back(value);
  }
  if (shape.size() == 1 && ndim > 1) shape.assign(ndim, shape[0]);  // one value: every axis
  if (shape.size() != ndim) {
    throw UsageError(fmt::format("{} {}: {} values for an array of {} dimensions", option, text, shape.size(), ndim));
  }
  return shape;
}

std::uint64_t parse_positive(const char* option, const std::string& text, const std::string& part) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
  if (ec != std::errc() || end != part.data() + part.size() || value == 0) {
    throw UsageError(fmt::format("{} {}: '{}' is not a positive integer", option, text, part));
  }
  return value;
}

// One axis of a rectilinear --chunks: SIZE[xCOUNT] entries joined by '+'.
AxisGrid parse_rectilinear_axis_option(const char* option, const std::string& text, const std::string& axis) {
  std::vector<ChunkRun> runs;
  std::size_t start = 0;
  while (true) {
    const std::size_t plus = axis.find('+', start);
    const std::string entry = axis.substr(start, plus - start);
    const std::size_t x = entry.find('x');
    if (x == std::string::npos) {
      runs.push_back({parse_positive(option, text, entry), 1});
    } else {
      runs.push_back({parse_positive(option, text, entry.substr(0, x)), parse_positive(option, text, entry.substr(x + 1))});
    }
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  try {
    return AxisGrid::explicit_runs(runs);
  } catch (const Error& e) {
    throw UsageError(fmt::format("{} {}: {}", option, text, e.what()));
  }
}

}  // namespace

ChunkGrid parse_chunk_grid_option(const char* option, const std::string& text, std::size_t ndim) {
  std::vector<AxisGrid> axes;
  for (const auto& part : split_commas(text)) {
    if (part.find_first_of("+x") == std::string::npos) axes.push_back(AxisGrid::regular(parse_positive(option, text, part)));
    else axes.push_back(parse_rectilinear_axis_option(option, text, part));
  }
  if (axes.size() == 1 && ndim > 1 && axes[0].is_regular()) axes.assign(ndim, axes[0]);  // one value: every axis
  if (axes.size() != ndim) {
    throw UsageError(fmt::format("{} {}: {} axes for an array of {} dimensions", option, text, axes.size(), ndim));
  }
  return ChunkGrid(std::move(axes));
}

Shape parse_chunks_option(const std::string& text, std::size_t ndim) { return parse_shape_option("--chunks", text, ndim); }

Shape parse_shards_option(const std::string& text, std::size_t ndim) { return parse_shape_option("--shards", text, ndim); }

std::vector<std::optional<std::string>> parse_dimension_names_option(const std::string& text, std::size_t ndim) {
  std::vector<std::optional<std::string>> names;
  for (auto& part : split_commas(text)) names.emplace_back(std::move(part));
  if (names.size() != ndim) {
    throw UsageError(fmt::format("--dimension-names {}: {} names for an array of {} dimensions", text,
                                 names.size(), ndim));
  }
  return names;
}

nlohmann::json parse_fill_value_option(const std::string& text, const DataType& dtype, int zarr_format) {
  nlohmann::json value;
  as_usage_error("--fill-value " + text, [&] {
    try {
      value = parse_json(text);
    } catch (const nlohmann::json::exception& e) {
      fail_invalid("not JSON ({})", e.what());
    }
    if (zarr_format == 2) {
      parse_fill_value_v2(value, dtype);
    } else {
      parse_fill_value_v3(value, dtype);
    }
  });
  return value;
}

}  // namespace zarrkit::cli
