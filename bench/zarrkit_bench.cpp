// zarrkit's side of the benchmark suite (bench/run). It runs one job, described by a JSON file
// written by the harness (bench/harness/), and prints one JSON object with its own timings.
// Python peers run the same jobs through bench/harness/worker.py, so that every peer is timed
// the same way: open first (not timed), one warm-up, then `reps` timed repetitions.
//
//   zarrkit_bench JOB.json
//
// Job fields (see bench/harness/jobs.py, which writes them):
//   op          "read_all" | "selections" | "write_all" | "roundtrip"
//   array       the array to read (a local directory, v2 or v3)
//   target      write_all / roundtrip: a directory holding only the target's metadata
//   source_raw  write_all: the values as a raw C-order file of the array's dtype and shape
//   selections  "selections": a list of selections, one entry per axis: an integer (drops the
//               axis) or [start, stop]; `group` consecutive ones form one timed unit
//   in_flight   "selections": how many selections are read at once (each on its own thread)
//   threads     zarrkit's thread pool size
//   reps, warmup, cold (drop the page cache before each timed repetition)
//
// Output: {"times": [s...], "unit_times": [s...] (last repetition), "checksum": "<u64>",
//          "rss_before": bytes, "peak_rss": bytes, "version": "...", "threads": n}
// The checksum is the sum of all elements read (as unsigned integers of their width, modulo
// 2^64): additive over any split of the array, so the harness can check every peer against
// the raw values. It is computed outside the timed repetitions.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrkit/array.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/thread_pool.h"

#ifndef ZARRKIT_BENCH_VERSION
#define ZARRKIT_BENCH_VERSION "unknown"
#endif

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
namespace fs = std::filesystem;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::uint64_t current_rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

// VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over fork and exec, so a child
// would report its parent's peak when that is larger.
std::uint64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // kB
  }
  throw std::runtime_error("no VmHWM in /proc/self/status");
}

// Writes back dirty pages, then asks the kernel to drop clean ones. The harness checks first
// that this works (it needs root); a failure here is an error, never a silent warm run.
void drop_page_cache() {
  sync();
  std::ofstream drop("/proc/sys/vm/drop_caches");
  drop << "3\n";
  drop.flush();
  if (!drop) throw std::runtime_error("cannot write /proc/sys/vm/drop_caches");
}

template <typename Word>
std::uint64_t sum_words(const std::byte* data, std::size_t count) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < count; ++i) {
    Word w;
    std::memcpy(&w, data + i * sizeof(Word), sizeof(Word));
    sum += w;
  }
  return sum;
}

std::uint64_t checksum(const zarrkit::NDBuffer& values) {
  const std::size_t item = values.dtype().size();
  const std::size_t n = values.nbytes() / item;
  switch (item) {
    case 1: return sum_words<std::uint8_t>(values.data(), n);
    case 2: return sum_words<std::uint16_t>(values.data(), n);
    case 4: return sum_words<std::uint32_t>(values.data(), n);
    case 8: return sum_words<std::uint64_t>(values.data(), n);
    default: throw std::runtime_error("checksum: unsupported element size");
  }
}

zarrkit::Selection parse_selection(const json& axes) {
  zarrkit::Selection selection;
  for (const auto& axis : axes) {
    if (axis.is_number_integer()) {
      selection.emplace_back(axis.get<std::int64_t>());
    } else {
      selection.emplace_back(zarrkit::Slice{axis.at(0).get<std::int64_t>(),
                                            axis.at(1).get<std::int64_t>(), 1});
    }
  }
  return selection;
}

// Removes everything in `dir` but its metadata, so that each write starts from an empty
// array, then syncs, so that no repetition pays for the write-back of the one before (as the
// Python peers' worker does; untimed).
void clear_chunks(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (name == "zarr.json" || name == ".zarray" || name == ".zattrs" || name == ".zgroup") continue;
    fs::remove_all(entry.path());
  }
  sync();
}

zarrkit::NDBuffer read_raw(const fs::path& path, const zarrkit::Array& like) {
  auto values = zarrkit::NDBuffer::allocate(like.shape(), like.dtype());
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) throw std::runtime_error("cannot open " + path.string());
  const std::size_t got = std::fread(values.data(), 1, values.nbytes(), file);
  std::fclose(file);
  if (got != values.nbytes()) throw std::runtime_error("short read of " + path.string());
  return values;
}

std::shared_ptr<zarrkit::LocalStore> open_store(const std::string& path, bool writable) {
  zarrkit::LocalStoreOptions options;
  options.read_only = !writable;
  options.create = false;
  options.clean_stale_temp_files = false;
  return zarrkit::LocalStore::open(path, options);
}

