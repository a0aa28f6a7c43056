// zarrkit_gpu_write_bench: writes of a 2 GiB float32 array from device memory against the
// two ways of doing it on the host, in one run. Logical (array) GB/s; medians.
//
//   zarrkit_gpu_write_bench [--reps 3] [--dir DIR] [--mib 2048] [--chains a,b,...]
//
// Per data (family N, ratio ~3; and unquantized noise, ratio ~1.3) and chain:
//   GPU           Array::write from device memory (encoded on the GPU), local store
//   CPU           Array::write of the same values from host memory (c-blosc / liblz4 on the
//                 thread pool), local store
//   copy + CPU    cudaMemcpy of the device array into a host buffer (allocated and touched
//                 once, reused), then the CPU write: what a user does without the GPU path
//   GPU, no IO    the GPU write into a store that drops the values: encode + copy back
//   CPU, no IO    the CPU write into the same: encode only
// with each path's compression ratio, and for the GPU write the time spent waiting for the
// GPU and storing. Every written array is read back (CPU) and compared before timing counts.
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench_data.h"
#include "gpu/device_read.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/gpu.h"
#include "zarrkit/store.h"
#include "zarrkit/stores/local_store.h"

namespace {

using namespace zarrkit;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// Takes every value and keeps nothing but the count of bytes.
class DiscardStore final : public Store {
 public:
  StoreCapabilities capabilities() const override { return {}; }
  std::string describe() const override { return "discard://"; }
  std::optional<Buffer> get(std::string_view, const BufferPrototype&, std::optional<ByteRange>) override {
    return std::nullopt;
  }
  void set(std::string_view key, ByteView value) override {
    if (!key.ends_with("zarr.json")) bytes += value.size();
  }
  void erase(std::string_view) override {}
  std::vector<std::string> list(std::string_view) override { return {}; }
  std::atomic<std::uint64_t> bytes{0};
};

struct Chain {
  std::string name;
  json codecs;
};

std::vector<Chain> all_chains() {
  const json little = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
  const json blosc = {{"name", "blosc"},
                      {"configuration", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 4}, {"blocksize", 0}}}};
  const json crc = {{"name", "crc32c"}};
  return {
      {"blosc-lz4", json::array({little, blosc})},
      {"blosc-lz4+crc32c", json::array({little, blosc, crc})},
      {"numcodecs.lz4", json::array({little, {{"name", "numcodecs.lz4"}}})},
      {"bytes+crc32c", json::array({little, crc})},
  };
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Timing {
  double seconds;
  double ratio;
};

// Runs prepare() then a timed write() reps + 1 times, the first as a warm-up; the ratio is
// from stored() after the last.
template <typename P, typename W, typename S>
Timing time_writes(int reps, double logical, P&& prepare, W&& write, S&& stored) {
  std::vector<double> t;
  for (int r = 0; r <= reps; ++r) {
    prepare();
    const auto t0 = Clock::now();
    write();
    if (r > 0) t.push_back(seconds_since(t0));
  }
  return {bench::median(t), logical / static_cast<double>(std::max<std::uint64_t>(stored(), 1))};
}

std::uint64_t stored_bytes(const Array& a) { return a.storage_info().bytes_stored; }

