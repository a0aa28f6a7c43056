#include "demo/report.h"

#include <algorithm>

#include <fmt/format.h>

namespace zarrkit::demo {

std::string format_bytes(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= (std::uint64_t{1} << 30)) return fmt::format("{:.2f} GiB", b / (1u << 30));
  if (bytes >= (std::uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", b / (1u << 20));
  if (bytes >= (std::uint64_t{1} << 10)) return fmt::format("{:.1f} KiB", b / (1u << 10));
  return fmt::format("{} B", bytes);
}

std::string times_text(double factor) {
  return factor >= 10 ? fmt::format("{:.0f}x", factor) : fmt::format("{:.1f}x", factor);
}

std::string format_seconds(double seconds) {
  if (seconds >= 10) return fmt::format("{:.1f} s", seconds);
  if (seconds >= 1) return fmt::format("{:.2f} s", seconds);
  if (seconds >= 1e-3) return fmt::format("{:.1f} ms", seconds * 1e3);
  return fmt::format("{:.0f} us", seconds * 1e6);
}

void print_grid(const std::vector<std::vector<std::string>>& rows, std::FILE* out,
                const std::string& separator) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::string line = "  ";
    for (std::size_t i = 0; i < rows[r].size(); ++i) {
      if (i > 0) line += separator;
      line += i + 1 == rows[r].size() ? rows[r][i] : fmt::format("{:<{}}", rows[r][i], widths[i]);
    }
    fmt::print(out, "{}\n", line);
    if (r == 0) {
      std::size_t total = 0;
      for (std::size_t w : widths) total += w;
      fmt::print(out, "  {}\n", std::string(total + separator.size() * (widths.size() - 1), '-'));
    }
  }
}

std::uint64_t chunk_bytes_touched(const AccessPattern& pattern, const Shape3& chunks) {
  const std::uint64_t chunk_bytes = chunks[0] * chunks[1] * chunks[2] * sizeof(float);
  std::uint64_t total = 0;
  for (const Box& box : pattern.boxes) {
    std::uint64_t n = 1;
    for (int a = 0; a < 3; ++a) {
      const std::uint64_t first = box.start[a] / chunks[a];
      const std::uint64_t last = (box.start[a] + box.count[a] - 1) / chunks[a];
      n *= last - first + 1;
    }
    total += n * chunk_bytes;
  }
  return total;
}

namespace {

constexpr int kLabelWidth = 24;
constexpr int kSizeWidth = 11;
constexpr int kCellWidth = 22;

double gbps(std::uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
}

std::string cell(double seconds, std::uint64_t bytes) {
  return fmt::format("{:<11}{:>7.2f} GB/s", format_seconds(seconds), gbps(bytes, seconds));
}

}  // namespace

void print_table(const Report& report, std::FILE* out) {
  std::string line = fmt::format("{:<{}}{:>{}}{:>{}}", "", kLabelWidth, "logical", kSizeWidth,
                                 "zarr decodes", kSizeWidth + 3);
  std::string underline(line.size(), ' ');
  for (const FormatColumn& c : report.columns) line += fmt::format(" | {:<{}}", c.name, kCellWidth);
  fmt::print(out, "{}\n", line);

  line = fmt::format("{:<{}}{:>{}}{:>{}}", "bytes on disk", kLabelWidth,
                     format_bytes(report.logical_bytes), kSizeWidth, "", kSizeWidth + 3);
  for (const FormatColumn& c : report.columns) {
    const double ratio = static_cast<double>(report.logical_bytes) /
                         static_cast<double>(std::max<std::uint64_t>(c.bytes_on_disk, 1));
    line += fmt::format(" | {:<{}}", fmt::format("{} ({:.2f}x)", format_bytes(c.bytes_on_disk), ratio),
                        kCellWidth);
  }
  fmt::print(out, "{}\n", line);

  line = fmt::format("{:<{}}{:>{}}{:>{}}", "write (1 run)", kLabelWidth,
                     format_bytes(report.logical_bytes), kSizeWidth, "", kSizeWidth + 3);
  for (const FormatColumn& c : report.columns)
    line += fmt::format(" | {:<{}}", cell(c.write_s, report.logical_bytes), kCellWidth);
  fmt::print(out, "{}\n", line);

  for (const PatternRow& row : report.rows) {
    const std::uint64_t logical = row.pattern->logical_bytes();
    line = fmt::format("{:<{}}{:>{}}{:>{}}", row.pattern->label, kLabelWidth, format_bytes(logical),
                       kSizeWidth, format_bytes(row.chunk_bytes_decoded), kSizeWidth + 3);
    for (const Timing& t : row.timings) line += fmt::format(" | {:<{}}", cell(t.median_s, logical), kCellWidth);
    fmt::print(out, "{}\n", line);
  }
}

std::string guidance(const Report& report) {
  // For each pattern: the fastest format, and by how much it beats the best of the others.
  std::vector<std::vector<std::string>> wins(report.columns.size());
  double min_amplification = 0, max_amplification = 0;
  for (const PatternRow& row : report.rows) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < row.timings.size(); ++i)
      if (row.timings[i].median_s < row.timings[best].median_s) best = i;
    double runner_up = 0;
    for (std::size_t i = 0; i < row.timings.size(); ++i)
      if (i != best && (runner_up == 0 || row.timings[i].median_s < runner_up)) runner_up = row.timings[i].median_s;
    const double factor = runner_up / std::max(row.timings[best].median_s, 1e-12);
    wins[best].push_back(factor >= 10 ? fmt::format("{} ({:.0f}x)", row.pattern->short_label, factor)
                                      : fmt::format("{} ({:.1f}x)", row.pattern->short_label, factor));
    if (!report.columns[best].is_zarr) {
      const double amplification = static_cast<double>(row.chunk_bytes_decoded) /
                                   static_cast<double>(std::max<std::uint64_t>(row.pattern->logical_bytes(), 1));
      if (amplification >= 1.5) {
        min_amplification = min_amplification == 0 ? amplification : std::min(min_amplification, amplification);
        max_amplification = std::max(max_amplification, amplification);
      }
    }
  }

  std::string text = "guidance:";
  const char* separator = " ";
  for (std::size_t i = 0; i < report.columns.size(); ++i) {
    if (wins[i].empty()) continue;
    std::string list;
    for (std::size_t k = 0; k < wins[i].size(); ++k) list += (k ? ", " : "") + wins[i][k];
    text += fmt::format("{}{} wins on {}", separator, report.columns[i].name, list);
    separator = "; ";
  }
  text += ".\n";

  if (max_amplification > 0) {
    text += fmt::format(
        "  Where memmap wins: with a warm page cache it copies only the bytes asked for, while zarr "
        "decodes whole\n  chunks ({:.0f}x to {:.0f}x the bytes asked for here;\n  chunks shaped like the reads narrow the gap: section 2).\n",
        min_amplification, max_amplification);
  }
  // Disk: the one thing the raw file cannot win on (it stores every byte).
  std::string disk;
  for (const FormatColumn& c : report.columns) {
    if (!c.is_zarr) continue;
    const double saved = 1.0 - static_cast<double>(c.bytes_on_disk) / static_cast<double>(report.logical_bytes);
    disk += fmt::format("{}{:.0f}% ({})", disk.empty() ? "" : ", ", 100.0 * saved, c.name);
  }
  text += fmt::format(
      "  Zarr stores {} fewer bytes than the raw file: that pays when storage or network bandwidth, not\n"
      "  memory, is the limit (cold reads and data that compresses: sections 3 and 4).",
      disk);
  return text;
}

}  // namespace zarrkit::demo
