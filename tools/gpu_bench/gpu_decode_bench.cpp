// zarrkit_gpu_bench: batched GPU decode throughput against the CPU codecs, and reads of a
// local array into device memory. Logical (decoded) GB/s; medians of repeated runs; the
// GPU output is checked against the original data before anything is timed.
//
//   zarrkit_gpu_bench [--total-mib 1024] [--chunk-kib 1024] [--reps 10] [--array-dir DIR]
//                     [--no-array] [--no-kernels]
//
// 1. Kernel-only decode of one batch of chunks (data already on the device): raw LZ4 blocks
//    and blosc (lz4 inside, byte shuffle, typesize 4), timed with CUDA events; the same
//    chunks decoded by liblz4 / c-blosc on 1 thread and on every hardware thread.
// 2. Array::read_into a device array from a local store (page cache warm) for blosc-lz4,
//    against the CPU read into host memory followed by one copy to the device.
// Writes from device memory are measured by zarrkit_gpu_write_bench.
#include <blosc.h>
#include <cuda_runtime.h>
#include <lz4.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench_data.h"
#include "gpu/codecs/blosc_device.h"
#include "gpu/device_read.h"
#include "gpu/kernels.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/gpu.h"
#include "zarrkit/stores/local_store.h"

namespace {

using namespace zarrkit;
using bench::fill_family_n;
using bench::median;
using bench::parallel;
using Clock = std::chrono::steady_clock;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::cerr << what << ": " << cudaGetErrorString(e) << "\n";
    std::exit(2);
  }
}

struct Compressed {
  std::vector<std::vector<std::uint8_t>> chunks;
  std::uint64_t compressed_bytes = 0;
};

struct KernelResult {
  std::string codec;
  double ratio, gpu_gbs, gpu_uncapped_gbs, gpu_staged_gbs, cpu1_gbs, cpuall_gbs;
  std::size_t streams;
};

