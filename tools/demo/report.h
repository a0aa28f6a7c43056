// The demo's first results table (one chunk shape for every pattern) and its guidance, and
// what the other tables share.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "demo/access_patterns.h"
#include "demo/measure.h"

namespace zarrkit::demo {

struct FormatColumn {
  std::string name;    // "zarr v3"
  std::string detail;  // "bytes + zstd level 1, chunks 64x128x128"
  bool is_zarr = true;
  std::uint64_t bytes_on_disk = 0;
  double write_s = 0;
};

struct PatternRow {
  const AccessPattern* pattern = nullptr;
  std::uint64_t chunk_bytes_decoded = 0;  // bytes of every chunk the pattern touches
  std::vector<Timing> timings;            // one per column
};

struct Report {
  std::uint64_t logical_bytes = 0;  // the whole array
  std::vector<FormatColumn> columns;
  std::vector<PatternRow> rows;
};

// Bytes of all chunks (of `chunks` shape, float32) that the boxes of `pattern` touch.
std::uint64_t chunk_bytes_touched(const AccessPattern& pattern, const Shape3& chunks);

void print_table(const Report& report, std::FILE* out);
// Which format wins where, from the measured numbers; honest about memmap's wins.
std::string guidance(const Report& report);

// Rows of cells in left-aligned columns as wide as their widest cell, `separator` between
// them; the first row is the header, underlined.
void print_grid(const std::vector<std::vector<std::string>>& rows, std::FILE* out,
                const std::string& separator = " | ");

std::string format_bytes(std::uint64_t bytes);
// A factor: "3.2x", "170x".
std::string times_text(double factor);
std::string format_seconds(double seconds);

}  // namespace zarrkit::demo
