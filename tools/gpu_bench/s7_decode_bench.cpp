// zarrkit_s7_bench: scenario S7 of BENCHMARKS.md, kernel-only batched decode, zarrkit's
// kernels against nvCOMP's batched decoders on the same chunks in the same device buffers.
//
//   zarrkit_s7_bench [--total-mib 1024] [--reps 10] [--chunk-kib 64,1024,16384]
//                    [--codecs lz4,blosc-lz4,zstd,gzip] [--blosc-chunk-kib A,B]
//                    [--variants all|direct,staged,...] [--json FILE]
//
// Data: family N (smooth field + noise rounded to 1/64, float32). For each chunk size:
//   lz4        raw LZ4 blocks (liblz4), one per chunk: zarrkit's kernels | nvCOMP LZ4
//   blosc-lz4  c-blosc lz4 + byte shuffle (zarrkit only: nvCOMP has no blosc decoder)
//   zstd 1     zstd frames: nvCOMP Zstd | libzstd on every host thread (zarrkit's path)
//   gzip 1     gzip members (libdeflate): nvCOMP Gzip | libdeflate on every host thread
// zarrkit's GPU figure is the kernel the read path runs (direct); --variants all also times
// the other stream-decode kernel variants (kernels.h, DecodeVariant: direct-uncapped,
// staged) on the same chunks, next to nvCOMP and the CPU.
//
// Every GPU output is poisoned, decoded and compared with the original before it is timed;
// a variant whose output or status differs is reported as MISMATCH (and the exit status is
// 3) and not timed. Times are CUDA events around the decode launches only: the median of
// at least 3 and at most --reps runs after a warm-up (fewer than --reps when the runs of one
// variant pass 2 s). CPU: the same chunks with the CPU libraries on every host thread.
//
// The GPU work of each chunk size runs in a child process (the parent never touches CUDA),
// so that a variant that faults or hangs (60 s without progress) is reported and the run
// goes on with the others.
#include <blosc.h>
#include <cuda_runtime.h>
#include <libdeflate.h>
#include <lz4.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "gpu/codecs/blosc_device.h"
#include "gpu/device_read.h"
#include "gpu/kernels.h"
#include "gpu/nvcomp_runtime.h"
#include "zarrkit/gpu.h"

namespace {

using namespace zarrkit;
using gpu::DecodeVariant;
using gpu::Nvcomp;
using gpu::NvcompCodec;
using gpu::nvcomp_codec_name;
using Clock = std::chrono::steady_clock;

constexpr DecodeVariant kAllVariants[] = {DecodeVariant::kDirect, DecodeVariant::kDirectUncapped,
                                          DecodeVariant::kStaged};
// The kernel the read path runs (gpu/device_read.cpp), always measured.
const std::string kReadPathVariant = gpu::decode_variant_name(DecodeVariant::kDirect);

// Child processes report on this descriptor; -1 in the parent.
int g_report_fd = -1;

void report(const std::string& line) {
  const std::string l = line + "\n";
  if (write(g_report_fd, l.data(), l.size()) < 0) std::_Exit(4);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::cerr << what << ": " << cudaGetErrorString(e) << "\n";
    std::exit(2);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void parallel(std::size_t n, unsigned threads, const std::function<void(std::size_t)>& f) {
  std::vector<std::thread> pool;
  std::atomic<std::size_t> next{0};
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < n;) f(i);
    });
  }
  for (auto& th : pool) th.join();
}

const unsigned kThreads = std::max(1u, std::thread::hardware_concurrency());

// Family N, as in gpu_decode_bench.cpp: ratio about 3 under blosc-lz4 with shuffle.
std::vector<float> family_n(std::size_t n) {
  std::vector<float> out(n);
  parallel(kThreads, kThreads, [&](std::size_t t) {
    std::mt19937 rng(static_cast<unsigned>(7 + t));
    std::normal_distribution<float> noise(0.0f, 0.05f);
    for (std::size_t i = n * t / kThreads; i < n * (t + 1) / kThreads; ++i) {
      const double x = static_cast<double>(i % 4096) / 4096.0, y = static_cast<double>(i / 4096) / 4096.0;
      out[i] = static_cast<float>(std::round((std::sin(6.0 * x) * std::cos(3.0 * y) * 10.0 + noise(rng)) * 64.0) / 64.0);
    }
  });
  return out;
}

struct Timing {
  double seconds = 0;
  int runs = 0;
};

