#include "stores/gds_pipeline.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <map>
#include <system_error>

#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit::detail {

// One call of read(): its pieces, and what became of them.
struct PieceScheduler::Request {
  std::span<const DeviceFileRead> reads;
  std::vector<Piece> pieces;
  std::vector<void*> handles;                        // per read: the direct reader's handle, or null
  std::unique_ptr<std::atomic<bool>[]> went_staged;  // per read: some of it went through staging
  std::atomic<std::uint64_t> refused{0};

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
  // The last use of the request by a thread: read() may return once all are complete.
  void complete_piece() {
    std::lock_guard lock(mutex);
    if (--remaining == 0) all_done.notify_all();
  }
};

PieceScheduler::PieceScheduler(std::vector<std::unique_ptr<StagingLane>> lanes, std::uint64_t piece_bytes,
                               DirectReader* direct)
    : piece_bytes_(piece_bytes), direct_(direct), lanes_(lanes.size()) {
  if (lanes_.empty()) fail_invalid("GDS reads need at least one I/O thread");
  for (std::size_t i = 0; i < lanes.size(); ++i) lanes_[i].staging = std::move(lanes[i]);
  for (Lane& lane : lanes_) threads_.emplace_back([this, &lane] { work(lane); });
}

PieceScheduler::~PieceScheduler() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

