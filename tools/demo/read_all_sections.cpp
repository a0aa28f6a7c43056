// Sections 4 and 5 (sections.h): the whole array, noisy against quantised, from disk and
// into GPU memory.
#include <fmt/format.h>

#include "demo/gpu_read.h"
#include "demo/sections.h"

namespace zarrkit::demo {

namespace {

std::uint64_t chunk_count(const Shape3& shape, const Shape3& chunks) {
  std::uint64_t n = 1;
  for (int a = 0; a < 3; ++a) n *= (shape[a] + chunks[a] - 1) / chunks[a];
  return n;
}

Contest read_all_contest(const FieldResults& field, Setting setting) {
  Contest contest;
  contest.label = "read all, " + field.field;
  contest.setting = setting;
  contest.asked_bytes = field.logical_bytes;
  contest.logical_bytes = field.logical_bytes;
  contest.memmap_piece_bytes = field.logical_bytes;
  for (const ReadAllResult& r : field.stores) {
    Contender c;
    c.name = r.name;
    c.role = r.role;
    c.timing = setting == Setting::kWarm ? r.warm : setting == Setting::kCold ? r.cold : r.gpu;
    c.stored_bytes = r.stored_bytes;
    c.decoded_bytes = r.role == LayoutRole::kRaw ? 0 : field.logical_bytes;
    c.chunks = r.chunks;
    c.gpu_decoded_chunks = r.gpu_decoded_chunks;
    contest.contenders.push_back(std::move(c));
  }
  return contest;
}

std::string rate(std::uint64_t bytes, double seconds) {
  return fmt::format("{:.2f} GB/s", seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0);
}

}  // namespace

FieldResults measure_read_all(const DemoSetup& setup, const std::vector<Format*>& stores, const SampleField& field,
                              const std::vector<Timing>& known_warm, const std::string& gpu_skipped) {
  FieldResults results;
  results.field = field.name();
  results.description = field.description();
  results.logical_bytes = field.nbytes();
  const AccessPattern& all = setup.patterns.front();
  for (std::size_t i = 0; i < stores.size(); ++i) {
    Format& f = *stores[i];
    ReadAllResult r;
    r.name = f.name();
    r.role = f.role();
    r.stored_bytes = f.bytes_on_disk();
    if (auto chunks = f.decoded_chunk_shape()) r.chunks = chunk_count(field.shape(), *chunks);
    fmt::print(stderr, "timing read all ({}) {}\n", results.field, r.name);
    r.warm = i < known_warm.size() ? known_warm[i] : time_pattern(f, all, field, setup.warm);
    r.cold = time_pattern(f, all, field, setup.cold);
    if (gpu_skipped.empty()) {
      const GpuReadAll gpu = time_read_all_into_gpu(f, field, setup.warm);
      r.gpu = gpu.timing;
      r.gpu_decoded_chunks = gpu.gpu_decoded_chunks;
    }
    results.stores.push_back(std::move(r));
  }
  return results;
}

void section_compression(const DemoSetup& setup, const std::vector<FieldResults>& fields, Summary& summary) {
  std::FILE* out = setup.out;
  fmt::print(out, "\n4. Data that compresses: the whole array, warm and cold\n");
  for (const FieldResults& f : fields) fmt::print(out, "  {:<10} {}\n", f.field, f.description);
  fmt::print(out, "  cold: {}\n\n", cold_method_text(setup.cold));
  std::vector<std::vector<std::string>> grid;
  grid.push_back({"data", "store", "on disk", "warm read", "cold read", "from disk", "disk rate"});
  double worst_resident = 0;
  for (const FieldResults& f : fields) {
    for (const ReadAllResult& r : f.stores) {
      worst_resident = std::max(worst_resident, r.cold.resident_fraction);
      const double ratio = static_cast<double>(f.logical_bytes) / static_cast<double>(std::max<std::uint64_t>(r.stored_bytes, 1));
      grid.push_back({f.field, r.name, fmt::format("{} ({:.2f}x)", format_bytes(r.stored_bytes), ratio),
                      fmt::format("{} {}", format_seconds(r.warm.median_s), rate(f.logical_bytes, r.warm.median_s)),
                      fmt::format("{} {}", format_seconds(r.cold.median_s), rate(f.logical_bytes, r.cold.median_s)),
                      r.cold.disk_bytes ? format_bytes(*r.cold.disk_bytes) : "n/a",
                      r.cold.disk_bytes ? rate(*r.cold.disk_bytes, r.cold.median_s) : "n/a"});
    }
    summary.add(read_all_contest(f, Setting::kCold));
    if (f.field != "noisy") summary.add(read_all_contest(f, Setting::kWarm));  // noisy: in section 2
  }
  print_grid(grid, out);
  fmt::print(out, "  (GB/s after a time: logical bytes / time; disk rate: bytes from disk / time)\n");
  fmt::print(out, "{}", cache_drop_note(worst_resident));
  // The point of compression, from the numbers: fewer bytes off the disk.
  for (const FieldResults& f : fields) {
    const ReadAllResult* raw = nullptr;
    const ReadAllResult* best = nullptr;
    for (const ReadAllResult& r : f.stores) {
      if (r.role == LayoutRole::kRaw) raw = &r;
      else if (best == nullptr || r.cold.median_s < best->cold.median_s) best = &r;
    }
    if (raw == nullptr || best == nullptr) continue;
    const double speedup = raw->cold.median_s / std::max(best->cold.median_s, 1e-12);
    const auto disk = [](const ReadAllResult& r) { return format_bytes(r.cold.disk_bytes.value_or(r.stored_bytes)); };
    fmt::print(out, "  {}, cold: {} read {} from disk in {}, the raw file {} in {}: {} {}.\n", f.field, best->name,
               disk(*best), format_seconds(best->cold.median_s), disk(*raw), format_seconds(raw->cold.median_s),
               times_text(speedup >= 1 ? speedup : 1 / speedup),
               speedup >= 1 ? "faster: the bytes it did not read saved more time than decoding cost"
                            : "slower: decoding cost more than the bytes it did not read saved");
  }
}

void section_gpu(const DemoSetup& setup, const std::vector<FieldResults>& fields, const std::string& gpu_skipped,
                 Summary& summary) {
  std::FILE* out = setup.out;
  if (!gpu_skipped.empty()) {
    fmt::print(out, "\n5. Read into GPU memory: skipped: {}.\n", gpu_skipped);
    return;
  }
  fmt::print(out, "\n5. Read all into GPU memory (warm page cache; times as in 1; the values are copied back and\n"
                  "  checked after every run). memmap+copy: one copy from the mapping to the device, as\n"
                  "  cupy.asarray(np.memmap(...)); zarr: the library's device read (Array::read under ScopedGpu)\n\n");
  std::vector<std::vector<std::string>> grid;
  grid.push_back({"data", "store", "time", "rate", "chunks decoded on the GPU"});
  for (const FieldResults& f : fields) {
    for (const ReadAllResult& r : f.stores) {
      grid.push_back({f.field, r.name, format_seconds(r.gpu.median_s), rate(f.logical_bytes, r.gpu.median_s),
                      r.role == LayoutRole::kRaw ? "-" : fmt::format("{} of {}", r.gpu_decoded_chunks, r.chunks)});
    }
    summary.add(read_all_contest(f, Setting::kGpu));
  }
  print_grid(grid, out);
}

}  // namespace zarrkit::demo