// Median of CUDA-event timings of `run`: one warm-up, then at least 3 and at most `reps`
// runs, stopping after 3 once the runs have taken 2 s.
Timing time_events(int reps, const std::function<void()>& run) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<double> times;
  double spent = 0;
  for (int r = 0; r < reps + 1; ++r) {
    check(cudaEventRecord(start, nullptr), "event");
    run();
    check(cudaEventRecord(stop, nullptr), "event");
    check(cudaEventSynchronize(stop), "event");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "event");
    if (r == 0) continue;
    times.push_back(ms / 1e3);
    spent += ms / 1e3;
    if (times.size() >= 3 && spent > 2.0) break;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return {median(times), static_cast<int>(times.size())};
}

// One run of `run` between CUDA events, in seconds (the checked first run: a variant whose
// first run takes over 2 s is not run again, to keep the benchmark's time bounded).
double time_once(const std::function<void()>& run) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  check(cudaEventRecord(start, nullptr), "event");
  run();
  check(cudaEventRecord(stop, nullptr), "event");
  check(cudaEventSynchronize(stop), "event");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "event");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / 1e3;
}
constexpr double kSlowFirstRun = 2.0;

double time_host(const std::function<void()>& run) {
  std::vector<double> t;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = Clock::now();
    run();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return median(t);
}

struct Batch {
  std::vector<std::vector<std::uint8_t>> chunks;
  std::uint64_t compressed = 0;
};

// The compressed chunks laid out back to back on the device (256-byte aligned), with
// nvCOMP's pointer and size tables.
struct DeviceBatch {
  std::uint8_t* input = nullptr;
  std::uint8_t* output = nullptr;
  std::vector<std::uint64_t> offsets;
  void** d_in_ptrs = nullptr;
  void** d_out_ptrs = nullptr;
  std::size_t* d_in_sizes = nullptr;
  std::size_t* d_out_sizes = nullptr;
  std::size_t* d_actual = nullptr;
  int* d_status = nullptr;

  DeviceBatch(const Batch& b, std::size_t chunk_bytes) {
    const std::size_t n = b.chunks.size();
    std::vector<std::uint8_t> host;
    for (const auto& c : b.chunks) {
      offsets.push_back(host.size());
      host.insert(host.end(), c.begin(), c.end());
      host.resize((host.size() + 255) / 256 * 256);
    }
    check(cudaMalloc(&input, host.size()), "malloc");
    check(cudaMalloc(&output, n * chunk_bytes), "malloc");
    check(cudaMemcpy(input, host.data(), host.size(), cudaMemcpyHostToDevice), "copy");
    std::vector<void*> in_ptrs(n), out_ptrs(n);
    std::vector<std::size_t> in_sizes(n), out_sizes(n, chunk_bytes);
    for (std::size_t i = 0; i < n; ++i) {
      in_ptrs[i] = input + offsets[i];
      out_ptrs[i] = output + i * chunk_bytes;
      in_sizes[i] = b.chunks[i].size();
    }
    check(cudaMalloc(&d_in_ptrs, n * sizeof(void*)), "malloc");
    check(cudaMalloc(&d_out_ptrs, n * sizeof(void*)), "malloc");
    check(cudaMalloc(&d_in_sizes, n * sizeof(std::size_t)), "malloc");
    check(cudaMalloc(&d_out_sizes, n * sizeof(std::size_t)), "malloc");
    check(cudaMalloc(&d_actual, n * sizeof(std::size_t)), "malloc");
    check(cudaMalloc(&d_status, n * sizeof(int)), "malloc");
    check(cudaMemcpy(d_in_ptrs, in_ptrs.data(), n * sizeof(void*), cudaMemcpyHostToDevice), "copy");
    check(cudaMemcpy(d_out_ptrs, out_ptrs.data(), n * sizeof(void*), cudaMemcpyHostToDevice), "copy");
    check(cudaMemcpy(d_in_sizes, in_sizes.data(), n * sizeof(std::size_t), cudaMemcpyHostToDevice), "copy");
    check(cudaMemcpy(d_out_sizes, out_sizes.data(), n * sizeof(std::size_t), cudaMemcpyHostToDevice), "copy");
  }
  ~DeviceBatch() {
    for (void* p : {static_cast<void*>(input), static_cast<void*>(output), static_cast<void*>(d_in_ptrs),
                    static_cast<void*>(d_out_ptrs), static_cast<void*>(d_in_sizes), static_cast<void*>(d_out_sizes),
                    static_cast<void*>(d_actual), static_cast<void*>(d_status)}) {
      cudaFree(p);
    }
  }
  DeviceBatch(const DeviceBatch&) = delete;
  DeviceBatch& operator=(const DeviceBatch&) = delete;
};

