// zarrkit_codec_read_bench: whole reads of compressed arrays into device memory (scenario S6
// of BENCHMARKS.md), through the engine, by each way it can decode them:
//   default     Config::gpu.*_kernels "auto": zarrkit's kernels where their rule says
//               they win (device_codec.h, OwnKernelsRule), else the host path
//   host        kernels off: chunks decoded by the host codec, then copied to the device
//   kernels     Config::gpu.deflate_kernels or zstd_kernels "on" (the codec's, or blosc's
//               inner codec's): zarrkit's own kernels on the device
//   nvCOMP      Config::gpu.nvcomp_decode: nvCOMP's batched gzip or zstd (when libnvcomp
//               loads; it has no blosc)
//   CPU + copy  Array::read into host memory, then one cudaMemcpy
//
//   zarrkit_codec_read_bench [--codec gzip] [--dir DIR] [--reps 5] [--layouts 16m,2m,512k,sharded]
//                            [--paths TEXT] [--sweep]
//
// --codec: gzip (level 1), zstd (level 3), blosc-zstd or blosc-zlib (clevel 5, byte shuffle).
// --paths: only the paths whose name contains TEXT (e.g. "kernels", for a profiler).
// --sweep: instead, reads of 1 to 2048 chunks (512 KiB layout), host path against kernels
//          and the default's choice.
//
// Array: 256x1024x1024 float32 (1 GiB, family N) on a local store with a warm page cache;
// layouts: chunks 16x512x512 (16 MiB), 8x256x256 (2 MiB), 8x128x128 (512 KiB), shards
// 16x512x512 of 8x128x128 inner chunks (the default set); also 16x512x256 (8m) and
// 16x256x256 (4m), where the zstd rule's chunk-size limit was set. Every path's output is compared with the written
// values before it is timed. Medians of the timed reads, logical GB/s.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench_data.h"
#include "gpu/device_read.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/config.h"
#include "zarrkit/gpu.h"
#include "zarrkit/stores/local_store.h"

namespace {

using namespace zarrkit;
using Clock = std::chrono::steady_clock;

// The codec of the benchmark: its chain and the setting of zarrkit's kernels for it.
struct BenchCodec {
  std::string name;
  nlohmann::json compressor;
  std::function<void(Config&, KernelUse)> kernels;
  bool nvcomp = false;  // nvCOMP has a batched decoder for it
};

BenchCodec codec_named(const std::string& name) {
  auto blosc = [](const char* cname) {
    return nlohmann::json{
        {"name", "blosc"},
        {"configuration", {{"cname", cname}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 4}, {"blocksize", 0}}}};
  };
  const auto deflate = [](Config& c, KernelUse use) { c.gpu.deflate_kernels = use; };
  const auto zstd = [](Config& c, KernelUse use) { c.gpu.zstd_kernels = use; };
  if (name == "gzip") return {"gzip level 1", {{"name", "gzip"}, {"configuration", {{"level", 1}}}}, deflate, true};
  if (name == "zstd") return {"zstd level 3", {{"name", "zstd"}, {"configuration", {{"level", 3}}}}, zstd, true};
  if (name == "blosc-zstd") return {"blosc zstd clevel 5, shuffle", blosc("zstd"), zstd, false};
  if (name == "blosc-zlib") return {"blosc zlib clevel 5, shuffle", blosc("zlib"), deflate, false};
  throw std::invalid_argument("unknown codec " + name);
}

nlohmann::json chain(const BenchCodec& codec) {
  return nlohmann::json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}, codec.compressor});
}

ArraySpec layout_spec(const std::string& layout, const Shape& shape, const BenchCodec& codec) {
  ArraySpec spec;
  spec.shape = shape;
  spec.dtype = DataType::float_(32);
  if (layout == "16m") {
    spec.chunks = {16, 512, 512};
    spec.codecs = chain(codec);
  } else if (layout == "8m") {
    spec.chunks = {16, 512, 256};
    spec.codecs = chain(codec);
  } else if (layout == "4m") {
    spec.chunks = {16, 256, 256};
    spec.codecs = chain(codec);
  } else if (layout == "2m") {
    spec.chunks = {8, 256, 256};
    spec.codecs = chain(codec);
  } else if (layout == "512k") {
    spec.chunks = {8, 128, 128};
    spec.codecs = chain(codec);
  } else if (layout == "sharded") {
    spec.chunks = {16, 512, 512};
    spec.codecs = nlohmann::json::array(
        {{{"name", "sharding_indexed"},
          {"configuration",
           {{"chunk_shape", {8, 128, 128}},
            {"codecs", chain(codec)},
            {"index_codecs",
             nlohmann::json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                    {{"name", "crc32c"}}})}}}}});
  } else {
    throw std::invalid_argument("unknown layout " + layout);
  }
  return spec;
}

struct Path {
  std::string name;
  std::function<void(Config&)> settings;
  bool host_then_copy = false;
};