struct Outcome {
  std::vector<double> times;
  std::vector<double> unit_times;
  std::uint64_t checksum = 0;
  std::uint64_t rss_before = 0;
};

// Runs `body` warmup + reps times; only the last `reps` are timed. `before_each` runs untimed.
template <typename Before, typename Body>
std::vector<double> repeat(const json& job, Before before_each, Body body) {
  const int reps = job.value("reps", 5);
  const int warmup = job.value("warmup", 1);
  const bool cold = job.value("cold", false);
  std::vector<double> times;
  for (int i = 0; i < warmup + reps; ++i) {
    before_each();
    if (cold && i >= warmup) drop_page_cache();
    const auto start = Clock::now();
    body(i == warmup + reps - 1);
    if (i >= warmup) times.push_back(seconds_since(start));
  }
  return times;
}

Outcome run_read_all(const json& job) {
  const auto array = zarrkit::Array::open(open_store(job.at("array"), false));
  Outcome outcome;
  outcome.rss_before = current_rss_bytes();
  outcome.times = repeat(job, [] {}, [&](bool last) {
    zarrkit::NDBuffer values = array.read();
    if (last) outcome.checksum = checksum(values);
  });
  return outcome;
}

Outcome run_selections(const json& job) {
  const auto array = zarrkit::Array::open(open_store(job.at("array"), false));
  std::vector<zarrkit::Selection> selections;
  for (const auto& axes : job.at("selections")) selections.push_back(parse_selection(axes));
  const std::size_t group = job.value("group", 1);
  const std::size_t in_flight = job.value("in_flight", 1);
  const std::size_t units = selections.size() / group;

  Outcome outcome;
  outcome.rss_before = current_rss_bytes();
  // Several in flight: each unit runs on one thread of a pool of that size; reads nested in a
  // pool task run inline, so each selection is read by exactly one thread.
  zarrkit::ThreadPool flight_pool(in_flight);
  std::vector<double> unit_times(units);
  auto read_unit = [&](std::size_t u) {
    const auto start = Clock::now();
    for (std::size_t s = u * group; s < (u + 1) * group; ++s) (void)array.read(selections[s]);
    unit_times[u] = seconds_since(start);
  };
  outcome.times = repeat(job, [] {}, [&](bool) {
    if (in_flight == 1) {
      for (std::size_t u = 0; u < units; ++u) read_unit(u);
    } else {
      flight_pool.parallel_for(units, read_unit);
    }
  });
  outcome.unit_times = unit_times;
  // Untimed verification pass.
  for (const auto& selection : selections) outcome.checksum += checksum(array.read(selection));
  return outcome;
}

Outcome run_write(const json& job, bool roundtrip) {
  const fs::path target_dir = job.at("target").get<std::string>();
  auto target = zarrkit::Array::open(open_store(target_dir, true));
  std::optional<zarrkit::Array> source;
  zarrkit::NDBuffer values;
  if (roundtrip) {
    source = zarrkit::Array::open(open_store(job.at("array"), false));
  } else {
    values = read_raw(job.at("source_raw").get<std::string>(), target);
  }
  Outcome outcome;
  outcome.rss_before = current_rss_bytes();
  outcome.times = repeat(job, [&] { clear_chunks(target_dir); }, [&](bool) {
    if (roundtrip) {
      zarrkit::NDBuffer read_back = source->read();
      target.write({}, read_back.view());
    } else {
      target.write({}, values.view());
    }
  });
  return outcome;
}

int run(const fs::path& job_path) {
  std::ifstream in(job_path);
  const json job = json::parse(in);
  const std::size_t threads = job.value("threads", 1);
  zarrkit::global_config().num_threads = threads;

  const std::string op = job.at("op");
  Outcome outcome;
  if (op == "read_all") {
    outcome = run_read_all(job);
  } else if (op == "selections") {
    outcome = run_selections(job);
  } else if (op == "write_all") {
    outcome = run_write(job, false);
  } else if (op == "roundtrip") {
    outcome = run_write(job, true);
  } else {
    throw std::runtime_error("unknown op " + op);
  }
  json result = {
      {"times", outcome.times},
      {"unit_times", outcome.unit_times},
      {"checksum", std::to_string(outcome.checksum)},
      {"rss_before", outcome.rss_before},
      {"peak_rss", peak_rss_bytes()},
      {"version", ZARRKIT_BENCH_VERSION},
      {"threads", threads},
  };
  std::cout << result.dump() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: zarrkit_bench JOB.json\n";
    return 2;
  }
  try {
    return run(argv[1]);
  } catch (const std::exception& e) {
    std::cerr << "zarrkit_bench: " << e.what() << "\n";
    return 1;
  }
}