// "" when the device output equals the original, else where it first differs.
std::string output_difference(const DeviceBatch& d, const std::vector<float>& original, std::size_t bytes,
                              std::size_t chunk_bytes) {
  std::vector<std::uint8_t> back(bytes);
  check(cudaMemcpy(back.data(), d.output, bytes, cudaMemcpyDeviceToHost), "copy");
  const auto* want = reinterpret_cast<const std::uint8_t*>(original.data());
  if (std::memcmp(back.data(), want, bytes) == 0) return "";
  const auto at = static_cast<std::size_t>(std::mismatch(back.begin(), back.end(), want).first - back.begin());
  return fmt::format("output differs from the original first at chunk {} byte {}", at / chunk_bytes, at % chunk_bytes);
}

// One measured line of a child: GB/s, or why there is none.
struct Measured {
  std::optional<double> gbs;
  int runs = 0;
  std::string problem;  // "" or MISMATCH ..., or why nvCOMP could not run
};

// nvCOMP on the batch: checked, then timed.
Measured run_nvcomp(NvcompCodec codec, const DeviceBatch& d, std::size_t count, std::size_t chunk_bytes,
                    const std::vector<float>& original, int reps) {
  Measured m;
  const Nvcomp* nv = Nvcomp::get();
  if (nv == nullptr) {
    m.problem = "nvCOMP not loaded: " + Nvcomp::reason();
    return m;
  }
  const std::size_t total = count * chunk_bytes;
  const std::size_t temp_bytes = nv->temp_bytes(codec, count, chunk_bytes, total);
  if (temp_bytes == static_cast<std::size_t>(-1)) {
    m.problem = fmt::format("nvCOMP {}: no temp size for {} KiB chunks", nvcomp_codec_name(codec), chunk_bytes >> 10);
    return m;
  }
  void* temp = nullptr;
  check(cudaMalloc(&temp, std::max<std::size_t>(temp_bytes, 1)), "malloc");
  int launch_status = 0;
  auto run = [&] {
    launch_status = nv->decompress(codec, d.d_in_ptrs, d.d_in_sizes, d.d_out_sizes, d.d_actual, count, temp,
                                   temp_bytes, d.d_out_ptrs, d.d_status, nullptr);
  };
  check(cudaMemset(d.output, 0xA5, total), "memset");
  const double first = time_once(run);
  check(cudaDeviceSynchronize(), "nvCOMP decode");
  std::vector<int> status(count);
  check(cudaMemcpy(status.data(), d.d_status, count * sizeof(int), cudaMemcpyDeviceToHost), "copy");
  const auto bad = std::count_if(status.begin(), status.end(), [](int s) { return s != 0; });
  if (launch_status != 0 || bad != 0) {
    m.problem = fmt::format("nvCOMP {}: launch status {}, {} chunks failed", nvcomp_codec_name(codec), launch_status, bad);
  } else if (std::string diff = output_difference(d, original, total, chunk_bytes); !diff.empty()) {
    m.problem = fmt::format("MISMATCH nvCOMP {}: {}", nvcomp_codec_name(codec), diff);
  } else {
    const Timing t = first > kSlowFirstRun ? Timing{first, 1} : time_events(reps, run);
    m.gbs = static_cast<double>(total) / t.seconds / 1e9;
    m.runs = t.runs;
  }
  cudaFree(temp);
  return m;
}

// zarrkit's job tables for LZ4 blocks or blosc chunks, on the device.
struct ZarrkitJobs {
  std::vector<gpu::StreamJob> streams;
  std::vector<gpu::BlockJob> blocks;
  gpu::StreamJob* d_streams = nullptr;
  gpu::BlockJob* d_blocks = nullptr;
  std::uint8_t* scratch = nullptr;
  std::int32_t* status = nullptr;
  std::size_t count = 0;

