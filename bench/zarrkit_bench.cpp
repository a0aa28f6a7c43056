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
//   codecs_only the codec chain alone, as a floor for the same job (the "codecs" peer of the
//               harness): every chunk's encoded bytes are fetched, or its values gathered,
//               before the timing; the timed part decodes every chunk (reads), encodes every
//               chunk (writes), or both (round trips), on `threads` threads, each decoding
//               into a reused chunk-sized buffer. No store, no copy into an output, no
//               gathering: what a read or write of these chunks cannot do without.
//
// Output: {"times": [s...], "cpu_times": [s...] (CPU time of the process in each timed
//          repetition, all threads), "unit_times": [s...] (last repetition), "checksum":
//          "<u64>", "rss_before": bytes, "peak_rss": bytes, "version": "...", "threads": n}
// The checksum is the sum of all elements read (as unsigned integers of their width, modulo
// 2^64): additive over any split of the array, so the harness can check every peer against
// the raw values. It is computed outside the timed repetitions.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
#include "zarrkit/metadata.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/thread_pool.h"

#ifndef ZARRKIT_BENCH_VERSION
#define ZARRKIT_BENCH_VERSION "unknown"
#endif

namespace {

using Clock = std::chrono::steady_clock;

// CPU time of the whole process (every thread), in seconds.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}
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
  std::vector<double> cpu_times;
  std::vector<double> unit_times;
  std::uint64_t checksum = 0;
  std::uint64_t rss_before = 0;
  bool verified = false;  // codecs_only writes: every encoded chunk decoded to its values
  std::uint64_t encoded_bytes = 0;  // codecs_only writes: the encoded chunks' sizes, summed
};

// With ZARRKIT_BENCH_PERF_CTL=CTL,ACK (two FIFOs), the timed repetitions are bracketed by
// "enable" and "disable" sent to perf's control FIFO, each waiting for perf's "ack", so
// that a profile holds them alone (not the setup, the warm-up or the untimed clearing):
//   mkfifo ctl ack
//   ZARRKIT_BENCH_PERF_CTL=ctl,ack perf record -D -1 --control fifo:ctl,ack -g zarrkit_bench JOB
class PerfControl {
 public:
  PerfControl() {
    const char* spec = std::getenv("ZARRKIT_BENCH_PERF_CTL");
    if (spec == nullptr) return;
    const std::string paths = spec;
    const auto comma = paths.find(',');
    if (comma == std::string::npos) throw std::runtime_error("ZARRKIT_BENCH_PERF_CTL must be CTL,ACK");
    control_.open(paths.substr(0, comma));
    ack_.open(paths.substr(comma + 1));
    if (!control_ || !ack_) throw std::runtime_error("cannot open the perf control FIFOs " + paths);
  }
  void send(const char* command) {
    if (!control_.is_open()) return;
    control_ << command << std::endl;
    std::string reply;
    std::getline(ack_, reply);  // perf answers "ack" once the command took effect
  }

 private:
  std::ofstream control_;
  std::ifstream ack_;
};

// Runs `body` warmup + reps times; only the last `reps` are timed (wall and CPU time into
// `outcome`). `before_each` runs untimed.
template <typename Before, typename Body>
void repeat(const json& job, Outcome& outcome, Before before_each, Body body) {
  const int reps = job.value("reps", 5);
  const int warmup = job.value("warmup", 1);
  const bool cold = job.value("cold", false);
  PerfControl perf;
  for (int i = 0; i < warmup + reps; ++i) {
    before_each();
    if (cold && i >= warmup) drop_page_cache();
    if (i >= warmup) perf.send("enable");
    const double cpu_start = process_cpu_seconds();
    const auto start = Clock::now();
    body(i == warmup + reps - 1);
    if (i >= warmup) {
      outcome.times.push_back(seconds_since(start));
      outcome.cpu_times.push_back(process_cpu_seconds() - cpu_start);
      perf.send("disable");
    }
  }
}

