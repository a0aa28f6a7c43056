// Sections 1 and 2 (sections.h): warm reads by access pattern.
#include <fmt/format.h>

#include "demo/sections.h"

namespace zarrkit::demo {

Format* NoisyStores::shaped_for(const AccessPattern& pattern) const {
  if (pattern.kind == PatternKind::kPlanes) return shaped.at(static_cast<std::size_t>(pattern.axis));
  if (pattern.kind == PatternKind::kCrops) return shaped.at(3);
  return nullptr;
}

namespace {

std::string timing_text(const TimingOptions& options) {
  return fmt::format("median of up to {} run{} after a warm-up run (fewer once they add up to {:.1f} s)",
                     options.max_runs, options.max_runs == 1 ? "" : "s", options.budget_s);
}

}  // namespace

Report section_one_chunk_shape(const DemoSetup& setup, const NoisyStores& stores, const SampleField& field) {
  std::FILE* out = setup.out;
  const std::vector<Format*> formats = {stores.v3, stores.v2, stores.raw};
  fmt::print(out, "\n1. One chunk shape for every pattern ({}x{}x{}), noisy data, warm page cache\n", setup.chunks[0],
             setup.chunks[1], setup.chunks[2]);
  for (const Format* f : formats) fmt::print(out, "  {:<12} {}\n", f->name(), f->detail());
  fmt::print(out, "  times: {};\n  the files were just written and are in the page cache, so this measures decoding and\n"
                  "  copying, not the disk.\n\n",
             timing_text(setup.warm));
  std::fflush(out);

  Report report;
  report.logical_bytes = field.nbytes();
  for (const Format* f : formats) report.columns.push_back({f->name(), f->detail(), f->is_zarr(), f->bytes_on_disk(), f->write_seconds()});
  for (const AccessPattern& pattern : setup.patterns) {
    PatternRow row;
    row.pattern = &pattern;
    row.chunk_bytes_decoded = chunk_bytes_touched(pattern, setup.chunks);
    for (Format* f : formats) {
      fmt::print(stderr, "timing {:<22} {}\n", pattern.label, f->name());
      row.timings.push_back(time_pattern(*f, pattern, field, setup.warm));
    }
    report.rows.push_back(std::move(row));
  }
  print_table(report, out);
  fmt::print(out, "  (time = median per repetition of the whole pattern; GB/s = logical bytes read / time;\n"
                  "   'zarr decodes' = bytes of the chunks the pattern touches)\n\n");
  fmt::print(out, "{}\n", guidance(report));
  return report;
}

void section_shaped_chunks(const DemoSetup& setup, const NoisyStores& stores, const Report& one_shape,
                           const SampleField& field, Summary& summary) {
  std::FILE* out = setup.out;
  fmt::print(out, "\n2. Chunks shaped for each pattern (noisy data, warm page cache; times as in 1)\n");
  for (const Format* f : stores.shaped) {
    fmt::print(out, "  {:<15} {} ({} files)\n", f->name(), f->detail(), f->file_count());
  }
  fmt::print(out, "\n");
  std::fflush(out);

  std::vector<std::vector<std::string>> grid;
  grid.push_back({"pattern", "layout shaped for it", "it decodes", "memmap+copy", "zarr v3", "zarr v2", "shaped layout"});
  for (std::size_t i = 0; i < setup.patterns.size(); ++i) {
    const AccessPattern& pattern = setup.patterns[i];
    const PatternRow& row = one_shape.rows.at(i);
    Contest contest;
    contest.label = pattern.kind == PatternKind::kAll ? "read all, noisy" : pattern.short_label;
    contest.asked_bytes = pattern.logical_bytes();
    contest.logical_bytes = field.nbytes();
    contest.memmap_piece_bytes = contiguous_piece_bytes(pattern.boxes.front(), setup.shape);
    contest.contenders = {contender_for(*stores.raw, pattern, row.timings[2]),
                          contender_for(*stores.v3, pattern, row.timings[0]),
                          contender_for(*stores.v2, pattern, row.timings[1])};
    if (Format* shaped = stores.shaped_for(pattern)) {
      fmt::print(stderr, "timing {:<22} {}\n", pattern.label, shaped->name());
      const Timing timing = time_pattern(*shaped, pattern, field, setup.warm);
      contest.contenders.push_back(contender_for(*shaped, pattern, timing));
      grid.push_back({pattern.label, shaped->name(), format_bytes(contest.contenders.back().decoded_bytes),
                      format_seconds(row.timings[2].median_s), format_seconds(row.timings[0].median_s),
                      format_seconds(row.timings[1].median_s), format_seconds(timing.median_s)});
    }
    summary.add(std::move(contest));
  }
  print_grid(grid, out);

  // What each layout costs on the patterns it was not shaped for: computed, not timed.
  fmt::print(out, "\n  bytes each layout decodes per pattern, as a multiple of the bytes asked for (from the chunk shapes):\n");
  std::vector<std::vector<std::string>> amplification;
  amplification.push_back({"layout"});
  for (const AccessPattern& p : setup.patterns) amplification[0].push_back(p.short_label);
  std::vector<const Format*> layouts = {stores.v3};
  layouts.insert(layouts.end(), stores.shaped.begin(), stores.shaped.end());
  for (const Format* f : layouts) {
    const Shape3 decoded = *f->decoded_chunk_shape();
    std::vector<std::string> line = {fmt::format("{} ({}x{}x{})", f->name(), decoded[0], decoded[1], decoded[2])};
    for (const AccessPattern& p : setup.patterns) {
      const double factor = static_cast<double>(chunk_bytes_touched(p, decoded)) /
                            static_cast<double>(std::max<std::uint64_t>(p.logical_bytes(), 1));
      line.push_back(times_text(factor));
    }
    amplification.push_back(std::move(line));
  }
  print_grid(amplification, out);
  fmt::print(out, "  A plane layout decodes just the bytes asked for along its axis, and the whole array once per\n"
                  "  plane across it; the shards' small inner chunks keep crops cheap and the files few.\n");
}

}  // namespace zarrkit::demo
