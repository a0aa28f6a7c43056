#include "gpu/gds_engine.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "gpu/cuda_check.h"
#include "gpu/cufile_runtime.h"
#include "stores/gds_plan.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit::gpu {
namespace {

using detail::DeviceFileRead;
using detail::DeviceReadOutcome;
using detail::Piece;

// Two staging buffers per thread: one is read into while the other's copy runs.
constexpr int kBuffersPerThread = 2;

// One call of Engine::read: its pieces, and what became of them.
struct Request {
  std::span<const DeviceFileRead> reads;
  std::vector<Piece> pieces;
  std::vector<CufileHandle> handles;  // per read: its file's cuFile handle; null: the compat path
  std::unique_ptr<std::atomic<bool>[]> went_compat;  // per read: some of it took the compat path
  std::atomic<std::uint64_t> cufile_refused{0};

  std::mutex mutex;
  std::condition_variable all_done;
  std::size_t remaining = 0;  // pieces not yet complete
  std::vector<DeviceReadOutcome::Failure> failures;

  void fail(std::size_t read, std::string what) {
    std::lock_guard lock(mutex);
    failures.push_back({read, std::move(what)});
  }
  void fail_piece(const Piece& piece, const std::string& what) {
    for (const auto& s : piece.segments) fail(s.read, what);
  }
  void complete_piece() {
    std::lock_guard lock(mutex);
    if (--remaining == 0) all_done.notify_all();
  }
};

struct Task {
  Request* request = nullptr;
  std::size_t piece = 0;
};

std::string cuda_text(cudaError_t status) {
  cudaGetLastError();
  return fmt::format("{}: {}", cudaGetErrorName(status), cudaGetErrorString(status));
}

class Engine final : public detail::GdsEngine {
 public:
  Engine(const detail::GdsEngineSettings& settings, GdsPathReport report)
      : settings_(settings), report_(std::move(report)) {
    check_cuda(cudaGetDevice(&device_), "finding the current CUDA device");
    if (report_.path == GdsPath::kCufile) cufile_ = Cufile::get();
    staging_.resize(settings_.threads);
    try {
      for (Staging& s : staging_) {
        check_cuda(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "creating a CUDA stream for GDS reads");
        for (int b = 0; b < kBuffersPerThread; ++b) {
          void* p = nullptr;
          check_cuda(cudaHostAlloc(&p, settings_.piece_bytes, cudaHostAllocPortable),
                     "allocating pinned staging buffers for GDS reads");
          s.buffer[b] = static_cast<std::byte*>(p);
          check_cuda(cudaEventCreateWithFlags(&s.copied[b], cudaEventDisableTiming), "creating a CUDA event");
        }
      }
    } catch (...) {
      release();
      throw;
    }
    for (std::size_t i = 0; i < settings_.threads; ++i) threads_.emplace_back([this, i] { work(staging_[i]); });
  }

  ~Engine() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
    release();
  }

  const GdsPathReport& path() const override { return report_; }

