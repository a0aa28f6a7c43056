#include "gpu/gds_engine.h"

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <mutex>
#include <tuple>
#include <optional>

#include <fmt/format.h>

#include "gpu/cuda_check.h"
#include "gpu/cufile_runtime.h"
#include "gpu/device_scope.h"
#include "stores/gds_pipeline.h"
#include "zarrkit/error.h"

namespace zarrkit::gpu {
namespace {

std::string cuda_text(cudaError_t status) {
  cudaGetLastError();
  return fmt::format("{}: {}", cudaGetErrorName(status), cudaGetErrorString(status));
}

// A thread's pinned staging buffers, its stream, and an event per buffer marking its copy.
class CudaLane final : public detail::StagingLane {
 public:
  CudaLane(int device, std::size_t piece_bytes) : device_(device) {
    try {
      check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creating a CUDA stream for GDS reads");
      for (int b = 0; b < detail::kLaneBuffers; ++b) {
        void* p = nullptr;
        check_cuda(cudaHostAlloc(&p, std::max<std::size_t>(piece_bytes, 1), cudaHostAllocPortable),
                   "allocating pinned staging buffers for GDS reads");
        buffers_[b] = static_cast<std::byte*>(p);
        check_cuda(cudaEventCreateWithFlags(&copied_[b], cudaEventDisableTiming), "creating a CUDA event");
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudaLane() override { release(); }

  void on_thread_start() override { cudaSetDevice(device_); }
  std::byte* buffer(int b) override { return buffers_[b]; }
  std::optional<std::string> queue_copy(int b, std::byte* dest, std::size_t n) override {
    cudaError_t status = cudaMemcpyAsync(dest, buffers_[b], n, cudaMemcpyHostToDevice, stream_);
    if (status == cudaSuccess) status = cudaEventRecord(copied_[b], stream_);
    if (status != cudaSuccess) return cuda_text(status);
    return std::nullopt;
  }
  std::optional<std::string> wait(int b) override {
    // An event never recorded counts as complete.
    const cudaError_t status = cudaEventSynchronize(copied_[b]);
    if (status != cudaSuccess) return cuda_text(status);
    return std::nullopt;
  }

 private:
  void release() noexcept {
    if (stream_ != nullptr) cudaStreamSynchronize(stream_);
    for (int b = 0; b < detail::kLaneBuffers; ++b) {
      if (buffers_[b] != nullptr) cudaFreeHost(buffers_[b]);
      if (copied_[b] != nullptr) cudaEventDestroy(copied_[b]);
    }
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    cudaGetLastError();
  }

  int device_;
  cudaStream_t stream_ = nullptr;
  std::byte* buffers_[detail::kLaneBuffers] = {};
  cudaEvent_t copied_[detail::kLaneBuffers] = {};
};

// cuFile as the scheduler's direct reader. cuFile registers only descriptors opened with
// O_DIRECT (it refuses others, compatibility mode included), so each file is opened a second
// time, with O_DIRECT, through /proc/self/fd; the store's own descriptor stays as it is for
// the compat path. Registration is serialized: it is rare (once per file and request) and
// cuFile's own bookkeeping of handles is the part least worth trusting under contention.
class CufileReader final : public detail::DirectReader {
 public:
  CufileReader(const Cufile& cufile, int device) : cufile_(cufile), device_(device) {}
  void* open(int fd) override {
    const std::string self = fmt::format("/proc/self/fd/{}", fd);
    const int direct_fd = ::open(self.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (direct_fd < 0) {
      refuse(fmt::format("the file cannot be opened with O_DIRECT ({})", std::strerror(errno)));
      return nullptr;
    }
    std::string why;
    CufileHandle handle;
    {
      std::lock_guard lock(register_mutex_);
      handle = cufile_.register_file(direct_fd, why);
    }
    if (handle == nullptr) {
      ::close(direct_fd);
      refuse(why);
      return nullptr;
    }
    return new Registered{handle, direct_fd};
  }
  void close(void* opened) override {
    auto* registered = static_cast<Registered*>(opened);
    {
      std::lock_guard lock(register_mutex_);
      cufile_.deregister_file(registered->handle);
    }
    ::close(registered->direct_fd);
    delete registered;
  }
  ssize_t read(void* opened, std::byte* dest, std::size_t n, std::uint64_t offset) override {
    return cufile_.read(static_cast<Registered*>(opened)->handle, dest, n, static_cast<off_t>(offset));
  }
  void on_thread_start() override { cudaSetDevice(device_); }
  std::string refusal() const override {
    std::lock_guard lock(refusal_mutex_);
    return refusal_;
  }

 private:
  struct Registered {
    CufileHandle handle;
    int direct_fd;
  };
  void refuse(const std::string& why) {
    std::lock_guard lock(refusal_mutex_);
    if (refusal_.empty()) refusal_ = why;
  }

  const Cufile& cufile_;
  int device_;
  std::mutex register_mutex_;
  mutable std::mutex refusal_mutex_;
  std::string refusal_;
};

class Engine final : public detail::GdsEngine {
 public:
  Engine(const detail::GdsEngineSettings& settings, GdsPathReport report) : report_(std::move(report)) {
    int device = 0;
    check_cuda(cudaGetDevice(&device), "finding the current CUDA device");
    if (report_.path == GdsPath::kCufile) cufile_reader_ = std::make_unique<CufileReader>(*Cufile::get(settings.cufile_library), device);
    std::vector<std::unique_ptr<detail::StagingLane>> lanes;
    for (std::size_t i = 0; i < settings.threads; ++i) {
      lanes.push_back(std::make_unique<CudaLane>(device, settings.piece_bytes));
    }
    scheduler_ = std::make_unique<detail::PieceScheduler>(std::move(lanes), settings.piece_bytes, cufile_reader_.get());
  }

  const GdsPathReport& path() const override { return report_; }
  detail::DeviceReadOutcome read(std::span<const detail::DeviceFileRead> reads, std::uint64_t max_gap) override {
    return scheduler_->read(reads, max_gap);
  }

 private:
  const GdsPathReport report_;
  std::unique_ptr<CufileReader> cufile_reader_;  // declared first: the scheduler's threads use it
  std::unique_ptr<detail::PieceScheduler> scheduler_;
};

}  // namespace

std::shared_ptr<detail::GdsEngine> gds_engine_for(const detail::GdsEngineSettings& settings) {
  require_device("reading a GDS store into device memory");
  // Never destroyed: engines hold pinned memory and CUDA streams, which may not be freed
  // while the CUDA runtime shuts down. One per device (the current one: the device of the
  // read's output) and settings.
  static auto* mutex = new std::mutex;
  static auto* engines =
      new std::vector<std::tuple<int, detail::GdsEngineSettings, std::shared_ptr<detail::GdsEngine>>>;
  const int device = current_device();
  std::lock_guard lock(*mutex);
  for (const auto& [d, s, engine] : *engines) {
    if (d == device && s == settings) return engine;
  }
  GdsPathReport report;
  if (settings.mode == GdsMode::kCompat) {
    report = detail::choose_gds_path(settings.mode, {});
  } else if (settings.mode == GdsMode::kAuto && !nvidia_fs_driver_loaded()) {
    // auto would not take cuFile without the driver anyway (gds_plan.cpp says why), and
    // loading it is not free: cuFileDriverOpen starts threads and pins memory of its own.
    detail::CufileProbe not_loaded;
    not_loaded.reason = "the nvidia-fs driver is not loaded (no /proc/driver/nvidia-fs), so cuFile is not loaded";
    report = detail::choose_gds_path(settings.mode, not_loaded);
  } else {
    report = detail::choose_gds_path(settings.mode, Cufile::load(settings.cufile_library));
  }
  auto engine = std::make_shared<Engine>(settings, report);
  engines->emplace_back(device, settings, engine);
  return engine;
}

}  // namespace zarrkit::gpu
