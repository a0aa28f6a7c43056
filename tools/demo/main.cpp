// zarrkit_demo: what zarrkit is for, in one run. Generates a 3-D float32 field, stores it
// as Zarr in several layouts and as a raw file, reads it back in several access patterns,
// warm and cold, into host and (where there is one) GPU memory, checks every value, and
// ends with which layout wins which pattern and why (memmap included, honestly). The
// sections are described in sections.h.
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
#include "demo/gpu_read.h"
#include "demo/measure.h"
#include "demo/report.h"
#include "demo/sample_field.h"
#include "demo/sections.h"
#include "demo/summary.h"
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
  int cold_repeats = 3;
  double cell_seconds = 1.0;
  PatternOptions patterns{4, 100, 32, 0};
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

std::unique_ptr<Format> zarr_store(const fs::path& dir, const std::string& file, ZarrLayout layout) {
  return make_zarr_format(dir / file, std::move(layout));
}

// Writes `field` to each of `formats` and opens them for reading.
void write_all(const std::vector<Format*>& formats, const SampleField& field) {
  for (Format* f : formats) {
    f->timed_write(field);
    f->open_for_reading();
    fmt::print(stderr, "wrote {} ({}) in {}\n", f->name(), field.name(), format_seconds(f->write_seconds()));
  }
}