  ZarrkitJobs(bool blosc_chunks, const Batch& b, const DeviceBatch& d, std::size_t chunk_bytes) {
    count = b.chunks.size();
    for (std::size_t i = 0; i < count; ++i) {
      const auto& chunk = b.chunks[i];
      if (!blosc_chunks) {
        streams.push_back({d.offsets[i], i * chunk_bytes, static_cast<std::uint32_t>(chunk.size()),
                           static_cast<std::uint32_t>(chunk_bytes), static_cast<std::uint32_t>(i),
                           gpu::StreamCodec::kLz4, 0});
        continue;
      }
      auto jobs = gpu::plan_blosc_chunk({reinterpret_cast<const std::byte*>(chunk.data()), chunk.size()},
                                        SizeBound{chunk_bytes, true});
      if (!jobs) {
        std::cerr << "blosc chunk " << i << " not plannable\n";
        std::exit(2);
      }
      for (auto s : jobs->streams) {
        s.src += d.offsets[i];
        s.dst += i * chunk_bytes;
        s.chunk = static_cast<std::uint32_t>(i);
        streams.push_back(s);
      }
      for (auto k : jobs->blocks) {
        k.offset += i * chunk_bytes;
        k.chunk = static_cast<std::uint32_t>(i);
        blocks.push_back(k);
      }
    }
    check(cudaMalloc(&d_streams, streams.size() * sizeof(gpu::StreamJob)), "malloc");
    check(cudaMalloc(&d_blocks, std::max<std::size_t>(1, blocks.size()) * sizeof(gpu::BlockJob)), "malloc");
    check(cudaMalloc(&scratch, blocks.empty() ? 1 : count * chunk_bytes), "malloc");
    check(cudaMalloc(&status, count * sizeof(std::int32_t)), "malloc");
    check(cudaMemcpy(d_streams, streams.data(), streams.size() * sizeof(gpu::StreamJob), cudaMemcpyHostToDevice),
          "copy");
    if (!blocks.empty()) {
      check(cudaMemcpy(d_blocks, blocks.data(), blocks.size() * sizeof(gpu::BlockJob), cudaMemcpyHostToDevice), "copy");
    }
  }
  ~ZarrkitJobs() {
    cudaFree(d_streams);
    cudaFree(d_blocks);
    cudaFree(scratch);
    cudaFree(status);
  }
  ZarrkitJobs(const ZarrkitJobs&) = delete;
  ZarrkitJobs& operator=(const ZarrkitJobs&) = delete;
};

// One variant of zarrkit's kernels on the batch: checked, then timed.
Measured run_variant(DecodeVariant variant, const ZarrkitJobs& z, const DeviceBatch& d, std::size_t chunk_bytes,
                     const std::vector<float>& original, int reps) {
  Measured m;
  const std::size_t total = z.count * chunk_bytes;
  auto run = [&] {
    check(cudaMemsetAsync(z.status, 0, z.count * sizeof(std::int32_t), nullptr), "memset");
    check(gpu::launch_decode_streams(z.d_streams, static_cast<std::uint32_t>(z.streams.size()), d.input, d.output,
                                     z.scratch, z.status, nullptr, variant),
          "decode");
    check(gpu::launch_unshuffle_blocks(z.d_blocks, static_cast<std::uint32_t>(z.blocks.size()), z.scratch, d.output,
                                       z.status, nullptr),
          "unshuffle");
  };
  check(cudaMemset(d.output, 0xA5, total), "memset");
  const double first = time_once(run);
  check(cudaDeviceSynchronize(), "zarrkit decode");
  std::vector<std::int32_t> st(z.count);
  check(cudaMemcpy(st.data(), z.status, z.count * 4, cudaMemcpyDeviceToHost), "copy");
  const auto failed = std::find_if(st.begin(), st.end(), [](std::int32_t s) { return s != 0; });
  if (failed != st.end()) {
    m.problem = fmt::format("MISMATCH {}: chunk {} has status {} ({} chunks failed)", gpu::decode_variant_name(variant),
                            failed - st.begin(), *failed,
                            std::count_if(st.begin(), st.end(), [](std::int32_t s) { return s != 0; }));
    return m;
  }
  if (std::string diff = output_difference(d, original, total, chunk_bytes); !diff.empty()) {
    m.problem = fmt::format("MISMATCH {}: {}", gpu::decode_variant_name(variant), diff);
    return m;
  }
  const Timing t = first > kSlowFirstRun ? Timing{first, 1} : time_events(reps, run);
  m.gbs = static_cast<double>(total) / t.seconds / 1e9;
  m.runs = t.runs;
  return m;
}

Batch compress(const std::string& codec, const std::vector<float>& original, std::size_t count, std::size_t chunk_bytes) {
  Batch b;
  b.chunks.resize(count);
  parallel(count, kThreads, [&](std::size_t i) {
    const auto* src = reinterpret_cast<const char*>(original.data()) + i * chunk_bytes;
    auto& out = b.chunks[i];
    if (codec == "lz4") {
      out.resize(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(chunk_bytes))));
      out.resize(static_cast<std::size_t>(LZ4_compress_default(src, reinterpret_cast<char*>(out.data()),
                                                                static_cast<int>(chunk_bytes), static_cast<int>(out.size()))));
    } else if (codec == "blosc-lz4") {
      out.resize(chunk_bytes + BLOSC_MAX_OVERHEAD);
      out.resize(static_cast<std::size_t>(
          blosc_compress_ctx(5, BLOSC_SHUFFLE, 4, chunk_bytes, src, out.data(), out.size(), "lz4", 0, 1)));
    } else if (codec == "zstd") {
      out.resize(ZSTD_compressBound(chunk_bytes));
      out.resize(ZSTD_compress(out.data(), out.size(), src, chunk_bytes, 1));
    } else {  // gzip level 1, as numcodecs / zarr-python's gzip codec writes it
      libdeflate_compressor* c = libdeflate_alloc_compressor(1);
      out.resize(libdeflate_gzip_compress_bound(c, chunk_bytes));
      out.resize(libdeflate_gzip_compress(c, src, chunk_bytes, out.data(), out.size()));
      libdeflate_free_compressor(c);
    }
  });
  for (const auto& c : b.chunks) b.compressed += c.size();
  return b;
}

