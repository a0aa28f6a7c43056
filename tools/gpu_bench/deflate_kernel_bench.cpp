// zarrkit_deflate_bench: kernel-only batched gzip decode (scenario S7 of BENCHMARKS.md for
// deflate): zarrkit's deflate kernel (gpu/codecs/deflate_device.h, a warp per chunk)
// against nvCOMP's batched gzip decoder on the same streams in device memory, and
// libdeflate on every host thread.
//
//   zarrkit_deflate_bench [--total-mib 1024] [--reps 10] [--chunk-kib 64,512,2048,16384]
//                         [--levels 1,6] [--json FILE]
//
// Data: family N (float32, bench_data.h), one gzip stream per chunk (libdeflate at the
// level). For each chunk size and level:
//   zarrkit  CUDA events around one launch over every chunk (statuses reset included; the
//            table was uploaded before), median of the runs, GB/s of decoded output
//   nvCOMP   its batched gzip decoder on the same streams (when libnvcomp loads:
//            $ZARRKIT_NVCOMP_LIBRARY or libnvcomp.so.6)
//   CPU      libdeflate_gzip_decompress on every host thread
// Every GPU output is poisoned, decoded and compared with the original before it is timed;
// a mismatch is reported (exit status 3) and not timed. A run that does not finish within a
// minute ends the program (SIGALRM).
#include <cuda_runtime.h>
#include <libdeflate.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench_data.h"
#include "gpu/codecs/deflate_device_runner.h"
#include "gpu/nvcomp_runtime.h"
#include "zarrkit/gpu.h"

namespace {

using namespace zarrkit;
using Bytes = std::vector<std::uint8_t>;
using Clock = std::chrono::steady_clock;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::cerr << what << ": " << cudaGetErrorString(e) << "\n";
    std::exit(2);
  }
}

const unsigned kThreads = std::max(1u, std::thread::hardware_concurrency());

// Median seconds of `run` between CUDA events: a warm-up, then at least 3 and at most
// `reps` runs, stopping after 3 once they have taken 2 s.
double time_events(int reps, const std::function<void()>& run) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<double> times;
  double spent = 0;
  for (int r = 0; r <= reps; ++r) {
    alarm(60);
    check(cudaEventRecord(start, nullptr), "event");
    run();
    check(cudaEventRecord(stop, nullptr), "event");
    check(cudaEventSynchronize(stop), "kernels");
    alarm(0);
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "event");
    if (r == 0) continue;
    times.push_back(ms / 1e3);
    spent += ms / 1e3;
    if (times.size() >= 3 && spent > 2.0) break;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return bench::median(times);
}

struct Row {
  std::size_t kib = 0, chunks = 0;
  int level = 0;
  double ratio = 0;
  std::optional<double> ours, nvcomp, cpu;
  std::string problem;
};

// zarrkit's kernel: checked, then timed.
void run_ours(const std::vector<Bytes>& frames, const std::vector<float>& original, std::size_t chunk_bytes, int reps,
              Row& row) {
  const std::vector<std::uint64_t> sizes(frames.size(), chunk_bytes);
  const std::vector<gpu::deflate::Format> formats(frames.size(), gpu::deflate::kGzip);
  gpu::DeflateDeviceRunner runner(frames, sizes, formats);
  alarm(60);
  runner.launch();
  const std::vector<std::int32_t> status = runner.statuses();
  alarm(0);
  const auto* want = reinterpret_cast<const std::uint8_t*>(original.data());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (status[i] != 0) {
      row.problem = fmt::format("MISMATCH: chunk {} status {} ({})", i, status[i], gpu::deflate::error_name(status[i]));
      return;
    }
    const Bytes got = runner.output(i);
    if (std::memcmp(got.data(), want + i * chunk_bytes, chunk_bytes) != 0) {
      row.problem = fmt::format("MISMATCH: chunk {} decoded to other bytes", i);
      return;
    }
  }
  if (!runner.guards_intact()) {
    row.problem = "MISMATCH: the kernel wrote outside an output slot";
    return;
  }
  const double seconds = time_events(reps, [&] { runner.launch(); });
  row.ours = static_cast<double>(frames.size() * chunk_bytes) / seconds / 1e9;
}