DeviceReadOutcome PieceScheduler::read(std::span<const DeviceFileRead> reads, std::uint64_t max_gap) {
  DeviceReadOutcome outcome;
  if (reads.empty()) return outcome;
  Request request;
  request.reads = reads;
  std::vector<PlannedRead> planned;
  planned.reserve(reads.size());
  for (const DeviceFileRead& r : reads) planned.push_back({r.file_offset, r.length, reinterpret_cast<std::uint64_t>(r.dest)});
  request.pieces = plan_pieces(planned, piece_bytes_, max_gap);
  request.handles.assign(reads.size(), nullptr);
  request.went_staged = std::make_unique<std::atomic<bool>[]>(reads.size());

  // The direct reader's handles, one per file, opened in parallel (a request may name
  // thousands of files).
  std::map<int, void*> opened;
  if (direct_ != nullptr) {
    for (const DeviceFileRead& r : reads) opened.try_emplace(r.fd, nullptr);
    std::vector<std::pair<const int, void*>*> entries;
    for (auto& entry : opened) entries.push_back(&entry);
    shared_thread_pool().parallel_for(entries.size(), [&](std::size_t k) {
      direct_->on_thread_start();
      entries[k]->second = direct_->open(entries[k]->first);
    });
    for (std::size_t i = 0; i < reads.size(); ++i) {
      request.handles[i] = opened[reads[i].fd];
      if (request.handles[i] == nullptr) request.refused.fetch_add(1);
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

  if (!opened.empty()) {
    std::vector<void*> handles;
    for (const auto& [fd, handle] : opened) {
      if (handle != nullptr) handles.push_back(handle);
    }
    shared_thread_pool().parallel_for(handles.size(), [&](std::size_t k) { direct_->close(handles[k]); });
  }
  outcome.failures = std::move(request.failures);
  std::stable_sort(outcome.failures.begin(), outcome.failures.end(),
                   [](const auto& a, const auto& b) { return a.read < b.read; });
  for (std::size_t i = 0; i < reads.size(); ++i) {
    if (request.handles[i] != nullptr && !request.went_staged[i].load()) {
      ++outcome.reads_cufile;
      outcome.bytes_cufile += reads[i].length;
    } else {
      ++outcome.reads_compat;
      outcome.bytes_compat += reads[i].length;
    }
  }
  outcome.cufile_refused = request.refused.load();
  if (outcome.cufile_refused > 0) outcome.cufile_refusal = direct_->refusal();
  return outcome;
}

bool PieceScheduler::next_task(Task& task, bool wait) {
  std::unique_lock lock(mutex_);
  if (wait) wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
  if (queue_.empty()) return false;
  task = queue_.front();
  queue_.pop_front();
  return true;
}

void PieceScheduler::retire(Lane& lane, int b) {
  if (!lane.in_flight[b]) return;
  const Task task = *lane.in_flight[b];
  lane.in_flight[b].reset();
  Request& r = *task.request;
  if (auto failure = lane.staging->wait(b)) r.fail_piece(r.pieces[task.piece], "copying to the device failed: " + *failure);
  r.complete_piece();
}

void PieceScheduler::work(Lane& lane) {
  lane.staging->on_thread_start();
  if (direct_ != nullptr) direct_->on_thread_start();
  for (;;) {
    const bool copies_running = std::any_of(std::begin(lane.in_flight), std::end(lane.in_flight),
                                            [](const auto& t) { return t.has_value(); });
    Task task;
    if (!next_task(task, !copies_running)) {
      if (!copies_running) return;  // stopping
      for (int b = 0; b < kLaneBuffers; ++b) retire(lane, b);  // idle: finish what runs
      continue;
    }
    Request& r = *task.request;
    const Piece& piece = r.pieces[task.piece];
    const bool direct = direct_ != nullptr && std::all_of(piece.segments.begin(), piece.segments.end(),
                                                          [&](const auto& s) { return r.handles[s.read] != nullptr; });
    try {
      if (direct) {
        read_direct(lane, r, piece);
        r.complete_piece();
      } else {
        read_and_copy(lane, task);  // completes the piece now, or when its copy is waited for
      }
    } catch (const std::exception& e) {  // no exception may end a thread or lose a piece
      r.fail_piece(piece, e.what());
      r.complete_piece();
    }
  }
}

void PieceScheduler::read_and_copy(Lane& lane, const Task& task) {
  Request& r = *task.request;
  const Piece& piece = r.pieces[task.piece];
  const int b = lane.next;
  lane.next = (lane.next + 1) % kLaneBuffers;
  retire(lane, b);
  std::byte* buffer = lane.staging->buffer(b);
  bool read_all = true;
  for (const auto& seg : piece.segments) {
    r.went_staged[seg.read].store(true);
    const DeviceFileRead& read = r.reads[seg.read];
    if (auto failure = pread_fully(*read.io, read.fd, buffer + seg.staging_offset, seg.length, seg.file_offset)) {
      r.fail(seg.read, *failure);
      read_all = false;
    }
  }
  if (!read_all) {
    r.complete_piece();
    return;
  }
  if (auto failure = lane.staging->queue_copy(b, reinterpret_cast<std::byte*>(piece.dest), piece.length)) {
    r.fail_piece(piece, "copying to the device failed: " + *failure);
    lane.staging->wait(b);  // the buffer may be in use by a copy that was queued
    r.complete_piece();
    return;
  }
  lane.in_flight[b] = task;
}

void PieceScheduler::read_direct(Lane& lane, Request& r, const Piece& piece) {
  for (const auto& seg : piece.segments) {
    auto* dest = reinterpret_cast<std::byte*>(piece.dest + seg.staging_offset);
    std::uint64_t done = 0;
    while (done < seg.length) {
      const ssize_t got = direct_->read(r.handles[seg.read], dest + done, seg.length - done, seg.file_offset + done);
      if (got > 0) {
        done += static_cast<std::uint64_t>(got);
        continue;
      }
      if (got == 0) {
        r.fail(seg.read, file_ended_early(seg.file_offset + done, seg.file_offset + seg.length));
      } else if (got == -1) {
        r.fail(seg.read, std::generic_category().message(errno));
      } else {
        r.refused.fetch_add(1);
        stage_segment(lane, r, seg.read, dest + done, seg.length - done, seg.file_offset + done);
      }
      break;
    }
  }
}

void PieceScheduler::stage_segment(Lane& lane, Request& r, std::size_t read_index, std::byte* dest,
                                   std::uint64_t length, std::uint64_t file_offset) {
  r.went_staged[read_index].store(true);
  const int b = lane.next;
  retire(lane, b);
  const DeviceFileRead& read = r.reads[read_index];
  if (auto failure = pread_fully(*read.io, read.fd, lane.staging->buffer(b), length, file_offset)) {
    r.fail(read_index, *failure);
    return;
  }
  auto failure = lane.staging->queue_copy(b, dest, length);
  if (auto waited = lane.staging->wait(b); !failure) failure = waited;
  if (failure) r.fail(read_index, "copying to the device failed: " + *failure);
}

}  // namespace zarrkit::detail