double median_seconds(int reps, const std::function<void()>& run) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    run();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return bench::median(t);
}

// The benchmark's array in `layout`, written afresh in `dir` from `values`.
Array write_array(const std::filesystem::path& dir, const std::string& layout, const BenchCodec& codec,
                  const std::vector<float>& values) {
  const Shape shape = {256, 1024, 1024};
  const ArraySpec spec = layout_spec(layout, shape, codec);
  std::filesystem::remove_all(dir);
  auto store = LocalStore::open(dir);
  Array array = Array::create(store, "", make_array_metadata(spec, CodecRegistry::builtin()));
  array.write({}, NDView{reinterpret_cast<std::byte*>(const_cast<float*>(values.data())), shape,
                         NDView::c_strides(shape, 4), spec.dtype, MemoryKind::kHost});
  return array;
}

const char* layout_name(const std::string& layout) {
  if (layout == "16m") return "chunks 16x512x512 (16 MiB)";
  if (layout == "8m") return "chunks 16x512x256 (8 MiB)";
  if (layout == "4m") return "chunks 16x256x256 (4 MiB)";
  if (layout == "2m") return "chunks 8x256x256 (2 MiB)";
  if (layout == "512k") return "chunks 8x128x128 (512 KiB)";
  return "shards 16x512x512 of 8x128x128 inner chunks (512 KiB)";
}

int bench_layout(const std::filesystem::path& dir, const std::string& layout, const BenchCodec& codec, int reps,
                 const std::vector<float>& values, const std::string& only) {
  Array array = write_array(dir, layout, codec, values);
  const Shape shape = array.shape();
  const DataType dtype = array.dtype();
  const std::size_t n = values.size();
  const double logical = static_cast<double>(n) * 4;
  const double ratio = logical / static_cast<double>(array.storage_info().bytes_stored);
  Buffer device = Buffer::allocate(n * 4, device_allocator());
  NDView out{device.data(), shape, NDView::c_strides(shape, 4), dtype, MemoryKind::kDevice};
  std::vector<Path> paths = {
      {"default (kernels auto)", [](Config&) {}},
      {"host decode, then copy (kernels off)", [&codec](Config& c) { codec.kernels(c, KernelUse::kOff); }},
      {"zarrkit's kernels (on)", [&codec](Config& c) { codec.kernels(c, KernelUse::kOn); }},
      // A warp decodes a stream: a batch of the default 256 MiB gives a launch few warps.
      {"zarrkit's kernels (on), 1 GiB batches",
       [&codec](Config& c) {
         codec.kernels(c, KernelUse::kOn);
         c.gpu.batch_budget_bytes = std::uint64_t{1} << 30;
       }},
      {"host decode, then copy (kernels off), 1 GiB batches",
       [&codec](Config& c) {
         codec.kernels(c, KernelUse::kOff);
         c.gpu.batch_budget_bytes = std::uint64_t{1} << 30;
       }},
      {"CPU read + cudaMemcpy", [](Config&) {}, true},
  };
  if (codec.nvcomp) {
    paths.insert(paths.end() - 1, {"nvCOMP (kernels off)", [&codec](Config& c) {
                                     codec.kernels(c, KernelUse::kOff);
                                     c.gpu.nvcomp_decode = true;
                                   }});
  }
  fmt::print("\n{}: 256x1024x1024 float32 (family N), {}, ratio {:.2f}, local store, warm page cache, "
             "{} host threads\n",
             layout_name(layout), codec.name, ratio, std::thread::hardware_concurrency());
  fmt::print("| path | median s | GB/s | chunks on GPU / CPU | host phase / GPU wait s per read | batches per read |\n"
             "|---|---|---|---|---|---|\n");
  int failures = 0;
  auto& stats = gpu::read_stats();
  for (const Path& p : paths) {
    if (p.name.find(only) == std::string::npos) continue;
    ScopedConfig scoped(p.settings);
    std::function<void()> read = [&] { array.read_into({}, out); };
    if (p.host_then_copy) {
      read = [&] {
        NDBuffer h = array.read();
        copy_memory(device.data(), h.data(), h.nbytes());
      };
    }
    cudaMemset(device.data(), 0xFF, n * 4);  // poisoned: a path that leaves bytes out fails the check
    const std::uint64_t gpu0 = stats.chunks_decoded_on_gpu.load(), cpu0 = stats.chunks_decoded_on_cpu.load();
    read();  // warm-up, then the check
    const std::uint64_t on_gpu = stats.chunks_decoded_on_gpu.load() - gpu0;
    const std::uint64_t on_cpu = stats.chunks_decoded_on_cpu.load() - cpu0;
    const Buffer back = to_host(device);
    if (std::memcmp(back.data(), values.data(), n * 4) != 0) {
      fmt::print("| {} | MISMATCH | | | | |\n", p.name);
      ++failures;
      continue;
    }
    const std::uint64_t host0 = stats.host_phase_ns.load(), wait0 = stats.gpu_wait_ns.load();
    const std::uint64_t batches0 = stats.batches.load();
    const double s = median_seconds(reps, read);
    // Per read, averaged over the timed ones (the CPU path has neither).
    const double host_s = static_cast<double>(stats.host_phase_ns.load() - host0) / 1e9 / reps;
    const double wait_s = static_cast<double>(stats.gpu_wait_ns.load() - wait0) / 1e9 / reps;
    const double batches = static_cast<double>(stats.batches.load() - batches0) / reps;
    fmt::print("| {} | {:.3f} | {:.2f} | {} / {} | {:.3f} / {:.3f} | {:.0f} |\n", p.name, s, logical / s / 1e9, on_gpu,
               on_cpu, host_s, wait_s, batches);
    std::fflush(stdout);
  }
  std::filesystem::remove_all(dir);
  return failures;
}

}  // namespace