int run(const Options& options) {
  const Shape3 shape = options.shape.empty()
                           ? shape_for_size(options.size)
                           : Shape3{options.shape[0], options.shape[1], options.shape[2]};
  DemoSetup setup;
  setup.shape = shape;
  for (int a = 0; a < 3; ++a) {
    if (shape[a] == 0 || options.chunks[a] == 0) {
      fmt::print(stderr, "zarrkit_demo: shape and chunks must be positive\n");
      return 1;
    }
    setup.chunks[a] = std::min(options.chunks[a], shape[a]);
  }
  setup.threads = options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  zarrkit::global_config().num_threads = setup.threads;
  setup.warm = {options.repeats, options.cell_seconds, false};
  setup.cold = {options.cold_repeats, options.cell_seconds, true};
  PatternOptions pattern_options = options.patterns;
  pattern_options.seed = options.seed;
  setup.patterns = make_patterns(shape, pattern_options);

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

  // The noisy field's stores, then the quantised field's (written once the noisy one is done).
  std::vector<std::unique_ptr<Format>> owned;
  auto add = [&](std::unique_ptr<Format> f) {
    owned.push_back(std::move(f));
    return owned.back().get();
  };
  NoisyStores noisy;
  noisy.v3 = add(zarr_store(dir, "noisy.v3.zarr", default_v3_layout(setup.chunks)));
  noisy.v2 = add(zarr_store(dir, "noisy.v2.zarr", default_v2_layout(setup.chunks)));
  noisy.raw = add(make_raw_format(dir / "noisy.f32.raw"));
  for (int axis = 0; axis < 3; ++axis) {
    static const char* const kFiles[] = {"noisy.zplanes.zarr", "noisy.yplanes.zarr", "noisy.xplanes.zarr"};
    noisy.shaped.push_back(add(zarr_store(dir, kFiles[axis], plane_layout(shape, axis))));
  }
  // Inner chunks half a crop's edge: a crop then decodes a few times its own bytes, not
  // whole large chunks, while the shards keep the files as few as section 1's chunks.
  const Shape3 inner = inner_chunks_for(setup.chunks, std::max<std::uint64_t>(1, options.patterns.crop_edge / 2));
  noisy.shaped.push_back(add(zarr_store(dir, "noisy.sharded.zarr", sharded_layout(setup.chunks, inner))));
  const std::vector<Format*> quantised = {add(make_raw_format(dir / "quantised.f32.raw")),
                                          add(zarr_store(dir, "quantised.v3.zarr", default_v3_layout(setup.chunks))),
                                          add(zarr_store(dir, "quantised.v2.zarr", default_v2_layout(setup.chunks)))};
  if (!options.dir.empty())
    for (const auto& f : owned) to_remove.push_back(f->path());
  OutputCleanup cleanup(to_remove, options.keep);

  const std::string gpu_skipped = gpu_read_skip_reason();
  fmt::print("zarrkit demo: float32 field {}x{}x{} ({}), seed {}; {} threads for zarr (memmap+copy uses 1, like numpy)\n",
             shape[0], shape[1], shape[2], format_bytes(shape[0] * shape[1] * shape[2] * sizeof(float)), options.seed,
             setup.threads);
  fmt::print("files in {}{}; every value of every read is checked against what was written\n", dir.string(),
             options.keep ? " (kept)" : " (removed at the end)");
  std::fflush(stdout);

  Summary summary(setup.threads);
  std::vector<FieldResults> read_all;
  {
    auto start = std::chrono::steady_clock::now();
    const SampleField field(shape, options.seed, FieldKind::kNoisy);
    fmt::print(stderr, "generated the noisy field in {}\n", format_seconds(seconds_since(start)));
    std::vector<Format*> all = {noisy.v3, noisy.v2, noisy.raw};
    all.insert(all.end(), noisy.shaped.begin(), noisy.shaped.end());
    write_all(all, field);

    const Report one_shape = section_one_chunk_shape(setup, noisy, field);
    section_shaped_chunks(setup, noisy, one_shape, field, summary);
    section_cold_patterns(setup, noisy, field, summary);
    const std::vector<Timing>& warm = one_shape.rows.front().timings;  // v3, v2, raw
    read_all.push_back(measure_read_all(setup, {noisy.raw, noisy.v3, noisy.v2}, field, {warm[2], warm[0], warm[1]},
                                        gpu_skipped));
  }
  {
    const SampleField field(shape, options.seed, FieldKind::kQuantised);
    write_all(quantised, field);
    read_all.push_back(measure_read_all(setup, quantised, field, {}, gpu_skipped));
  }
  section_compression(setup, read_all, summary);
  section_gpu(setup, read_all, gpu_skipped, summary);

  fmt::print("\nWhich layout wins which access pattern (the fastest measured above, and why)\n");
  summary.print(stdout);
  const Verified verified = verified_so_far();
  fmt::print("\nverified: {} reads, {} values, every one equal to what was written\n", verified.reads, verified.values);
  if (options.keep) {
    fmt::print("kept: {}\n  numpy: np.memmap('{}', dtype='<f4', mode='r', shape=({}, {}, {}))\n", dir.string(),
               noisy.raw->path().string(), shape[0], shape[1], shape[2]);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zarrkit_demo: write a float32 field as Zarr (one chunk shape, chunks shaped for each\n"
               "access pattern, shards) and as a raw file, read it back in several access patterns, warm,\n"
               "cold and into GPU memory, check every value, and say which layout wins where and why."};
  Options options;
  app.add_option("--size", options.size, "sample size: small 64x256x256 (16 MiB), medium "
                                         "256x512x512 (256 MiB), large 512x1024x1024 (2 GiB)")
      ->check(CLI::IsMember({"small", "medium", "large"}))
      ->capture_default_str();
  app.add_option("--shape", options.shape, "explicit shape z,y,x (overrides --size)")
      ->delimiter(',')
      ->expected(3);
  app.add_option("--chunks", options.chunks, "the one chunk shape z,y,x of section 1 (also the shard shape)")
      ->delimiter(',')
      ->expected(3)
      ->capture_default_str();
  app.add_option("--threads", options.threads, "threads for zarr (0: all cores)")
      ->capture_default_str();
  app.add_option("--repeats", options.repeats, "at most this many timed warm runs per measurement (the median is shown)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--cold-repeats", options.cold_repeats, "at most this many cold runs per measurement")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--cell-seconds", options.cell_seconds,
                 "timed runs of one measurement stop once they add up to this (at least one run)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--planes", options.patterns.planes_per_axis, "planes read along each axis")
      ->check(CLI::PositiveNumber)
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