// Times the kernel-only decode of `c` (chunks of `chunk_bytes` each).
KernelResult bench_kernels(const std::string& codec, const Compressed& c, const std::vector<float>& original,
                           std::size_t chunk_bytes, int reps) {
  const std::size_t count = c.chunks.size();
  const std::size_t total = count * chunk_bytes;
  // Lay the compressed chunks out back to back and build the job tables.
  std::vector<std::uint8_t> input;
  std::vector<gpu::StreamJob> streams;
  std::vector<gpu::BlockJob> blocks;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t at = input.size();
    const auto& chunk = c.chunks[i];
    if (codec == "lz4") {
      streams.push_back({at, i * chunk_bytes, static_cast<std::uint32_t>(chunk.size()),
                         static_cast<std::uint32_t>(chunk_bytes), static_cast<std::uint32_t>(i), gpu::StreamCodec::kLz4, 0});
    } else {
      auto jobs = gpu::plan_blosc_chunk({reinterpret_cast<const std::byte*>(chunk.data()), chunk.size()},
                                        SizeBound{chunk_bytes, true});
      if (!jobs) {
        std::cerr << "blosc chunk " << i << " not plannable\n";
        std::exit(2);
      }
      for (auto s : jobs->streams) {
        s.src += at;
        s.dst += i * chunk_bytes;
        s.chunk = static_cast<std::uint32_t>(i);
        streams.push_back(s);
      }
      for (auto b : jobs->blocks) {
        b.offset += i * chunk_bytes;
        b.chunk = static_cast<std::uint32_t>(i);
        blocks.push_back(b);
      }
    }
    input.insert(input.end(), chunk.begin(), chunk.end());
    input.resize((input.size() + 255) / 256 * 256);
  }
  std::uint8_t *d_in, *d_out, *d_scratch;
  gpu::StreamJob* d_streams;
  gpu::BlockJob* d_blocks;
  std::int32_t* d_status;
  check(cudaMalloc(&d_in, input.size()), "malloc");
  check(cudaMalloc(&d_out, total), "malloc");
  check(cudaMalloc(&d_scratch, total), "malloc");
  check(cudaMalloc(&d_streams, streams.size() * sizeof(gpu::StreamJob)), "malloc");
  check(cudaMalloc(&d_blocks, std::max<std::size_t>(1, blocks.size()) * sizeof(gpu::BlockJob)), "malloc");
  check(cudaMalloc(&d_status, count * sizeof(std::int32_t)), "malloc");
  check(cudaMemcpy(d_in, input.data(), input.size(), cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(d_streams, streams.data(), streams.size() * sizeof(gpu::StreamJob), cudaMemcpyHostToDevice), "copy");
  if (!blocks.empty()) {
    check(cudaMemcpy(d_blocks, blocks.data(), blocks.size() * sizeof(gpu::BlockJob), cudaMemcpyHostToDevice), "copy");
  }
  auto variant = gpu::DecodeVariant::kDirect;
  auto run = [&] {
    check(cudaMemsetAsync(d_status, 0, count * sizeof(std::int32_t), nullptr), "memset");
    check(gpu::launch_decode_streams(d_streams, static_cast<std::uint32_t>(streams.size()), d_in, d_out, d_scratch,
                                     d_status, nullptr, variant),
          "decode");
    check(gpu::launch_unshuffle_blocks(d_blocks, static_cast<std::uint32_t>(blocks.size()), d_scratch, d_out, d_status,
                                       nullptr),
          "unshuffle");
  };
  // Correctness first: poison, decode, compare (both variants).
  for (auto v : {gpu::DecodeVariant::kDirect, gpu::DecodeVariant::kDirectUncapped, gpu::DecodeVariant::kStaged}) {
    variant = v;
    check(cudaMemset(d_out, 0xA5, total), "memset");
    run();
    check(cudaDeviceSynchronize(), "decode");
    std::vector<std::int32_t> status(count);
    check(cudaMemcpy(status.data(), d_status, count * 4, cudaMemcpyDeviceToHost), "copy");
    std::vector<std::uint8_t> back(total);
    check(cudaMemcpy(back.data(), d_out, total, cudaMemcpyDeviceToHost), "copy");
    for (std::size_t i = 0; i < count; ++i) {
      if (status[i] != 0) {
        std::cerr << codec << ": chunk " << i << " status " << status[i] << "\n";
        std::exit(3);
      }
    }
    if (std::memcmp(back.data(), original.data(), total) != 0) {
      std::cerr << codec << ": GPU output differs from the original\n";
      std::exit(3);
    }
  }
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  auto time_gpu = [&](gpu::DecodeVariant v) {
    variant = v;
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
    return median(times);
  };
  const double gpu_direct = time_gpu(gpu::DecodeVariant::kDirect);
  const double gpu_uncapped = time_gpu(gpu::DecodeVariant::kDirectUncapped);
  const double gpu_staged = time_gpu(gpu::DecodeVariant::kStaged);
  // CPU: the same chunks with the CPU libraries.
  std::vector<std::uint8_t> host_out(total);
  auto cpu_decode = [&](std::size_t i) {
    const auto& chunk = c.chunks[i];
    if (codec == "lz4") {
      LZ4_decompress_safe(reinterpret_cast<const char*>(chunk.data()), reinterpret_cast<char*>(host_out.data() + i * chunk_bytes),
                          static_cast<int>(chunk.size()), static_cast<int>(chunk_bytes));
    } else {
      blosc_decompress_ctx(chunk.data(), host_out.data() + i * chunk_bytes, chunk_bytes, 1);
    }
  };
  const unsigned all = std::max(1u, std::thread::hardware_concurrency());
  auto time_cpu = [&](unsigned threads) {
    std::vector<double> t;
    for (int r = 0; r < 3; ++r) {
      const auto t0 = Clock::now();
      parallel(count, threads, cpu_decode);
      t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    return median(t);
  };
  const double cpu1 = time_cpu(1), cpuall = time_cpu(all);
  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_scratch);
  cudaFree(d_streams);
  cudaFree(d_blocks);
  cudaFree(d_status);
  return {codec, static_cast<double>(total) / static_cast<double>(c.compressed_bytes), total / gpu_direct / 1e9,
          total / gpu_uncapped / 1e9, total / gpu_staged / 1e9, total / cpu1 / 1e9, total / cpuall / 1e9,
          streams.size()};
}