  DeviceReadOutcome read(std::span<const DeviceFileRead> reads, std::uint64_t max_gap) override {
    DeviceReadOutcome outcome;
    if (reads.empty()) return outcome;
    Request request;
    request.reads = reads;
    std::vector<detail::PlannedRead> planned;
    planned.reserve(reads.size());
    for (const DeviceFileRead& r : reads) {
      planned.push_back({r.file_offset, r.length, reinterpret_cast<std::uint64_t>(r.dest)});
    }
    request.pieces = detail::plan_pieces(planned, settings_.piece_bytes, max_gap);
    request.handles.assign(reads.size(), nullptr);
    request.went_compat = std::make_unique<std::atomic<bool>[]>(reads.size());
    // cuFile handles, one per file, registered in parallel (a request may name thousands).
    std::map<int, CufileHandle> registered;
    if (cufile_ != nullptr) {
      for (const DeviceFileRead& r : reads) registered.try_emplace(r.fd, nullptr);
      std::vector<std::pair<const int, CufileHandle>*> entries;
      for (auto& entry : registered) entries.push_back(&entry);
      shared_thread_pool().parallel_for(entries.size(), [&](std::size_t k) {
        cudaSetDevice(device_);
        std::string why;
        entries[k]->second = cufile_->register_file(entries[k]->first, why);
      });
      for (std::size_t i = 0; i < reads.size(); ++i) {
        request.handles[i] = registered[reads[i].fd];
        if (request.handles[i] == nullptr) request.cufile_refused.fetch_add(1);
      }
    }
    request.remaining = request.pieces.size();
    if (!request.pieces.empty()) {
      {
        std::lock_guard lock(mutex_);
        for (std::size_t p = 0; p < request.pieces.size(); ++p) queue_.push_back({&request, p});
      }
      wake_.notify_all();
      std::unique_lock lock(request.mutex);
      request.all_done.wait(lock, [&] { return request.remaining == 0; });
    }
    if (!registered.empty()) {
      std::vector<CufileHandle> handles;
      for (const auto& [fd, handle] : registered) {
        if (handle != nullptr) handles.push_back(handle);
      }
      shared_thread_pool().parallel_for(handles.size(), [&](std::size_t k) { cufile_->deregister_file(handles[k]); });
    }
    outcome.failures = std::move(request.failures);
    std::stable_sort(outcome.failures.begin(), outcome.failures.end(),
                     [](const auto& a, const auto& b) { return a.read < b.read; });
    for (std::size_t i = 0; i < reads.size(); ++i) {
      if (request.handles[i] != nullptr && !request.went_compat[i].load()) {
        ++outcome.reads_cufile;
        outcome.bytes_cufile += reads[i].length;
      } else {
        ++outcome.reads_compat;
        outcome.bytes_compat += reads[i].length;
      }
    }
    outcome.cufile_refused = request.cufile_refused.load();
    return outcome;
  }

 private:
  struct Staging {
    cudaStream_t stream = nullptr;
    std::byte* buffer[kBuffersPerThread] = {};
    cudaEvent_t copied[kBuffersPerThread] = {};
    std::optional<Task> in_flight[kBuffersPerThread];  // the piece whose copy the event marks
    int next = 0;
  };

  void release() noexcept {
    for (Staging& s : staging_) {
      if (s.stream != nullptr) cudaStreamSynchronize(s.stream);
      for (int b = 0; b < kBuffersPerThread; ++b) {
        if (s.buffer[b] != nullptr) cudaFreeHost(s.buffer[b]);
        if (s.copied[b] != nullptr) cudaEventDestroy(s.copied[b]);
      }
      if (s.stream != nullptr) cudaStreamDestroy(s.stream);
    }
    staging_.clear();
    cudaGetLastError();
  }

  // The next piece; with `wait`, blocks until there is one (false once stopping).
  bool next_task(Task& task, bool wait) {
    std::unique_lock lock(mutex_);
    if (wait) wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return false;
    task = queue_.front();
    queue_.pop_front();
    return true;
  }

  // Waits for buffer b's copy and completes its piece.
  static void retire(Staging& s, int b) {
    if (!s.in_flight[b]) return;
    Request& r = *s.in_flight[b]->request;
    const cudaError_t status = cudaEventSynchronize(s.copied[b]);
    if (status != cudaSuccess) {
      r.fail_piece(r.pieces[s.in_flight[b]->piece], "copying to the device failed: " + cuda_text(status));
    }
    s.in_flight[b].reset();
    r.complete_piece();
  }

  void work(Staging& s) {
    cudaSetDevice(device_);
    for (;;) {
      const bool copies_running = s.in_flight[0] || s.in_flight[1];
      Task task;
      if (!next_task(task, !copies_running)) {
        if (!copies_running) return;  // stopping
        for (int b = 0; b < kBuffersPerThread; ++b) retire(s, b);  // idle: finish what runs
        continue;
      }
      Request& r = *task.request;
      const Piece& piece = r.pieces[task.piece];
      try {
        if (uses_cufile(r, piece)) {
          read_with_cufile(s, r, piece);
          r.complete_piece();
        } else {
          read_and_copy(s, task);
        }
      } catch (const std::exception& e) {  // no exception may end a worker
        r.fail_piece(piece, e.what());
        r.complete_piece();
      }
    }
  }

  bool uses_cufile(const Request& r, const Piece& piece) const {
    return cufile_ != nullptr &&
           std::all_of(piece.segments.begin(), piece.segments.end(), [&](const auto& s) { return r.handles[s.read] != nullptr; });
  }

