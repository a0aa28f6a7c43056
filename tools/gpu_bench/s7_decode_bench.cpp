// zarrkit_s7_bench: scenario S7 of BENCHMARKS.md, kernel-only batched decode, zarrkit's
// kernels against nvCOMP's batched decoders on the same chunks in the same device buffers.
//
//   zarrkit_s7_bench [--total-mib 1024] [--reps 10] [--chunk-kib 64,1024,16384] [--json FILE]
//
// Data: family N (smooth field + noise rounded to 1/64, float32). For each chunk size:
//   lz4        raw LZ4 blocks (liblz4), one per chunk: zarrkit's decode kernel | nvCOMP LZ4
//   blosc-lz4  c-blosc lz4 + byte shuffle (zarrkit only: nvCOMP has no blosc decoder)
//   zstd 1     zstd frames: nvCOMP Zstd | libzstd on every host thread (zarrkit's path)
//   gzip 1     gzip members (libdeflate): nvCOMP Gzip | libdeflate on every host thread
// Each GPU output is poisoned, decoded and compared with the original before it is timed;
// times are CUDA events around the decode launches only (median of --reps after 2 warm-ups).
// nvCOMP is loaded at run time (gpu/nvcomp_runtime.h); without it those columns stay empty.
#include <blosc.h>
#include <cuda_runtime.h>
#include <libdeflate.h>
#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "gpu/chunk_plan.h"
#include "gpu/kernels.h"
#include "gpu/nvcomp_runtime.h"
#include "zarrkit/gpu.h"

