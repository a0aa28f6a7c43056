#include "demo/gpu_read.h"

#include <chrono>

#include <fmt/format.h>

#include "zarrkit/error.h"

#ifdef ZARRKIT_HAVE_CUDA
#include "gpu/device_read.h"
#include "zarrkit/gpu.h"
#endif

namespace zarrkit::demo {

std::string gpu_read_skip_reason() {
#ifndef ZARRKIT_HAVE_CUDA
  return "this build has no CUDA path (no nvcc when it was configured, or ZARRKIT_CUDA=OFF)";
#else
  if (!gpu_available()) return fmt::format("no usable CUDA device ({})", gpu_unavailable_reason());
  return "";
#endif
}

#ifndef ZARRKIT_HAVE_CUDA

GpuReadAll time_read_all_into_gpu(const Format&, const SampleField&, const TimingOptions&) {
  throw UnsupportedError(gpu_read_skip_reason());
}

#else

namespace {

using Clock = std::chrono::steady_clock;

void check(const Format& format, const SampleField& field, const Buffer& device_values) {
  const Buffer host = to_host(device_values);
  const Box all{{0, 0, 0}, field.shape()};
  if (auto difference = field.mismatch(all, host.view()))
    throw VerificationError(fmt::format("{} read into GPU memory returned wrong values: {}", format.name(), *difference));
  count_verified(all.num_elements());
}

}  // namespace

GpuReadAll time_read_all_into_gpu(const Format& format, const SampleField& field, const TimingOptions& options) {
  GpuReadAll result;
  TimingOptions warm = options;
  warm.cold = false;
  if (const Array* array = format.zarr_array()) {
    warm_up_gpu(*array);
    gpu::ReadStats& stats = gpu::read_stats();
    result.timing = time_runs(
        [&] {
          const std::uint64_t on_gpu = stats.chunks_decoded_on_gpu.load();
          const std::uint64_t on_cpu = stats.chunks_decoded_on_cpu.load();
          const auto start = Clock::now();
          NDBuffer values;
          {
            ScopedGpu gpu;
            values = array->read();
          }
          const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
          result.gpu_decoded_chunks = stats.chunks_decoded_on_gpu.load() - on_gpu;
          result.chunks = result.gpu_decoded_chunks + (stats.chunks_decoded_on_cpu.load() - on_cpu);
          if (values.kind() != MemoryKind::kDevice)
            throw VerificationError(fmt::format("{}: a read under ScopedGpu did not land in device memory", format.name()));
          check(format, field, values.buffer());
          return seconds;
        },
        warm);
    return result;
  }
  const ByteView mapped = format.mapped_bytes();
  result.timing = time_runs(
      [&] {
        const auto start = Clock::now();
        Buffer values = to_device(mapped);
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        check(format, field, values);
        return seconds;
      },
      warm);
  return result;
}

#endif

}  // namespace zarrkit::demo
