// The options `import` and `cp` share: how the new array is laid out and encoded.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrkit/chunk_grid.h"
#include "zarrkit/dtype.h"
#include "zarrkit/ndbuffer.h"

namespace CLI {
class App;
}

namespace zarrkit::cli {

struct WriteOptions {
  int zarr_format = 0;            // 0: not given (import: 3; cp: the source's)
  std::string chunks;             // "10,20", or "10" for every axis, or "10x2+5,4" (rectilinear); empty: not given
  std::string shards;             // v3 shard shape, like chunks; --chunks is then the inner chunk shape
  std::vector<std::string> codecs;  // --codec, in order
  std::string fill_value;         // JSON; empty: not given
  std::string order;              // "C" / "F"; empty: not given
  std::string separator;          // "/" / "."; empty: not given
  std::string dimension_names;    // "x,y"; empty: not given
  bool overwrite = false;
  bool write_empty_chunks = false;
};

void add_write_options(CLI::App& command, WriteOptions& options);  // --durable included
// --durable, for every command that writes: local writes are synced (Config::durable_writes).
void add_durable_flag(CLI::App& command);

// The parsed forms; each throws UsageError naming the option.
Shape parse_chunks_option(const std::string& text, std::size_t ndim);
Shape parse_shards_option(const std::string& text, std::size_t ndim);
// --chunks or --shards as a chunk grid: per axis (comma-separated) one size, a regular axis,
// or the sizes of its chunks joined by '+', each SIZE or SIZExCOUNT for COUNT chunks of SIZE,
// a rectilinear axis: "10x2+5x2,4" is rows in chunks of 10, 10, 5, 5 and columns in 4s.
ChunkGrid parse_chunk_grid_option(const char* option, const std::string& text, std::size_t ndim);
std::vector<std::optional<std::string>> parse_dimension_names_option(const std::string& text, std::size_t ndim);
// The --fill-value JSON, checked against the data type in the target format.
nlohmann::json parse_fill_value_option(const std::string& text, const DataType& dtype, int zarr_format);

}  // namespace zarrkit::cli
