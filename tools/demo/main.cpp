// zarrkit_demo: what zarrkit is for, in one run. Generates a 3-D float32 field, stores it as
// Zarr v3, Zarr v2 and a raw file, reads it back in several access patterns with each, checks
// every value, and prints a table of bytes on disk, time and throughput, with guidance on
// which layout wins where (memmap included, honestly).
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "demo/access_patterns.h"
#include "demo/formats.h"
#include "demo/measure.h"
#include "demo/report.h"
#include "demo/sample_field.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"

namespace fs = std::filesystem;
using namespace zarrkit::demo;

namespace {

struct Options {
  std::string size = "medium";
  std::vector<std::uint64_t> shape;
  std::vector<std::uint64_t> chunks = {64, 128, 128};
  std::size_t threads = 0;
  int repeats = 5;
  PatternOptions patterns{4, 1000, 32, 0};
  std::uint64_t seed = 42;
  std::string dir;
  bool keep = false;
};

Shape3 shape_for_size(const std::string& size) {
  if (size == "small") return {64, 256, 256};     // 16 MiB
  if (size == "large") return {512, 1024, 1024};  // 2 GiB
  return {256, 512, 512};                         // 256 MiB
}

// Removes what the demo wrote, unless asked to keep it; runs on every exit path.
class OutputCleanup {
 public:
  OutputCleanup(std::vector<fs::path> paths, bool keep) : paths_(std::move(paths)), keep_(keep) {}
  ~OutputCleanup() {
    if (keep_) return;
    for (const fs::path& p : paths_) {
      std::error_code ignored;
      fs::remove_all(p, ignored);
    }
  }

 private:
  std::vector<fs::path> paths_;
  bool keep_;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int run(const Options& options) {
  const Shape3 shape = options.shape.empty()
                           ? shape_for_size(options.size)
                           : Shape3{options.shape[0], options.shape[1], options.shape[2]};
  Shape3 chunks{};
  for (int a = 0; a < 3; ++a) {
    if (shape[a] == 0 || options.chunks[a] == 0) {
      fmt::print(stderr, "zarrkit_demo: shape and chunks must be positive\n");
      return 1;
    }
    chunks[a] = std::min(options.chunks[a], shape[a]);
  }
  const std::size_t threads =
      options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  zarrkit::global_config().num_threads = threads;

  // Where the files go: a fresh temporary directory unless --dir names one.
  fs::path dir;
  std::vector<fs::path> to_remove;
  if (options.dir.empty()) {
    std::string pattern = (fs::temp_directory_path() / "zarrkit-demo-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      fmt::print(stderr, "zarrkit_demo: cannot create a temporary directory in {}\n",
                 fs::temp_directory_path().string());
      return 1;
    }
    dir = pattern;
    to_remove.push_back(dir);
  } else {
    dir = options.dir;
    fs::create_directories(dir);
  }

  std::vector<std::unique_ptr<Format>> formats;
  formats.push_back(make_zarr_format(dir / "field.v3.zarr", default_v3_layout(chunks)));
  formats.push_back(make_zarr_format(dir / "field.v2.zarr", default_v2_layout(chunks)));
  formats.push_back(make_raw_format(dir / "field.f32.raw"));
  if (!options.dir.empty())
    for (const auto& f : formats) to_remove.push_back(f->path());
  OutputCleanup cleanup(to_remove, options.keep);

  const std::uint64_t logical = shape[0] * shape[1] * shape[2] * sizeof(float);
  fmt::print("zarrkit demo: float32 field {}x{}x{} ({}), smooth + noise, seed {}\n", shape[0],
             shape[1], shape[2], format_bytes(logical), options.seed);
  fmt::print("threads: {} (zarr reads and writes; memmap+copy uses 1, like numpy)\n", threads);
  for (const auto& f : formats) fmt::print("  {:<12} {}\n", f->name(), f->detail());
  fmt::print("files in {}{}\n", dir.string(), options.keep ? " (kept)" : " (removed at the end)");
  fmt::print("times: median of {} run{} after a warm-up run; page cache warm (the files were just\n"
             "written), so this measures decoding and copying, not the disk. Every run checks every value.\n\n",
             options.repeats, options.repeats == 1 ? "" : "s");
  std::fflush(stdout);