// nvCOMP's batched gzip decoder on the same streams: checked, then timed.
void run_nvcomp(const std::vector<Bytes>& frames, const std::vector<float>& original, std::size_t chunk_bytes, int reps,
                Row& row) {
  const gpu::Nvcomp* nv = gpu::Nvcomp::get();
  if (nv == nullptr) {
    row.problem += (row.problem.empty() ? "" : "; ") + std::string("nvCOMP not loaded: ") + gpu::Nvcomp::reason();
    return;
  }
  const std::size_t n = frames.size(), total = n * chunk_bytes;
  std::vector<std::uint64_t> offsets;
  Bytes host;
  for (const Bytes& f : frames) {
    offsets.push_back(host.size());
    host.insert(host.end(), f.begin(), f.end());
    host.resize((host.size() + 255) / 256 * 256);
  }
  std::uint8_t *in = nullptr, *out = nullptr;
  void **in_ptrs = nullptr, **out_ptrs = nullptr;
  std::size_t *in_sizes = nullptr, *out_sizes = nullptr, *actual = nullptr;
  int* status = nullptr;
  check(cudaMalloc(&in, host.size()), "malloc");
  check(cudaMalloc(&out, total), "malloc");
  for (void** p : {reinterpret_cast<void**>(&in_ptrs), reinterpret_cast<void**>(&out_ptrs)}) check(cudaMalloc(p, n * sizeof(void*)), "malloc");
  for (std::size_t** p : {&in_sizes, &out_sizes, &actual}) check(cudaMalloc(p, n * sizeof(std::size_t)), "malloc");
  check(cudaMalloc(&status, n * sizeof(int)), "malloc");
  std::vector<void*> ip(n), op(n);
  std::vector<std::size_t> is(n), os(n, chunk_bytes);
  for (std::size_t i = 0; i < n; ++i) {
    ip[i] = in + offsets[i];
    op[i] = out + i * chunk_bytes;
    is[i] = frames[i].size();
  }
  check(cudaMemcpy(in, host.data(), host.size(), cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(in_ptrs, ip.data(), n * sizeof(void*), cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(out_ptrs, op.data(), n * sizeof(void*), cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(in_sizes, is.data(), n * sizeof(std::size_t), cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(out_sizes, os.data(), n * sizeof(std::size_t), cudaMemcpyHostToDevice), "copy");
  const std::size_t temp_bytes = nv->temp_bytes(gpu::NvcompCodec::kGzip, n, chunk_bytes, total);
  void* temp = nullptr;
  if (temp_bytes != static_cast<std::size_t>(-1)) check(cudaMalloc(&temp, std::max<std::size_t>(temp_bytes, 1)), "malloc");
  int launch = 0;
  auto run = [&] {
    launch = nv->decompress(gpu::NvcompCodec::kGzip, in_ptrs, in_sizes, out_sizes, actual, n, temp, temp_bytes,
                            out_ptrs, status, nullptr);
  };
  if (temp_bytes != static_cast<std::size_t>(-1)) {
    check(cudaMemset(out, 0xA5, total), "memset");
    run();
    check(cudaDeviceSynchronize(), "nvCOMP");
    std::vector<int> st(n);
    check(cudaMemcpy(st.data(), status, n * sizeof(int), cudaMemcpyDeviceToHost), "copy");
    Bytes back(total);
    check(cudaMemcpy(back.data(), out, total, cudaMemcpyDeviceToHost), "copy");
    const bool ok = launch == 0 && std::all_of(st.begin(), st.end(), [](int s) { return s == 0; }) &&
                    std::memcmp(back.data(), original.data(), total) == 0;
    if (ok) {
      row.nvcomp = static_cast<double>(total) / time_events(reps, run) / 1e9;
    } else {
      row.problem += (row.problem.empty() ? "" : "; ") + std::string("nvCOMP: failed or wrong bytes");
    }
  }
  for (void* p : {static_cast<void*>(in), static_cast<void*>(out), static_cast<void*>(in_ptrs), static_cast<void*>(out_ptrs),
                  static_cast<void*>(in_sizes), static_cast<void*>(out_sizes), static_cast<void*>(actual),
                  static_cast<void*>(status), temp}) {
    cudaFree(p);
  }
}

std::optional<double> run_cpu(const std::vector<Bytes>& frames, const std::vector<float>& original, std::size_t chunk_bytes) {
  std::vector<Bytes> out(frames.size(), Bytes(chunk_bytes));
  bool ok = true;
  auto once = [&] {
    bench::parallel(frames.size(), kThreads, [&](std::size_t i) {
      thread_local libdeflate_decompressor* d = libdeflate_alloc_decompressor();
      std::size_t n = 0;
      if (libdeflate_gzip_decompress(d, frames[i].data(), frames[i].size(), out[i].data(), chunk_bytes, &n) !=
              LIBDEFLATE_SUCCESS ||
          n != chunk_bytes) {
        ok = false;
      }
    });
  };
  once();
  const auto* want = reinterpret_cast<const std::uint8_t*>(original.data());
  for (std::size_t i = 0; i < frames.size() && ok; ++i) ok = std::memcmp(out[i].data(), want + i * chunk_bytes, chunk_bytes) == 0;
  if (!ok) return std::nullopt;
  std::vector<double> t;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = Clock::now();
    once();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return static_cast<double>(frames.size() * chunk_bytes) / bench::median(t) / 1e9;
}

std::vector<std::size_t> parse_list(const std::string& s) {
  std::vector<std::size_t> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(static_cast<std::size_t>(std::stol(item)));
  return out;
}

std::string cell(const std::optional<double>& v) { return v ? fmt::format("{:.1f}", *v) : "-"; }
std::string json_number(const std::optional<double>& v) { return v ? fmt::format("{:.3f}", *v) : "null"; }

}  // namespace

int main(int argc, char** argv) {
  std::size_t total_mib = 1024;
  int reps = 10;
  std::vector<std::size_t> kibs = {64, 512, 2048, 16384};
  std::vector<int> levels = {1, 6};
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--total-mib" && i + 1 < argc) {
      total_mib = std::stoul(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(3, std::stoi(argv[++i]));
    } else if (a == "--chunk-kib" && i + 1 < argc) {
      kibs = parse_list(argv[++i]);
    } else if (a == "--levels" && i + 1 < argc) {
      levels.clear();
      std::stringstream in(argv[++i]);
      for (std::string item; std::getline(in, item, ',');) levels.push_back(std::stoi(item));
    } else if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::cerr << "usage: zarrkit_deflate_bench [--total-mib N] [--reps N] [--chunk-kib A,B,...] [--levels L,...] "
                   "[--json FILE]\n";
      return 1;
    }
  }
  if (!gpu_available()) {
    std::cerr << "no CUDA device: " << gpu_unavailable_reason() << "\n";
    return 1;
  }
  install_gpu_support();
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  const std::size_t total = total_mib << 20;
  std::vector<float> original(total / 4);
  bench::fill_family_n(original, 7);
  std::vector<Row> rows;
  bool failures = false;
  for (const int level : levels) {
    for (const std::size_t kib : kibs) {
      Row row;
      row.kib = kib;
      row.level = level;
      const std::size_t chunk_bytes = kib << 10;
      row.chunks = total / chunk_bytes;
      std::vector<Bytes> frames(row.chunks);
      bench::parallel(row.chunks, kThreads, [&](std::size_t i) {
        libdeflate_compressor* c = libdeflate_alloc_compressor(level);
        frames[i].resize(libdeflate_gzip_compress_bound(c, chunk_bytes));
        frames[i].resize(libdeflate_gzip_compress(c, reinterpret_cast<const char*>(original.data()) + i * chunk_bytes,
                                                  chunk_bytes, frames[i].data(), frames[i].size()));
        libdeflate_free_compressor(c);
      });
      std::size_t compressed = 0;
      for (const Bytes& f : frames) compressed += f.size();
      row.ratio = static_cast<double>(row.chunks * chunk_bytes) / static_cast<double>(compressed);
      run_ours(frames, original, chunk_bytes, reps, row);
      run_nvcomp(frames, original, chunk_bytes, reps, row);
      row.cpu = run_cpu(frames, original, chunk_bytes);
      if (row.problem.rfind("MISMATCH", 0) == 0) failures = true;
      fmt::print("level {} {} KiB: {} chunks, ratio {:.2f}: zarrkit {} GB/s, nvCOMP {} GB/s, CPU {} GB/s{}\n", level, kib,
                 row.chunks, row.ratio, cell(row.ours), cell(row.nvcomp), cell(row.cpu),
                 row.problem.empty() ? "" : " [" + row.problem + "]");
      std::fflush(stdout);
      rows.push_back(row);
    }
  }
  fmt::print("\nKernel-only batched gzip decode on {} ({} SMs), {} MiB of family-N float32 per batch; medians of "
             "CUDA-event timings; CPU: libdeflate on {} threads\n\n",
             prop.name, prop.multiProcessorCount, total_mib, kThreads);
  fmt::print("| level | chunk KiB | chunks | ratio | zarrkit GB/s | nvCOMP GB/s | zarrkit / nvCOMP | CPU GB/s | zarrkit / CPU |\n"
             "|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    fmt::print("| {} | {} | {} | {:.2f} | {} | {} | {} | {} | {} |\n", r.level, r.kib, r.chunks, r.ratio, cell(r.ours),
               cell(r.nvcomp), r.ours && r.nvcomp ? fmt::format("{:.2f}x", *r.ours / *r.nvcomp) : "-", cell(r.cpu),
               r.ours && r.cpu ? fmt::format("{:.2f}x", *r.ours / *r.cpu) : "-");
  }
  for (const Row& r : rows) {
    if (!r.problem.empty()) fmt::print("level {} {} KiB: {}\n", r.level, r.kib, r.problem);
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << "{\"scenario\": \"S7 deflate kernels\", \"device\": \"" << prop.name << "\", \"total_mib\": " << total_mib
        << ", \"rows\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      out << (i ? ", " : "")
          << fmt::format("{{\"level\": {}, \"chunk_kib\": {}, \"chunks\": {}, \"ratio\": {:.3f}, "
                         "\"zarrkit_gbs\": {}, \"nvcomp_gbs\": {}, \"cpu_gbs\": {}}}",
                         r.level, r.kib, r.chunks, r.ratio, json_number(r.ours), json_number(r.nvcomp), json_number(r.cpu));
    }
    out << "]}\n";
  }
  return failures ? 3 : 0;
}