// The same chunks decoded on the host with every thread (what zarrkit does for zstd/gzip);
// nullopt when a chunk does not decode to its original.
std::optional<double> run_cpu(const std::string& codec, const Batch& b, std::size_t chunk_bytes,
                              const std::vector<float>& original) {
  const std::size_t count = b.chunks.size();
  std::vector<std::uint8_t> out(count * chunk_bytes);
  auto one = [&](std::size_t i) {
    const auto& c = b.chunks[i];
    std::uint8_t* dst = out.data() + i * chunk_bytes;
    if (codec == "lz4") {
      LZ4_decompress_safe(reinterpret_cast<const char*>(c.data()), reinterpret_cast<char*>(dst), static_cast<int>(c.size()),
                          static_cast<int>(chunk_bytes));
    } else if (codec == "blosc-lz4") {
      blosc_decompress_ctx(c.data(), dst, chunk_bytes, 1);
    } else if (codec == "zstd") {
      ZSTD_decompress(dst, chunk_bytes, c.data(), c.size());
    } else {
      libdeflate_decompressor* d = libdeflate_alloc_decompressor();
      libdeflate_gzip_decompress(d, c.data(), c.size(), dst, chunk_bytes, nullptr);
      libdeflate_free_decompressor(d);
    }
  };
  const double seconds = time_host([&] { parallel(count, kThreads, one); });
  if (std::memcmp(out.data(), original.data(), out.size()) != 0) return std::nullopt;
  return static_cast<double>(count * chunk_bytes) / seconds / 1e9;
}

// ---- One case (codec x chunk size) in a child process -------------------------------------
//
// The child reports lines on its pipe:
//   device <SMs> <name>
//   streams <n>
//   start <name>
//   done <name> <GB/s or -> <runs> <problem or nothing>

struct Case {
  std::string codec;
  std::size_t kib = 0, chunks = 0;
  double ratio = 0;
  std::optional<double> cpu_gbs;
  std::size_t streams = 0;
  std::map<std::string, Measured> measured;  // by variant name, "nvcomp" for nvCOMP
  std::vector<std::string> order;
};

struct DeviceInfo {
  std::string name;
  int sms = 0;
};

void child_main(const std::string& codec, const Batch& b, std::size_t chunk_bytes, const std::vector<float>& original,
                const std::vector<std::string>& names, int reps) {
  if (!gpu_available()) {
    report("error no CUDA device: " + gpu_unavailable_reason());
    return;
  }
  install_gpu_support();
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  report(fmt::format("device {} {}", prop.multiProcessorCount, prop.name));
  const std::size_t count = b.chunks.size();
  DeviceBatch d(b, chunk_bytes);
  std::optional<ZarrkitJobs> z;
  if (codec == "lz4" || codec == "blosc-lz4") {
    z.emplace(codec == "blosc-lz4", b, d, chunk_bytes);
    report(fmt::format("streams {}", z->streams.size()));
  }
  for (const std::string& name : names) {
    report("start " + name);
    Measured m;
    if (name == "nvcomp") {
      const NvcompCodec nc = codec == "lz4" ? NvcompCodec::kLz4 : codec == "zstd" ? NvcompCodec::kZstd : NvcompCodec::kGzip;
      m = run_nvcomp(nc, d, count, chunk_bytes, original, reps);
    } else {
      DecodeVariant variant = DecodeVariant::kDirect;
      for (DecodeVariant v : kAllVariants) {
        if (name == gpu::decode_variant_name(v)) variant = v;
      }
      m = run_variant(variant, *z, d, chunk_bytes, original, reps);
    }
    report(fmt::format("done {} {} {} {}", name, m.gbs ? fmt::format("{:.4f}", *m.gbs) : "-", m.runs, m.problem));
  }
}