// Reads of 1 to 2048 chunks of the 512 KiB layout (boxes of whole chunks from the origin),
// the host path against the kernels: where the kernels start to pay, and what the default
// (kernels auto) chooses.
int sweep_read_sizes(const std::filesystem::path& dir, const BenchCodec& codec, int reps, const std::vector<float>& values) {
  Array array = write_array(dir, "512k", codec, values);
  const DataType dtype = array.dtype();
  Buffer device = Buffer::allocate(values.size() * 4, device_allocator());
  fmt::print("\nread sizes, chunks 8x128x128 (512 KiB), {}: median ms per read\n"
             "| chunks read | host decode, then copy (off) | zarrkit's kernels (on) | kernels / host time | default "
             "(auto) | default / best |\n|---|---|---|---|---|---|\n",
             codec.name);
  // (planes, rows, columns) of chunks: 1, 8, 64, 512, 2048 chunks.
  const std::vector<std::array<std::int64_t, 3>> boxes = {{1, 1, 1}, {1, 2, 4}, {1, 8, 8}, {8, 8, 8}, {32, 8, 8}};
  for (const auto& b : boxes) {
    const Shape box = {static_cast<std::uint64_t>(b[0] * 8), static_cast<std::uint64_t>(b[1] * 128),
                       static_cast<std::uint64_t>(b[2] * 128)};
    const Selection sel = {Slice{0, static_cast<std::int64_t>(box[0])}, Slice{0, static_cast<std::int64_t>(box[1])},
                           Slice{0, static_cast<std::int64_t>(box[2])}};
    NDView out{device.data(), box, NDView::c_strides(box, 4), dtype, MemoryKind::kDevice};
    const KernelUse uses[3] = {KernelUse::kOff, KernelUse::kOn, KernelUse::kAuto};
    double ms[3];
    for (int k = 0; k < 3; ++k) {
      ScopedConfig scoped([&codec, use = uses[k]](Config& c) { codec.kernels(c, use); });
      std::function<void()> read = [&] { array.read_into(sel, out); };
      read();  // warm-up
      ms[k] = median_seconds(reps, read) * 1e3;
    }
    fmt::print("| {} | {:.2f} | {:.2f} | {:.2f}x | {:.2f} | {:.2f}x |\n", b[0] * b[1] * b[2], ms[0], ms[1], ms[1] / ms[0],
               ms[2], ms[2] / std::min(ms[0], ms[1]));
    std::fflush(stdout);
  }
  return 0;
}

int main(int argc, char** argv) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "zarrkit_codec_read_bench";
  int reps = 5;
  std::string codec_name = "gzip";
  std::vector<std::string> layouts = {"16m", "2m", "512k", "sharded"};
  std::string only;
  bool sweep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--codec" && i + 1 < argc) {
      codec_name = argv[++i];
    } else if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(3, std::stoi(argv[++i]));
    } else if (a == "--layouts" && i + 1 < argc) {
      layouts.clear();
      std::stringstream in(argv[++i]);
      for (std::string item; std::getline(in, item, ',');) layouts.push_back(item);
    } else if (a == "--paths" && i + 1 < argc) {
      only = argv[++i];
    } else if (a == "--sweep") {
      sweep = true;
    } else {
      std::cerr << "usage: zarrkit_codec_read_bench [--codec gzip|zstd|blosc-zstd|blosc-zlib] [--dir DIR] [--reps N] "
                   "[--layouts 16m,8m,4m,2m,512k,sharded] [--paths TEXT] [--sweep]\n";
      return 1;
    }
  }
  if (!gpu_available()) {
    std::cerr << "no CUDA device: " << gpu_unavailable_reason() << "\n";
    return 1;
  }
  const BenchCodec codec = codec_named(codec_name);
  install_gpu_support();
  std::vector<float> values(std::size_t{256} * 1024 * 1024);
  bench::fill_family_n(values, 7);
  if (sweep) return sweep_read_sizes(dir, codec, reps, values);
  int failures = 0;
  for (const std::string& layout : layouts) failures += bench_layout(dir, layout, codec, reps, values, only);
  return failures == 0 ? 0 : 3;
}