void bench_chain(const std::filesystem::path& dir, const Chain& chain, const Shape& shape, const std::vector<float>& values,
                 const NDView& device, std::vector<float>& host_copy, int reps, const std::string& data) {
  ArraySpec spec;
  spec.shape = shape;
  spec.chunks = {64, 256, 256};  // 16 MiB chunks
  spec.dtype = DataType::float_(32);
  spec.codecs = chain.codecs;
  const ArrayMetadata metadata = make_array_metadata(spec, CodecRegistry::builtin());
  const double logical = static_cast<double>(values.size()) * 4;
  const NDView host{const_cast<std::byte*>(reinterpret_cast<const std::byte*>(values.data())), shape,
                    NDView::c_strides(shape, 4), spec.dtype, MemoryKind::kHost};
  const NDView copied{reinterpret_cast<std::byte*>(host_copy.data()), shape, NDView::c_strides(shape, 4), spec.dtype,
                      MemoryKind::kHost};
  std::optional<Array> target;
  auto fresh = [&] {
    target.reset();
    std::filesystem::remove_all(dir);
    target = Array::create(LocalStore::open(dir), "", metadata);
  };
  auto stored = [&] { return stored_bytes(*target); };
  auto check = [&](const char* what) {
    const NDBuffer back = Array::open(LocalStore::open(dir), "").read();
    if (std::memcmp(back.data(), values.data(), values.size() * 4) != 0) {
      std::cerr << chain.name << ": the " << what << " write reads back different values\n";
      std::exit(3);
    }
  };
  auto& stats = gpu::read_stats();
  std::vector<double> wait, store;
  const Timing gpu = time_writes(
      reps, logical, fresh,
      [&] {
        const std::uint64_t w0 = stats.write_gpu_wait_ns.load(), s0 = stats.write_store_ns.load();
        target->write({}, device);
        wait.push_back(static_cast<double>(stats.write_gpu_wait_ns.load() - w0) / 1e9);
        store.push_back(static_cast<double>(stats.write_store_ns.load() - s0) / 1e9);
      },
      stored);
  check("GPU");
  const Timing cpu = time_writes(reps, logical, fresh, [&] { target->write({}, host); }, stored);
  check("CPU");
  const Timing copy_cpu = time_writes(
      reps, logical, fresh,
      [&] {
        copy_memory(host_copy.data(), device.data, values.size() * 4);
        target->write({}, copied);
      },
      stored);
  check("copy + CPU");
  target.reset();
  std::filesystem::remove_all(dir);
  std::shared_ptr<DiscardStore> sink;
  auto discard = [&] {
    sink = std::make_shared<DiscardStore>();
    target = Array::create(sink, "", metadata);
  };
  auto dropped = [&] { return sink->bytes.load(); };
  const Timing gpu_no_io = time_writes(reps, logical, discard, [&] { target->write({}, device); }, dropped);
  const Timing cpu_no_io = time_writes(reps, logical, discard, [&] { target->write({}, host); }, dropped);
  target.reset();
  auto row = [&](const char* path, const Timing& t, const std::string& extra) {
    fmt::print("| {} | {} | {} | {:.3f} | {:.2f} | {:.2f} | {} |\n", data, chain.name, path, t.seconds,
               logical / t.seconds / 1e9, t.ratio, extra);
  };
  wait.erase(wait.begin());  // the warm-up
  store.erase(store.begin());
  row("GPU (device memory)", gpu, fmt::format("GPU wait {:.3f} s, storing {:.3f} s; {:.2f}x CPU, {:.2f}x copy + CPU",
                                              bench::median(wait), bench::median(store), cpu.seconds / gpu.seconds,
                                              copy_cpu.seconds / gpu.seconds));
  row("CPU (host memory)", cpu, "");
  row("copy to host + CPU", copy_cpu, "");
  row("GPU, values dropped", gpu_no_io, "encode + copy back");
  row("CPU, values dropped", cpu_no_io, "encode");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 3;
  std::uint64_t mib = 2048;
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "zarrkit_gpu_write_bench";
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::stoi(argv[++i]);
    else if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--mib" && i + 1 < argc) mib = std::stoull(argv[++i]);
    else if (a == "--chains" && i + 1 < argc) only = argv[++i];
    else {
      std::cerr << "usage: zarrkit_gpu_write_bench [--reps N] [--dir DIR] [--mib N] [--chains a,b,...]\n";
      return 1;
    }
  }
  if (!gpu_available()) {
    std::cerr << "no CUDA device: " << gpu_unavailable_reason() << "\n";
    return 1;
  }
  install_gpu_support();
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  const std::uint64_t planes = std::max<std::uint64_t>(mib / 4, 64) / 64 * 64;  // 1024x1024 float32 = 4 MiB each
  const Shape shape = {planes, 1024, 1024};
  std::vector<float> values(planes * 1024 * 1024), host_copy(values.size());
  std::memset(host_copy.data(), 0, host_copy.size() * 4);  // faulted in once, reused
  Buffer device = Buffer::allocate(values.size() * 4, device_allocator());
  const NDView device_view{device.data(), shape, NDView::c_strides(shape, 4), DataType::float_(32), MemoryKind::kDevice};
  fmt::print("device: {}, {} host threads; array {}x1024x1024 float32 ({} MiB), chunks 64x256x256 (16 MiB), local store "
             "in {}, median of {} writes after a warm-up\n",
             prop.name, std::thread::hardware_concurrency(), planes, values.size() * 4 >> 20, dir.string(), reps);
  fmt::print("| data | chain | path | median s | logical GB/s | ratio | |\n|---|---|---|---|---|---|---|\n");
  for (const bool quantized : {true, false}) {
    bench::fill_family_n(values, 11, quantized);
    copy_memory(device.data(), values.data(), values.size() * 4);
    for (const Chain& chain : all_chains()) {
      if (!only.empty() && ("," + only + ",").find("," + chain.name + ",") == std::string::npos) continue;
      bench_chain(dir, chain, shape, values, device_view, host_copy, reps, quantized ? "N" : "N noisy");
    }
  }
  const auto& stats = gpu::read_stats();
  fmt::print("chunks encoded on the GPU {}, device writes sent to the CPU {}\n", stats.chunks_encoded_on_gpu.load(),
             stats.device_writes_on_cpu.load());
  return 0;
}