// Runs the case's GPU measurements in children until every one is done, restarting after
// a child that died (the variant it was on is reported as such).
void run_case_on_gpu(Case& c, const Batch& b, std::size_t chunk_bytes, const std::vector<float>& original,
                     std::vector<std::string> unmeasured, int reps, DeviceInfo& device) {
  while (!unmeasured.empty()) {
    int fds[2];
    if (pipe(fds) != 0) {
      std::perror("pipe");
      std::exit(2);
    }
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // ends with the parent (a `timeout` around the benchmark)
      close(fds[0]);
      g_report_fd = fds[1];
      child_main(c.codec, b, chunk_bytes, original, unmeasured, reps);
      std::fflush(stdout);
      std::_Exit(0);
    }
    close(fds[1]);
    std::string pending, current, error;
    bool hung = false;
    auto handle = [&](const std::string& line) {
      std::istringstream in(line);
      std::string what;
      in >> what;
      if (what == "device") {
        in >> device.sms;
        std::getline(in >> std::ws, device.name);
      } else if (what == "streams") {
        in >> c.streams;
      } else if (what == "start") {
        in >> current;
      } else if (what == "done") {
        std::string name, gbs;
        Measured m;
        in >> name >> gbs >> m.runs;
        std::getline(in >> std::ws, m.problem);
        if (gbs != "-") m.gbs = std::stod(gbs);
        c.measured[name] = m;
        unmeasured.erase(std::remove(unmeasured.begin(), unmeasured.end(), name), unmeasured.end());
        current.clear();
      } else if (what == "error") {
        std::getline(in >> std::ws, error);
      }
    };
    for (;;) {
      pollfd p{fds[0], POLLIN, 0};
      const int ready = poll(&p, 1, 60000);
      if (ready == 0) {  // no progress for a minute: a hung kernel
        hung = true;
        kill(pid, SIGKILL);
        break;
      }
      char buffer[4096];
      const ssize_t n = read(fds[0], buffer, sizeof buffer);
      if (n <= 0) break;
      pending.append(buffer, static_cast<std::size_t>(n));
      for (std::size_t eol; (eol = pending.find('\n')) != std::string::npos;) {
        handle(pending.substr(0, eol));
        pending.erase(0, eol + 1);
      }
    }
    close(fds[0]);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    if (!error.empty()) {  // no device: nothing on the GPU can run
      std::cerr << error << "\n";
      std::exit(1);
    }
    if (!current.empty()) {
      Measured& m = c.measured[current];
      m.problem = hung ? "FAILED: no progress for 60 s (killed)"
                       : WIFSIGNALED(wstatus) ? fmt::format("FAILED: the process died of signal {}", WTERMSIG(wstatus))
                                              : fmt::format("FAILED: the process exited with {} (a CUDA error, see above)",
                                                            WEXITSTATUS(wstatus));
      unmeasured.erase(std::remove(unmeasured.begin(), unmeasured.end(), current), unmeasured.end());
    } else if (!unmeasured.empty()) {
      for (const auto& name : unmeasured) c.measured[name].problem = "FAILED: the process ended before it";
      return;
    }
  }
}

std::string cell(const std::optional<double>& v) { return v ? fmt::format("{:.1f}", *v) : "-"; }
std::string json_number(const std::optional<double>& v) { return v ? fmt::format("{:.3f}", *v) : "null"; }
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

std::vector<std::size_t> parse_sizes(const std::string& list) {
  std::vector<std::size_t> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoul(item));
  return out;
}