  auto start = std::chrono::steady_clock::now();
  const SampleField field(shape, options.seed);
  fmt::print(stderr, "generated the field in {}\n", format_seconds(seconds_since(start)));

  Report report;
  report.logical_bytes = logical;
  for (const auto& f : formats) {
    start = std::chrono::steady_clock::now();
    f->write(field);
    const double write_s = seconds_since(start);
    f->open_for_reading();
    report.columns.push_back({f->name(), f->detail(), f->is_zarr(), f->bytes_on_disk(), write_s});
    fmt::print(stderr, "wrote {} in {}\n", f->name(), format_seconds(write_s));
  }

  const std::vector<AccessPattern> patterns = [&] {
    PatternOptions p = options.patterns;
    p.seed = options.seed;
    return make_patterns(shape, p);
  }();
  for (const AccessPattern& pattern : patterns) {
    PatternRow row;
    row.pattern = &pattern;
    row.chunk_bytes_decoded = chunk_bytes_touched(pattern, chunks);
    for (const auto& f : formats) {
      fmt::print(stderr, "timing {:<22} {}\n", pattern.label, f->name());
      row.timings.push_back(time_pattern(*f, pattern, field, options.repeats));
    }
    report.rows.push_back(std::move(row));
  }

  fmt::print("\n");
  print_table(report, stdout);
  fmt::print("(time = median per repetition of the whole pattern; GB/s = logical bytes read / time;\n"
             " 'zarr decodes' = bytes of the chunks the pattern touches)\n\n");
  fmt::print("{}\n", guidance(report));
  if (options.keep) {
    fmt::print("\nkept: {}\n  numpy: np.memmap('{}', dtype='<f4', mode='r', shape=({}, {}, {}))\n",
               dir.string(), (dir / "field.f32.raw").string(), shape[0], shape[1], shape[2]);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zarrkit_demo: write a float32 field as Zarr v3, Zarr v2 and a raw file, read it\n"
               "back in several access patterns, check every value, and compare speed and size."};
  Options options;
  app.add_option("--size", options.size, "sample size: small 64x256x256 (16 MiB), medium "
                                         "256x512x512 (256 MiB), large 512x1024x1024 (2 GiB)")
      ->check(CLI::IsMember({"small", "medium", "large"}))
      ->capture_default_str();
  app.add_option("--shape", options.shape, "explicit shape z,y,x (overrides --size)")
      ->delimiter(',')
      ->expected(3);
  app.add_option("--chunks", options.chunks, "chunk shape z,y,x for both Zarr formats")
      ->delimiter(',')
      ->expected(3)
      ->capture_default_str();
  app.add_option("--threads", options.threads, "threads for zarr (0: all cores)")
      ->capture_default_str();
  app.add_option("--repeats", options.repeats, "timed runs per measurement (the median is shown)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--planes", options.patterns.planes_per_axis, "planes read along each axis")
      ->capture_default_str();
  app.add_option("--crops", options.patterns.crops, "number of random crops (0: none)")
      ->capture_default_str();
  app.add_option("--crop-size", options.patterns.crop_edge, "edge of the cubic crops")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--seed", options.seed, "seed for the noise and the crop positions")
      ->capture_default_str();
  app.add_option("--dir", options.dir,
                 "directory for the files (default: a new temporary directory); the demo's "
                 "files are removed at the end unless --keep");
  app.add_flag("--keep", options.keep, "keep the files written");
  CLI11_PARSE(app, argc, argv);

  try {
    return run(options);
  } catch (const VerificationError& e) {
    fmt::print(stderr, "\nzarrkit_demo: VERIFICATION FAILED: {}\n", e.what());
    return 2;
  } catch (const zarrkit::Error& e) {
    fmt::print(stderr, "zarrkit_demo: {} error: {}\n", zarrkit::error_code_name(e.code()), e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "zarrkit_demo: error: {}\n", e.what());
    return 1;
  }
}
