// The I/O threads behind GdsStore's device reads, without CUDA: the GPU module supplies
// the memory-specific parts (gpu/gds_engine.cpp: pinned buffers, copies on streams, cuFile),
// and the tests supply host stand-ins, so that the scheduling is tested on any machine.
//
// A request is cut into pieces (plan_pieces) that the threads take from one queue. Each
// thread owns a lane: kLaneBuffers staging buffers of one piece each, and copies out of
// them that run while the thread goes on. For a piece, a thread
//   - with a direct reader that accepted every file of the piece, reads each segment
//     straight into the destination (a read the reader refuses goes through staging);
//   - otherwise takes its next buffer (waiting for that buffer's last copy and completing
//     its piece), preads the piece's segments into it and queues the copy of the piece.
// When the queue is empty a thread waits for its running copies, so that every piece of a
// request is complete (its bytes at the destination) when read() returns.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "stores/gds_engine.h"
#include "stores/gds_plan.h"

namespace zarrkit::detail {

inline constexpr int kLaneBuffers = 2;

// One thread's staging buffers and the copies out of them.
class StagingLane {
 public:
  virtual ~StagingLane() = default;
  // Called first on the lane's thread (the GPU module selects the device there).
  virtual void on_thread_start() {}
  // Buffer b (0 <= b < kLaneBuffers) of one piece.
  virtual std::byte* buffer(int b) = 0;
  // Queues the copy of the first n bytes of buffer b to `dest`; what went wrong, if it did.
  virtual std::optional<std::string> queue_copy(int b, std::byte* dest, std::size_t n) = 0;
  // Waits for buffer b's last queued copy; what went wrong, if it did.
  virtual std::optional<std::string> wait(int b) = 0;
};

// Reads straight into the destination (cuFile).
class DirectReader {
 public:
  virtual ~DirectReader() = default;
  // A handle for the open file, or null when the reader will not read it.
  virtual void* open(int fd) = 0;
  virtual void close(void* handle) = 0;
  // Reads up to n bytes at `offset` into `dest`: the count read (0 at the end of the file),
  // -1 with errno set for a system error, or less than -1 when the reader refuses the read
  // (it then goes through a staging buffer).
  virtual ssize_t read(void* handle, std::byte* dest, std::size_t n, std::uint64_t offset) = 0;
  // Called on a lane's thread before its first direct read, and where handles are opened.
  virtual void on_thread_start() {}
  // Why open() returned null the first time it did ("" if it never did).
  virtual std::string refusal() const { return {}; }
};

class PieceScheduler {
 public:
  // One thread per lane. `direct` may be null (staging only); it must outlive the scheduler.
  PieceScheduler(std::vector<std::unique_ptr<StagingLane>> lanes, std::uint64_t piece_bytes, DirectReader* direct);
  ~PieceScheduler();
  PieceScheduler(const PieceScheduler&) = delete;
  PieceScheduler& operator=(const PieceScheduler&) = delete;

  // Reads every read in full into its destination and returns when all are there or failed.
  DeviceReadOutcome read(std::span<const DeviceFileRead> reads, std::uint64_t max_gap);

 private:
  struct Request;
  struct Task {
    Request* request = nullptr;
    std::size_t piece = 0;
  };
  struct Lane {
    std::unique_ptr<StagingLane> staging;
    std::optional<Task> in_flight[kLaneBuffers];  // the piece whose copy buffer b holds
    int next = 0;
  };

  void work(Lane& lane);
  bool next_task(Task& task, bool wait);
  static void retire(Lane& lane, int b);
  void read_and_copy(Lane& lane, const Task& task);
  void read_direct(Lane& lane, Request& r, const Piece& piece);
  void stage_segment(Lane& lane, Request& r, std::size_t read_index, std::byte* dest, std::uint64_t length,
                     std::uint64_t file_offset);

  const std::uint64_t piece_bytes_;
  DirectReader* const direct_;
  std::vector<Lane> lanes_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> queue_;
  bool stopping_ = false;
};

}  // namespace zarrkit::detail