namespace {

using namespace zarrkit;
using gpu::Nvcomp;
using gpu::NvcompCodec;
using gpu::nvcomp_codec_name;
using Clock = std::chrono::steady_clock;

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

// One GPU-timed operation: median seconds of `reps` runs of `run` (after 2 warm-ups).
double time_events(int reps, const std::function<void()>& run) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<double> times;
  for (int r = 0; r < reps + 2; ++r) {
    check(cudaEventRecord(start, nullptr), "event");
    run();
    check(cudaEventRecord(stop, nullptr), "event");
    check(cudaEventSynchronize(stop), "event");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "event");
    if (r >= 2) times.push_back(ms / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(times);
}

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

struct Row {
  std::string codec;
  std::size_t chunk_kib = 0, chunks = 0;
  double ratio = 0;
  std::optional<double> zarrkit_gbs, nvcomp_gbs, cpu_gbs;
  std::string note;
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

bool output_matches(const DeviceBatch& d, const std::vector<float>& original, std::size_t bytes) {
  std::vector<std::uint8_t> back(bytes);
  check(cudaMemcpy(back.data(), d.output, bytes, cudaMemcpyDeviceToHost), "copy");
  return std::memcmp(back.data(), original.data(), bytes) == 0;
}

// nvCOMP on the batch: checked, then timed. nullopt (with a note) when it is missing or fails.
std::optional<double> run_nvcomp(NvcompCodec codec, const DeviceBatch& d, std::size_t count, std::size_t chunk_bytes,
                                 const std::vector<float>& original, int reps, std::string& note) {
  const Nvcomp* nv = Nvcomp::get();
  if (nv == nullptr) {
    note = Nvcomp::reason();
    return std::nullopt;
  }
  const std::size_t total = count * chunk_bytes;
  const std::size_t temp_bytes = nv->temp_bytes(codec, count, chunk_bytes, total);
  if (temp_bytes == static_cast<std::size_t>(-1)) {
    note = fmt::format("nvCOMP {}: no temp size for {} KiB chunks", nvcomp_codec_name(codec), chunk_bytes >> 10);
    return std::nullopt;
  }
  void* temp = nullptr;
  check(cudaMalloc(&temp, std::max<std::size_t>(temp_bytes, 1)), "malloc");
  int launch_status = 0;
  auto run = [&] {
    launch_status = nv->decompress(codec, d.d_in_ptrs, d.d_in_sizes, d.d_out_sizes, d.d_actual, count, temp,
                                   temp_bytes, d.d_out_ptrs, d.d_status, nullptr);
  };
  check(cudaMemset(d.output, 0xA5, total), "memset");
  run();
  check(cudaDeviceSynchronize(), "nvCOMP decode");
  std::vector<int> status(count);
  check(cudaMemcpy(status.data(), d.d_status, count * sizeof(int), cudaMemcpyDeviceToHost), "copy");
  const auto bad = std::count_if(status.begin(), status.end(), [](int s) { return s != 0; });
  std::optional<double> result;
  if (launch_status != 0 || bad != 0) {
    note = fmt::format("nvCOMP {}: launch status {}, {} chunks failed (first status {})", nvcomp_codec_name(codec),
                       launch_status, bad, bad ? *std::find_if(status.begin(), status.end(), [](int s) { return s != 0; }) : 0);
  } else if (!output_matches(d, original, total)) {
    note = fmt::format("nvCOMP {}: output differs from the original", nvcomp_codec_name(codec));
  } else {
    result = static_cast<double>(total) / time_events(reps, run) / 1e9;
  }
  cudaFree(temp);
  return result;
}

// zarrkit's kernels on LZ4 blocks or blosc chunks: checked, then timed.
double run_zarrkit(bool blosc_chunks, const Batch& b, const DeviceBatch& d, std::size_t chunk_bytes,
                   const std::vector<float>& original, int reps, std::size_t& stream_count) {
  const std::size_t count = b.chunks.size(), total = count * chunk_bytes;
  std::vector<gpu::StreamJob> streams;
  std::vector<gpu::BlockJob> blocks;
  for (std::size_t i = 0; i < count; ++i) {
    const auto& chunk = b.chunks[i];
    if (!blosc_chunks) {
      streams.push_back({d.offsets[i], i * chunk_bytes, static_cast<std::uint32_t>(chunk.size()),
                         static_cast<std::uint32_t>(chunk_bytes), static_cast<std::uint32_t>(i), gpu::StreamCodec::kLz4,
                         0});
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
  stream_count = streams.size();
  gpu::StreamJob* d_streams = nullptr;
  gpu::BlockJob* d_blocks = nullptr;
  std::uint8_t* scratch = nullptr;
  std::int32_t* status = nullptr;
  check(cudaMalloc(&d_streams, streams.size() * sizeof(gpu::StreamJob)), "malloc");
  check(cudaMalloc(&d_blocks, std::max<std::size_t>(1, blocks.size()) * sizeof(gpu::BlockJob)), "malloc");
  check(cudaMalloc(&scratch, blocks.empty() ? 1 : total), "malloc");
  check(cudaMalloc(&status, count * sizeof(std::int32_t)), "malloc");
  check(cudaMemcpy(d_streams, streams.data(), streams.size() * sizeof(gpu::StreamJob), cudaMemcpyHostToDevice), "copy");
  if (!blocks.empty()) {
    check(cudaMemcpy(d_blocks, blocks.data(), blocks.size() * sizeof(gpu::BlockJob), cudaMemcpyHostToDevice), "copy");
  }
  auto run = [&] {
    check(cudaMemsetAsync(status, 0, count * sizeof(std::int32_t), nullptr), "memset");
    check(gpu::launch_decode_streams(d_streams, static_cast<std::uint32_t>(streams.size()), d.input, d.output, scratch,
                                     status, nullptr),
          "decode");
    check(gpu::launch_unshuffle_blocks(d_blocks, static_cast<std::uint32_t>(blocks.size()), scratch, d.output, status,
                                       nullptr),
          "unshuffle");
  };
  check(cudaMemset(d.output, 0xA5, total), "memset");
  run();
  check(cudaDeviceSynchronize(), "zarrkit decode");
  std::vector<std::int32_t> st(count);
  check(cudaMemcpy(st.data(), status, count * 4, cudaMemcpyDeviceToHost), "copy");
  if (std::any_of(st.begin(), st.end(), [](std::int32_t s) { return s != 0; }) || !output_matches(d, original, total)) {
    std::cerr << "zarrkit decode of " << (blosc_chunks ? "blosc" : "LZ4") << " chunks differs from the original\n";
    std::exit(3);
  }
  const double seconds = time_events(reps, run);
  cudaFree(d_streams);
  cudaFree(d_blocks);
  cudaFree(scratch);
  cudaFree(status);
  return static_cast<double>(total) / seconds / 1e9;
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

// The same chunks decoded on the host with every thread (what zarrkit does for zstd/gzip).
double run_cpu(const std::string& codec, const Batch& b, std::size_t chunk_bytes) {
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
  return static_cast<double>(count * chunk_bytes) / seconds / 1e9;
}

std::string cell(const std::optional<double>& v) { return v ? fmt::format("{:.1f}", *v) : "-"; }
std::string json_number(const std::optional<double>& v) { return v ? fmt::format("{:.3f}", *v) : "null"; }

}  // namespace

int main(int argc, char** argv) {
  std::size_t total_mib = 1024;
  int reps = 10;
  std::vector<std::size_t> chunk_kibs = {64, 1024, 16384};
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--total-mib" && i + 1 < argc) {
      total_mib = std::stoul(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::stoi(argv[++i]);
    } else if (a == "--chunk-kib" && i + 1 < argc) {
      chunk_kibs.clear();
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');) chunk_kibs.push_back(std::stoul(item));
    } else if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::cerr << "usage: zarrkit_s7_bench [--total-mib N] [--reps N] [--chunk-kib A,B,...] [--json FILE]\n";
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
  const std::vector<float> original = family_n(total / 4);
  const Nvcomp* nv = Nvcomp::get();
  fmt::print("S7 kernel-only batched decode on {} ({} SMs), {} MiB of family-N float32 per batch, median of {} "
             "(CUDA events); nvCOMP: {}\n",
             prop.name, prop.multiProcessorCount, total_mib, reps, nv ? nv->path : Nvcomp::reason());
  fmt::print("| codec | chunk KiB | chunks | ratio | zarrkit GPU GB/s | nvCOMP GB/s | zarrkit / nvCOMP | CPU {} threads GB/s "
             "| streams |\n|---|---|---|---|---|---|---|---|---|\n",
             kThreads);
  std::vector<Row> rows;
  for (const std::size_t kib : chunk_kibs) {
    const std::size_t chunk_bytes = kib << 10, count = total / chunk_bytes;
    for (const std::string codec : {"lz4", "blosc-lz4", "zstd", "gzip"}) {
      const Batch b = compress(codec, original, count, chunk_bytes);
      DeviceBatch d(b, chunk_bytes);
      Row r;
      r.codec = codec == "zstd" ? "zstd 1" : codec == "gzip" ? "gzip 1" : codec;
      r.chunk_kib = kib;
      r.chunks = count;
      r.ratio = static_cast<double>(count * chunk_bytes) / static_cast<double>(b.compressed);
      std::size_t streams = 0;
      if (codec == "lz4" || codec == "blosc-lz4") {
        r.zarrkit_gbs = run_zarrkit(codec == "blosc-lz4", b, d, chunk_bytes, original, reps, streams);
      }
      if (codec != "blosc-lz4") {
        const NvcompCodec nc = codec == "lz4" ? NvcompCodec::kLz4 : codec == "zstd" ? NvcompCodec::kZstd : NvcompCodec::kGzip;
        r.nvcomp_gbs = run_nvcomp(nc, d, count, chunk_bytes, original, reps, r.note);
      }
      r.cpu_gbs = run_cpu(codec, b, chunk_bytes);
      const std::string ratio =
          r.zarrkit_gbs && r.nvcomp_gbs ? fmt::format("{:.2f}x", *r.zarrkit_gbs / *r.nvcomp_gbs) : "-";
      fmt::print("| {} | {} | {} | {:.2f} | {} | {} | {} | {} | {} |{}\n", r.codec, kib, count, r.ratio,
                 cell(r.zarrkit_gbs), cell(r.nvcomp_gbs), ratio, cell(r.cpu_gbs), streams ? std::to_string(streams) : "-",
                 r.note.empty() ? "" : " " + r.note);
      std::fflush(stdout);
      rows.push_back(r);
    }
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << "{\"scenario\": \"S7\", \"device\": \"" << prop.name << "\", \"total_mib\": " << total_mib
        << ", \"reps\": " << reps << ", \"host_threads\": " << kThreads << ", \"rows\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      out << (i ? ", " : "") << fmt::format(
          "{{\"codec\": \"{}\", \"chunk_kib\": {}, \"chunks\": {}, \"ratio\": {:.3f}, \"zarrkit_gbs\": {}, "
          "\"nvcomp_gbs\": {}, \"cpu_gbs\": {}}}",
          r.codec, r.chunk_kib, r.chunks, r.ratio, json_number(r.zarrkit_gbs), json_number(r.nvcomp_gbs),
          json_number(r.cpu_gbs));
    }
    out << "]}\n";
  }
  return 0;
}