Outcome run_read_all(const json& job) {
  const auto array = zarrkit::Array::open(open_store(job.at("array"), false));
  Outcome outcome;
  outcome.rss_before = current_rss_bytes();
  repeat(job, outcome, [] {}, [&](bool last) {
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
  repeat(job, outcome, [] {}, [&](bool) {
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
  repeat(job, outcome, [&] { clear_chunks(target_dir); }, [&](bool) {
    if (roundtrip) {
      zarrkit::NDBuffer read_back = source->read();
      target.write({}, read_back.view());
    } else {
      target.write({}, values.view());
    }
  });
  return outcome;
}

// ---- The codec chain alone (codecs_only) ----------------------------------------------

// Every chunk's grid coordinates, in C order.
std::vector<std::vector<std::uint64_t>> all_chunks(const zarrkit::ArrayMetadata& m) {
  const zarrkit::Shape grid = m.chunk_grid_shape();
  std::vector<std::vector<std::uint64_t>> chunks;
  std::vector<std::uint64_t> index(grid.size(), 0);
  for (std::uint64_t n = 0; n < m.num_chunks(); ++n) {
    chunks.push_back(index);
    for (std::size_t a = grid.size(); a-- > 0;) {
      if (++index[a] < grid[a]) break;
      index[a] = 0;
    }
  }
  return chunks;
}

// The values of one chunk, gathered from a C-order array (edge padding left as it was: the
// benchmark's arrays have no partial chunks, and their fill value is 0).
void gather_chunk(const zarrkit::NDBuffer& values, const zarrkit::ArrayMetadata& m,
                  const std::vector<std::uint64_t>& chunk, std::byte* out) {
  const std::size_t ndim = m.shape.size();
  const std::size_t item = m.dtype.size();
  const auto array_strides = zarrkit::NDView::c_strides(m.shape, item);
  const std::uint64_t last = m.chunk_shape[ndim - 1];
  const std::uint64_t row_items = std::min(last, m.shape[ndim - 1] - chunk[ndim - 1] * last);
  std::vector<std::uint64_t> at(ndim - 1, 0);
  std::uint64_t rows = 1;
  for (std::size_t a = 0; a + 1 < ndim; ++a) rows *= m.chunk_shape[a];
  for (std::uint64_t r = 0; r < rows; ++r) {
    bool inside = true;
    std::int64_t offset = static_cast<std::int64_t>(chunk[ndim - 1] * last) * array_strides[ndim - 1];
    for (std::size_t a = 0; a + 1 < ndim; ++a) {
      const std::uint64_t i = chunk[a] * m.chunk_shape[a] + at[a];
      inside = inside && i < m.shape[a];
      offset += static_cast<std::int64_t>(i) * array_strides[a];
    }
    if (inside) std::memcpy(out + r * last * item, values.data() + offset, row_items * item);
    for (std::size_t a = ndim - 1; a-- > 0;) {
      if (++at[a] < m.chunk_shape[a]) break;
      at[a] = 0;
    }
  }
}

// Decodes `encoded` into `out` (chunk-sized); through a fresh buffer where the chain cannot
// decode into memory it is given.
void decode_chunk_into(const zarrkit::ArrayMetadata& m, zarrkit::ByteView encoded, zarrkit::MutableByteView out) {
  if (m.codecs->decode_into(encoded, m.chunk_spec(), out)) return;
  const zarrkit::NDBuffer decoded = m.codecs->decode(encoded, m.chunk_spec(), zarrkit::BufferPrototype::host());
  if (decoded.nbytes() != out.size()) throw std::runtime_error("a chunk decoded to the wrong size");
  std::memcpy(out.data(), decoded.data(), out.size());
}

Outcome run_codecs_only(const json& job) {
  const std::string op = job.at("op");
  const bool decodes = op != "write_all";
  const bool encodes = op == "write_all" || op == "roundtrip";
  const auto array = zarrkit::Array::open(open_store(job.at("array"), false));
  const zarrkit::ArrayMetadata& m = array.metadata();
  const std::size_t chunk_bytes = zarrkit::NDBuffer::allocate(m.chunk_shape, m.dtype).nbytes();
  const auto chunks = all_chunks(m);
  const std::size_t threads = job.value("threads", 1);

  // Untimed: the encoded bytes of every chunk (reads), the values of every chunk (writes).
  std::vector<zarrkit::Buffer> encoded(chunks.size());
  std::vector<zarrkit::NDBuffer> gathered(encodes ? chunks.size() : 0);
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    auto bytes = array.store()->get(m.chunk_key(chunks[i]), zarrkit::BufferPrototype::host());
    if (!bytes) throw std::runtime_error("codecs_only: chunk " + m.chunk_key(chunks[i]) + " is not stored");
    encoded[i] = std::move(*bytes);
  }
  if (encodes) {
    const zarrkit::NDBuffer values = read_raw(job.at("source_raw").get<std::string>(), array);
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      gathered[i] = zarrkit::NDBuffer::filled(m.chunk_shape, m.dtype, m.fill_value);
      gather_chunk(values, m, chunks[i], gathered[i].data());
    }
  }
  Outcome outcome;
  outcome.rss_before = current_rss_bytes();
  zarrkit::ThreadPool pool(threads);
  repeat(job, outcome, [] {}, [&](bool) {
    pool.parallel_for(chunks.size(), [&](std::size_t i) {
      if (decodes) {
        // The host allocator reuses chunk-sized blocks per thread, as the engine's reads do.
        zarrkit::Buffer out = zarrkit::Buffer::allocate(chunk_bytes);
        decode_chunk_into(m, encoded[i].view(), out.mutable_view());
      }
      if (encodes) (void)m.codecs->encode(gathered[i], m.chunk_spec());
    });
  });
  // Untimed checks: reads sum the decoded values (the harness compares them with the raw
  // values'); writes decode what they encoded and compare it with what was gathered.
  zarrkit::Buffer out = zarrkit::Buffer::allocate(chunk_bytes);
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    if (encodes) {
      const zarrkit::Buffer written = m.codecs->encode(gathered[i], m.chunk_spec());
      outcome.encoded_bytes += written.size();
      decode_chunk_into(m, written.view(), out.mutable_view());
      if (std::memcmp(out.data(), gathered[i].data(), chunk_bytes) != 0) {
        throw std::runtime_error("codecs_only: chunk " + m.chunk_key(chunks[i]) + " did not decode to its values");
      }
    } else {
      decode_chunk_into(m, encoded[i].view(), out.mutable_view());
      outcome.checksum += checksum(zarrkit::NDBuffer(out, m.chunk_shape, m.dtype));
    }
  }
  outcome.verified = encodes;
  return outcome;
}

int run(const fs::path& job_path) {
  std::ifstream in(job_path);
  const json job = json::parse(in);
  const std::size_t threads = job.value("threads", 1);
  zarrkit::global_config().num_threads = threads;

  const std::string op = job.at("op");
  Outcome outcome;
  if (job.value("codecs_only", false)) {
    outcome = run_codecs_only(job);
  } else if (op == "read_all") {
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
      {"cpu_times", outcome.cpu_times},
      {"unit_times", outcome.unit_times},
      {"checksum", std::to_string(outcome.checksum)},
      {"rss_before", outcome.rss_before},
      {"peak_rss", peak_rss_bytes()},
      {"version", ZARRKIT_BENCH_VERSION},
      {"threads", threads},
  };
  if (outcome.verified) {
    result["verified"] = true;
    result["encoded_bytes"] = outcome.encoded_bytes;
  }
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