  // The compat path: pread the piece into a free staging buffer, then queue its copy.
  void read_and_copy(Staging& s, const Task& task) {
    Request& r = *task.request;
    const Piece& piece = r.pieces[task.piece];
    const int b = s.next;
    s.next = (s.next + 1) % kBuffersPerThread;
    retire(s, b);
    bool read_all = true;
    for (const auto& seg : piece.segments) {
      r.went_compat[seg.read].store(true);
      const DeviceFileRead& read = r.reads[seg.read];
      if (auto failure = detail::pread_fully(*read.io, read.fd, s.buffer[b] + seg.staging_offset, seg.length,
                                             seg.file_offset)) {
        r.fail(seg.read, *failure);
        read_all = false;
      }
    }
    if (!read_all) {
      r.complete_piece();
      return;
    }
    cudaError_t status = cudaMemcpyAsync(reinterpret_cast<void*>(piece.dest), s.buffer[b], piece.length,
                                         cudaMemcpyHostToDevice, s.stream);
    if (status == cudaSuccess) status = cudaEventRecord(s.copied[b], s.stream);
    if (status != cudaSuccess) {
      r.fail_piece(piece, "copying to the device failed: " + cuda_text(status));
      cudaStreamSynchronize(s.stream);  // the buffer may be in use by the copy that was queued
      r.complete_piece();
      return;
    }
    s.in_flight[b] = task;
  }

  // The cuFile path: each segment straight into device memory. A segment cuFile refuses
  // (a cuFile error, not a system one) is read through a staging buffer instead.
  void read_with_cufile(Staging& s, Request& r, const Piece& piece) {
    for (const auto& seg : piece.segments) {
      auto* dest = reinterpret_cast<std::byte*>(piece.dest + seg.staging_offset);
      std::uint64_t done = 0;
      while (done < seg.length) {
        const ssize_t got = cufile_->read(r.handles[seg.read], dest + done, seg.length - done,
                                          static_cast<off_t>(seg.file_offset + done));
        if (got > 0) {
          done += static_cast<std::uint64_t>(got);
          continue;
        }
        if (got == 0) {
          r.fail(seg.read, detail::file_ended_early(seg.file_offset + done, seg.file_offset + seg.length));
        } else if (got == -1) {
          r.fail(seg.read, errno_text(errno));
        } else {
          r.cufile_refused.fetch_add(1);
          copy_through_staging(s, r, seg.read, dest + done, seg.length - done, seg.file_offset + done);
        }
        break;
      }
    }
  }

  void copy_through_staging(Staging& s, Request& r, std::size_t read_index, std::byte* dest, std::uint64_t length,
                            std::uint64_t file_offset) {
    r.went_compat[read_index].store(true);
    const int b = s.next;
    retire(s, b);
    const DeviceFileRead& read = r.reads[read_index];
    if (auto failure = detail::pread_fully(*read.io, read.fd, s.buffer[b], length, file_offset)) {
      r.fail(read_index, *failure);
      return;
    }
    cudaError_t status = cudaMemcpyAsync(dest, s.buffer[b], length, cudaMemcpyHostToDevice, s.stream);
    if (status == cudaSuccess) status = cudaStreamSynchronize(s.stream);
    if (status != cudaSuccess) r.fail(read_index, "copying to the device failed: " + cuda_text(status));
  }

  static std::string errno_text(int error) { return std::generic_category().message(error); }

  const detail::GdsEngineSettings settings_;
  const GdsPathReport report_;
  const Cufile* cufile_ = nullptr;
  int device_ = 0;
  std::vector<Staging> staging_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> queue_;
  bool stopping_ = false;
};

}  // namespace

std::shared_ptr<detail::GdsEngine> gds_engine_for(const detail::GdsEngineSettings& settings) {
  require_device("reading a GDS store into device memory");
  // Never destroyed: engines hold pinned memory and CUDA streams, which may not be freed
  // while the CUDA runtime shuts down.
  static auto* mutex = new std::mutex;
  static auto* engines = new std::vector<std::pair<detail::GdsEngineSettings, std::shared_ptr<detail::GdsEngine>>>;
  std::lock_guard lock(*mutex);
  for (const auto& [s, engine] : *engines) {
    if (s == settings) return engine;
  }
  const GdsPathReport report = settings.mode == GdsMode::kCompat
                                   ? detail::choose_gds_path(settings.mode, {})
                                   : detail::choose_gds_path(settings.mode, Cufile::probe());
  auto engine = std::make_shared<Engine>(settings, report);
  engines->emplace_back(settings, engine);
  return engine;
}

}  // namespace zarrkit::gpu