// Array read into device memory vs CPU read + copy, blosc-lz4, warm page cache.
void bench_array(const std::filesystem::path& dir, int reps, bool quantized) {
  const Shape shape = {512, 1024, 1024};  // 2 GiB of float32
  ArraySpec spec;
  spec.shape = shape;
  spec.chunks = {64, 256, 256};  // 16 MiB chunks
  spec.dtype = DataType::float_(32);
  spec.codecs = nlohmann::json::array(
      {{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
       {{"name", "blosc"},
        {"configuration", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 4}, {"blocksize", 0}}}}});
  std::filesystem::remove_all(dir);
  auto store = LocalStore::open(dir);
  Array array = Array::create(store, "", make_array_metadata(spec, CodecRegistry::builtin()));
  const std::size_t n = 512ull * 1024 * 1024;
  std::vector<float> values(n);
  fill_family_n(values, 11, quantized);
  array.write({}, NDView{reinterpret_cast<std::byte*>(values.data()), shape,
                         NDView::c_strides(shape, 4), spec.dtype, MemoryKind::kHost});
  const StorageInfo info = array.storage_info();
  const double logical = static_cast<double>(n) * 4;
  Buffer device = Buffer::allocate(n * 4, device_allocator());
  NDView out{device.data(), shape, NDView::c_strides(shape, 4), spec.dtype, MemoryKind::kDevice};
  std::vector<double> cpu_t;
  array.read_into({}, out);  // warm-up (page cache, pinned arenas, device pools)
  {
    const Buffer back = to_host(device);
    if (std::memcmp(back.data(), values.data(), n * 4) != 0) {
      std::cerr << "array read into device memory differs from the written values\n";
      std::exit(3);
    }
  }
  auto& stats = gpu::read_stats();
  struct Row {
    std::uint64_t budget_mib;
    std::size_t depth;
    double seconds, fastest, slowest, host_phase, gpu_wait;
  };
  std::vector<Row> rows;
  const std::pair<std::uint64_t, std::size_t> settings[] = {{256, 2}, {512, 2}, {256, 3}, {512, 3}, {256, 4}, {1024, 2}};
  for (const auto& [budget_mib, depth] : settings) {
    const std::uint64_t budget_bytes = budget_mib << 20;
    const std::size_t batches_in_flight = depth;
    ScopedConfig batches([&](Config& c) {
      c.gpu.batch_budget_bytes = budget_bytes;
      c.gpu.pipeline_depth = batches_in_flight;
    });
    array.read_into({}, out);  // warm-up at this batch size
    std::vector<double> wall, host, wait;
    for (int r = 0; r < reps; ++r) {
      const std::uint64_t host0 = stats.host_phase_ns.load(), wait0 = stats.gpu_wait_ns.load();
      const auto t0 = Clock::now();
      array.read_into({}, out);
      wall.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      host.push_back(static_cast<double>(stats.host_phase_ns.load() - host0) / 1e9);
      wait.push_back(static_cast<double>(stats.gpu_wait_ns.load() - wait0) / 1e9);
    }
    rows.push_back({budget_mib, depth, median(wall), *std::min_element(wall.begin(), wall.end()),
                    *std::max_element(wall.begin(), wall.end()), median(host), median(wait)});
  }
  NDBuffer host = array.read();  // warm-up
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    NDBuffer h = array.read();
    copy_memory(device.data(), h.data(), h.nbytes());
    cpu_t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  fmt::print("\nArray read, 512x1024x1024 float32 (family N{}), chunks 64x256x256, blosc lz4 shuffle clevel 5, "
             "ratio {:.2f}, local store, warm page cache, {} threads\n",
             quantized ? "" : ", unquantized noise", logical / static_cast<double>(info.bytes_stored),
             std::thread::hardware_concurrency());
  fmt::print("| path | median s | logical GB/s | fastest..slowest GB/s | host phase s | GPU wait s |\n"
             "|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    fmt::print("| zarrkit GPU read_into (device), batches of {} MiB, {} in flight | {:.3f} | {:.2f} | {:.1f}..{:.1f} | "
               "{:.3f} | {:.3f} |\n",
               r.budget_mib, r.depth, r.seconds, logical / r.seconds / 1e9, logical / r.fastest / 1e9,
               logical / r.slowest / 1e9, r.host_phase, r.gpu_wait);
  }
  fmt::print("| zarrkit CPU read + cudaMemcpy | {:.3f} | {:.2f} | | | |\n", median(cpu_t), logical / median(cpu_t) / 1e9);
  fmt::print("chunks decoded on GPU {}, on CPU {}, recovered {}\n", stats.chunks_decoded_on_gpu.load(),
             stats.chunks_decoded_on_cpu.load(), stats.gpu_rejections_recovered.load());
  // Writes: zarrkit_gpu_write_bench (gpu_write_bench.cpp).
  std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t total_mib = 1024, chunk_kib = 1024;
  int reps = 10;
  std::filesystem::path array_dir = std::filesystem::temp_directory_path() / "zarrkit_gpu_bench";
  bool array = true, kernels = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--total-mib" && i + 1 < argc) total_mib = std::stoul(argv[++i]);
    else if (a == "--chunk-kib" && i + 1 < argc) chunk_kib = std::stoul(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) reps = std::stoi(argv[++i]);
    else if (a == "--array-dir" && i + 1 < argc) array_dir = argv[++i];
    else if (a == "--no-array") array = false;
    else if (a == "--no-kernels") kernels = false;
    else {
      std::cerr << "usage: zarrkit_gpu_bench [--total-mib N] [--chunk-kib N] [--reps N] [--array-dir DIR] [--no-array] [--no-kernels]\n";
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
  const std::size_t chunk_bytes = chunk_kib << 10;
  const std::size_t count = (total_mib << 20) / chunk_bytes;
  std::vector<float> original(count * chunk_bytes / 4);
  const unsigned all = std::max(1u, std::thread::hardware_concurrency());
  auto compress = [&](const std::string& codec) {
    Compressed c;
    c.chunks.resize(count);
    parallel(count, all, [&](std::size_t i) {
      const auto* src = reinterpret_cast<const char*>(original.data()) + i * chunk_bytes;
      auto& out = c.chunks[i];
      if (codec == "lz4") {
        out.resize(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(chunk_bytes))));
        out.resize(static_cast<std::size_t>(LZ4_compress_default(src, reinterpret_cast<char*>(out.data()),
                                                                  static_cast<int>(chunk_bytes),
                                                                  static_cast<int>(out.size()))));
      } else {
        out.resize(chunk_bytes + BLOSC_MAX_OVERHEAD);
        out.resize(static_cast<std::size_t>(
            blosc_compress_ctx(5, BLOSC_SHUFFLE, 4, chunk_bytes, src, out.data(), out.size(), "lz4", 0, 1)));
      }
    });
    for (const auto& ch : c.chunks) c.compressed_bytes += ch.size();
    return c;
  };
  fmt::print("device: {} ({} SMs), {} host threads\n", prop.name, prop.multiProcessorCount, all);
  fmt::print("Kernel-only batched decode: {} chunks of {} KiB float32, one launch per kind of work, "
             "median of {} (CUDA events); CPU: liblz4 / c-blosc, same chunks. GPU columns: the default kernel "
             "(register cap for full occupancy), without the cap, and with streams staged through shared memory\n",
             count, chunk_kib, reps);
  fmt::print("| data | codec | ratio | streams | GPU GB/s | GPU uncapped GB/s | GPU staged GB/s | CPU 1 thread GB/s | "
             "CPU {} threads GB/s | GPU / CPU all |\n", all);
  fmt::print("|---|---|---|---|---|---|---|---|---|---|\n");
  for (bool quantized : {true, false}) {
    if (!kernels) break;
    fill_family_n(original, 7, quantized);
    for (const std::string codec : {"lz4", "blosc-lz4"}) {
      const Compressed c = compress(codec);
      const KernelResult r = bench_kernels(codec, c, original, chunk_bytes, reps);
      fmt::print("| {} | {} | {:.2f} | {} | {:.1f} | {:.1f} | {:.1f} | {:.2f} | {:.2f} | {:.1f}x |\n",
                 quantized ? "N" : "N noisy", r.codec, r.ratio, r.streams, r.gpu_gbs, r.gpu_uncapped_gbs,
                 r.gpu_staged_gbs, r.cpu1_gbs, r.cpuall_gbs, r.gpu_gbs / r.cpuall_gbs);
      std::fflush(stdout);
    }
  }
  if (array) {
    bench_array(array_dir, std::max(3, reps / 2), true);
    bench_array(array_dir, std::max(3, reps / 2), false);
  }
  return 0;
}