std::vector<std::string> parse_names(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t total_mib = 1024;
  int reps = 10;
  std::vector<std::size_t> chunk_kibs = {64, 1024, 16384};
  std::optional<std::vector<std::size_t>> blosc_kibs;
  std::vector<std::string> codecs = {"lz4", "blosc-lz4", "zstd", "gzip"};
  std::string variants_arg;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--total-mib" && i + 1 < argc) {
      total_mib = std::stoul(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(3, std::stoi(argv[++i]));
    } else if (a == "--chunk-kib" && i + 1 < argc) {
      chunk_kibs = parse_sizes(argv[++i]);
    } else if (a == "--blosc-chunk-kib" && i + 1 < argc) {
      blosc_kibs = parse_sizes(argv[++i]);
    } else if (a == "--codecs" && i + 1 < argc) {
      codecs = parse_names(argv[++i]);
    } else if (a == "--variants" && i + 1 < argc) {
      variants_arg = argv[++i];
    } else if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::cerr << "usage: zarrkit_s7_bench [--total-mib N] [--reps N] [--chunk-kib A,B,...] [--codecs lz4,blosc-lz4,"
                   "zstd,gzip] [--blosc-chunk-kib A,B,...] [--variants all|NAME,...] [--json FILE]\n";
      return 1;
    }
  }
  std::vector<std::string> variant_names;  // the read path's kernel first
  if (variants_arg == "all") {
    for (DecodeVariant v : kAllVariants) variant_names.push_back(gpu::decode_variant_name(v));
  } else {
    variant_names = parse_names(variants_arg);
    for (const auto& name : variant_names) {
      if (std::none_of(std::begin(kAllVariants), std::end(kAllVariants),
                       [&](DecodeVariant v) { return name == gpu::decode_variant_name(v); })) {
        std::cerr << "unknown variant " << name << "\n";
        return 1;
      }
    }
    std::erase(variant_names, kReadPathVariant);
    variant_names.insert(variant_names.begin(), kReadPathVariant);
  }
  const std::size_t total = total_mib << 20;
  const auto t_start = Clock::now();
  const std::vector<float> original = family_n(total / 4);
  std::vector<Case> cases;
  DeviceInfo device;
  bool failures = false;
  for (const std::string& codec : codecs) {
    const auto& kibs = codec == "blosc-lz4" && blosc_kibs ? *blosc_kibs : chunk_kibs;
    for (const std::size_t kib : kibs) {
      const std::size_t chunk_bytes = kib << 10, count = total / chunk_bytes;
      Case c;
      c.codec = codec;
      c.kib = kib;
      c.chunks = count;
      const Batch b = compress(codec, original, count, chunk_bytes);
      c.ratio = static_cast<double>(count * chunk_bytes) / static_cast<double>(b.compressed);
      c.cpu_gbs = run_cpu(codec, b, chunk_bytes, original);
      std::vector<std::string> unmeasured;
      const bool zarrkit_gpu = codec == "lz4" || codec == "blosc-lz4";
      if (zarrkit_gpu) unmeasured = variant_names;
      if (codec != "blosc-lz4") unmeasured.push_back("nvcomp");
      c.order = unmeasured;
      run_case_on_gpu(c, b, chunk_bytes, original, unmeasured, reps, device);
      cases.push_back(std::move(c));
      const Case& r = cases.back();
      // Progress, one line per case (the tables follow at the end).
      std::string line = fmt::format("{} {} KiB: {} chunks, ratio {:.2f}, CPU {} GB/s", r.codec, r.kib, r.chunks,
                                     r.ratio, cell(r.cpu_gbs));
      for (const auto& name : r.order) {
        const auto it = r.measured.find(name);
        if (it == r.measured.end()) continue;
        line += fmt::format("; {} {}", name, cell(it->second.gbs));
        if (!it->second.problem.empty()) {
          line += " [" + it->second.problem + "]";
          if (name != "nvcomp" || it->second.problem.rfind("MISMATCH", 0) == 0) failures = true;
        }
      }
      if (!r.cpu_gbs) {
        line += " [the CPU decode differs from the original]";
        failures = true;
      }
      fmt::print("{} (t={:.0f} s)\n", line, std::chrono::duration<double>(Clock::now() - t_start).count());
      std::fflush(stdout);
    }
  }

  fmt::print("\nS7 kernel-only batched decode on {} ({} SMs), {} MiB of family-N float32 per batch, medians of "
             "CUDA-event timings; CPU: {} threads\n\n",
             device.name, device.sms, total_mib, kThreads);
  // The S7 table: zarrkit's read-path kernel against nvCOMP.
  fmt::print("| codec | chunk KiB | chunks | ratio | streams | zarrkit GPU GB/s (kernel) | nvCOMP GB/s | zarrkit / nvCOMP "
             "| CPU GB/s |\n|---|---|---|---|---|---|---|---|---|\n");
  for (const Case& c : cases) {
    std::optional<double> ours, theirs;
    if (auto it = c.measured.find(kReadPathVariant); it != c.measured.end()) ours = it->second.gbs;
    if (auto it = c.measured.find("nvcomp"); it != c.measured.end()) theirs = it->second.gbs;
    fmt::print("| {} | {} | {} | {:.2f} | {} | {} | {} | {} | {} |\n", c.codec, c.kib, c.chunks, c.ratio,
               c.streams ? std::to_string(c.streams) : "-",
               ours ? fmt::format("{:.1f} ({})", *ours, kReadPathVariant) : "-", cell(theirs),
               ours && theirs ? fmt::format("{:.2f}x", *ours / *theirs) : "-", cell(c.cpu_gbs));
  }
  if (variant_names.size() > 1) {
    // Every variant on the same chunks: GB/s, and the best against nvCOMP and the CPU.
    fmt::print("\n| codec | chunk KiB | streams |");
    for (const auto& n : variant_names) fmt::print(" {} |", n);
    fmt::print(" best | best / nvCOMP | best / CPU |\n|---|---|---|");
    for (std::size_t k = 0; k < variant_names.size() + 3; ++k) fmt::print("---|");
    fmt::print("\n");
    for (const Case& c : cases) {
      if (c.codec != "lz4" && c.codec != "blosc-lz4") continue;
      fmt::print("| {} | {} | {} |", c.codec, c.kib, c.streams);
      std::string best;
      double best_gbs = 0;
      for (const auto& n : variant_names) {
        const auto it = c.measured.find(n);
        const bool bad = it == c.measured.end() || !it->second.problem.empty();
        fmt::print(" {} |", it == c.measured.end() ? "-" : bad ? "FAILED" : cell(it->second.gbs));
        if (!bad && it->second.gbs && *it->second.gbs > best_gbs) {
          best_gbs = *it->second.gbs;
          best = n;
        }
      }
      std::optional<double> theirs;
      if (auto it = c.measured.find("nvcomp"); it != c.measured.end()) theirs = it->second.gbs;
      fmt::print(" {} | {} | {} |\n", best.empty() ? "-" : best,
                 theirs && best_gbs > 0 ? fmt::format("{:.2f}x", best_gbs / *theirs) : "-",
                 c.cpu_gbs && best_gbs > 0 ? fmt::format("{:.2f}x", best_gbs / *c.cpu_gbs) : "-");
    }
  }
  // The long-block rule (gpu/device_read.h): blocks per batch at which one warp per block
  // would beat the host's threads, from the largest LZ4 blocks measured.
  for (auto it = cases.rbegin(); it != cases.rend(); ++it) {
    if (it->codec != "lz4" || (it->kib << 10) <= gpu::kLongLz4BlockBytes || !it->cpu_gbs) continue;
    double best_gbs = 0;
    for (const auto& n : variant_names) {
      const auto m = it->measured.find(n);
      if (m != it->measured.end() && m->second.problem.empty() && m->second.gbs) best_gbs = std::max(best_gbs, *m->second.gbs);
    }
    if (best_gbs <= 0) break;
    const double per_warp = best_gbs / static_cast<double>(it->chunks);
    fmt::print("\nlong LZ4 blocks ({} KiB, {} per batch): {:.0f} MB/s per warp; the CPU {:.1f} GB/s; the GPU wins "
               "from {:.0f} blocks per batch (gpu/device_read.h: blocks over {} KiB decode on the host)\n",
               it->kib, it->chunks, per_warp * 1e3, *it->cpu_gbs, *it->cpu_gbs / per_warp,
               gpu::kLongLz4BlockBytes >> 10);
    break;
  }
  // Every problem, loudly.
  for (const Case& c : cases) {
    for (const auto& [name, m] : c.measured) {
      if (!m.problem.empty()) fmt::print("{} {} KiB {}: {}\n", c.codec, c.kib, name, m.problem);
    }
  }
  fmt::print("total {:.0f} s\n", std::chrono::duration<double>(Clock::now() - t_start).count());

  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << "{\"scenario\": \"S7\", \"device\": " << json_string(device.name) << ", \"total_mib\": " << total_mib
        << ", \"reps\": " << reps << ", \"host_threads\": " << kThreads << ", \"rows\": [";
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      std::optional<double> ours, theirs;
      if (auto it = c.measured.find(kReadPathVariant); it != c.measured.end()) ours = it->second.gbs;
      if (auto it = c.measured.find("nvcomp"); it != c.measured.end()) theirs = it->second.gbs;
      out << (i ? ", " : "")
          << fmt::format("{{\"codec\": \"{}\", \"chunk_kib\": {}, \"chunks\": {}, \"streams\": {}, \"ratio\": {:.3f}, "
                         "\"zarrkit_gbs\": {}, \"zarrkit_kernel\": \"{}\", \"nvcomp_gbs\": {}, \"cpu_gbs\": {}, "
                         "\"variants\": {{",
                         c.codec == "zstd" ? "zstd 1" : c.codec == "gzip" ? "gzip 1" : c.codec, c.kib, c.chunks,
                         c.streams, c.ratio, json_number(ours), ours ? kReadPathVariant : "", json_number(theirs),
                         json_number(c.cpu_gbs));
      bool first = true;
      for (const auto& [name, m] : c.measured) {
        out << (first ? "" : ", ")
            << fmt::format("\"{}\": {{\"gbs\": {}, \"runs\": {}, \"problem\": {}}}", name, json_number(m.gbs), m.runs,
                           json_string(m.problem));
        first = false;
      }
      out << "}}";
    }
    out << "]}\n";
  }
  return failures ? 3 : 0;
}
