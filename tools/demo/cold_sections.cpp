// Section 3 (sections.h): cold reads by access pattern.
#include <fmt/format.h>

#include "demo/sections.h"

namespace zarrkit::demo {

namespace {

std::string cold_cell(const Timing& t) {
  if (!t.disk_bytes) return format_seconds(t.median_s);
  return fmt::format("{}, {}", format_seconds(t.median_s), format_bytes(*t.disk_bytes));
}

}  // namespace

std::string cold_method_text(const TimingOptions& cold) {
  return fmt::format(
      "before every run, each file of the store is fsynced and dropped from the page cache\n"
      "  (posix_fadvise POSIX_FADV_DONTNEED); median of up to {} run{} (fewer once they add up to {:.1f} s);\n"
      "  cells: time, then the bytes that run read from disk (/proc/self/io read_bytes)",
      cold.max_runs, cold.max_runs == 1 ? "" : "s", cold.budget_s);
}

std::string cache_drop_note(double worst_resident) {
  if (worst_resident > 0.05) {
    return fmt::format("  NOTE: the page cache could not be emptied here: up to {:.0f}% of the pages stayed cached after\n"
                       "  a drop, so these reads are partly warm.\n",
                       100 * worst_resident);
  }
  return fmt::format("  (after every drop at most {:.1f}% of the files' pages were still cached, checked with mincore)\n",
                     100 * worst_resident);
}

void section_cold_patterns(const DemoSetup& setup, const NoisyStores& stores, const SampleField& field,
                           Summary& summary) {
  std::FILE* out = setup.out;
  fmt::print(out, "\n3. Cold reads by pattern (noisy data)\n  {}\n\n", cold_method_text(setup.cold));
  std::fflush(out);
  std::vector<std::vector<std::string>> grid;
  grid.push_back({"pattern", "layout shaped for it", "memmap+copy", "zarr v3", "shaped layout"});
  double worst_resident = 0;
  for (const AccessPattern& pattern : setup.patterns) {
    Format* shaped = stores.shaped_for(pattern);
    if (shaped == nullptr) continue;  // read all: section 4
    Contest contest;
    contest.label = pattern.short_label;
    contest.setting = Setting::kCold;
    contest.asked_bytes = pattern.logical_bytes();
    contest.logical_bytes = field.nbytes();
    contest.memmap_piece_bytes = contiguous_piece_bytes(pattern.boxes.front(), setup.shape);
    std::vector<std::string> line = {pattern.label, shaped->name()};
    for (Format* f : {stores.raw, stores.v3, shaped}) {
      fmt::print(stderr, "timing {:<22} {} (cold)\n", pattern.label, f->name());
      const Timing timing = time_pattern(*f, pattern, field, setup.cold);
      worst_resident = std::max(worst_resident, timing.resident_fraction);
      contest.contenders.push_back(contender_for(*f, pattern, timing));
      line.push_back(cold_cell(timing));
    }
    grid.push_back(std::move(line));
    summary.add(std::move(contest));
  }
  print_grid(grid, out);
  fmt::print(out, "{}", cache_drop_note(worst_resident));
}

}  // namespace zarrkit::demo
