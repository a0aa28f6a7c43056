// The I/O threads of GdsStore's device reads, with host stand-ins for the GPU parts: a lane
// whose "copies" happen only when they are waited for (so a buffer reused before its copy
// was waited for, or a piece completed before it, shows as wrong bytes), and a direct
// reader that refuses some files and some reads. Random requests from several threads.
#include "stores/gds_pipeline.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "stores/file_io.h"
#include "stores/testing/temp_dir.h"
#include "zarrkit/error.h"

namespace zarrkit::detail {
namespace {

using testing::TempDir;

// Copies happen when waited for, from whatever the buffer then holds.
class DeferredLane final : public StagingLane {
 public:
  explicit DeferredLane(std::size_t piece_bytes, std::atomic<int>& outstanding)
      : outstanding_(outstanding) {
    for (auto& b : buffers_) b.resize(piece_bytes);
  }
  ~DeferredLane() override { EXPECT_FALSE(pending_[0] || pending_[1]) << "a copy was never waited for"; }
  std::byte* buffer(int b) override { return buffers_[b].data(); }
  std::optional<std::string> queue_copy(int b, std::byte* dest, std::size_t n) override {
    if (fail_next_copy) {
      fail_next_copy = false;
      return "the copy engine said no";
    }
    EXPECT_FALSE(pending_[b]) << "buffer " << b << " queued twice without a wait";
    pending_[b] = Pending{dest, n};
    ++outstanding_;
    return std::nullopt;
  }
  std::optional<std::string> wait(int b) override {
    if (pending_[b]) {
      std::memcpy(pending_[b]->dest, buffers_[b].data(), pending_[b]->n);
      pending_[b].reset();
      --outstanding_;
    }
    return std::nullopt;
  }
  bool fail_next_copy = false;

 private:
  struct Pending {
    std::byte* dest;
    std::size_t n;
  };
  std::vector<std::byte> buffers_[kLaneBuffers];
  std::optional<Pending> pending_[kLaneBuffers];
  std::atomic<int>& outstanding_;
};

// pread as the direct reader, refusing the files in `refused_fds` and every `refuse_every`th read.
class PreadDirect final : public DirectReader {
 public:
  std::set<int> refused_fds;
  int refuse_every = 0;
  std::atomic<int> open_handles{0};
  std::atomic<int> reads{0};

  void* open(int fd) override {
    if (refused_fds.count(fd) != 0) return nullptr;
    ++open_handles;
    return reinterpret_cast<void*>(static_cast<std::intptr_t>(fd) + 1);
  }
  void close(void*) override { --open_handles; }
  ssize_t read(void* handle, std::byte* dest, std::size_t n, std::uint64_t offset) override {
    const int k = ++reads;
    if (refuse_every > 0 && k % refuse_every == 0) return -5008;
    const int fd = static_cast<int>(reinterpret_cast<std::intptr_t>(handle) - 1);
    return ::pread(fd, dest, std::min<std::size_t>(n, 3000), static_cast<off_t>(offset));  // short reads too
  }
};

// Files of random bytes, opened.
struct Files {
  TempDir dir;
  std::vector<std::string> contents;
  std::vector<int> fds;
  Files(std::mt19937_64& rng, int n, std::size_t max_size) {
    for (int i = 0; i < n; ++i) {
      std::string bytes(rng() % (max_size + 1), '\0');
      for (char& c : bytes) c = static_cast<char>(rng());
      const auto path = dir / ("f" + std::to_string(i));
      testing::write_file(path, bytes);
      contents.push_back(std::move(bytes));
      fds.push_back(::open(path.c_str(), O_RDONLY));
    }
  }
  ~Files() {
    for (int fd : fds) ::close(fd);
  }
};

std::vector<std::unique_ptr<StagingLane>> lanes(int n, std::size_t piece_bytes, std::atomic<int>& outstanding,
                                                std::vector<DeferredLane*>* out = nullptr) {
  std::vector<std::unique_ptr<StagingLane>> v;
  for (int i = 0; i < n; ++i) {
    auto lane = std::make_unique<DeferredLane>(piece_bytes, outstanding);
    if (out != nullptr) out->push_back(lane.get());
    v.push_back(std::move(lane));
  }
  return v;
}

// A random request over `files` into `dest` (reads packed with gaps of up to `gap`), and
// the bytes `dest` must hold afterwards (the sentinel where nothing is read, unless the
// gaps may be written).
struct RandomRequest {
  std::vector<DeviceFileRead> reads;
  std::vector<std::byte> dest;
  std::vector<std::byte> expected;
  std::vector<bool> must_match;

  RandomRequest(std::mt19937_64& rng, const Files& files, FileIo& io, std::uint64_t gap) {
    const int n = 1 + static_cast<int>(rng() % 30);
    struct Spec {
      std::size_t file;
      std::uint64_t offset, length, at;
    };
    std::vector<Spec> specs;
    std::uint64_t at = 0;
    for (int i = 0; i < n; ++i) {
      const std::size_t f = rng() % files.contents.size();
      const std::uint64_t size = files.contents[f].size();
      const std::uint64_t offset = size == 0 ? 0 : rng() % (size + 1);
      const std::uint64_t length = rng() % 5 == 0 ? 0 : rng() % (size - offset + 1);
      at += gap == 0 ? rng() % 3 : rng() % (gap + 1);
      specs.push_back({f, offset, length, at});
      at += length;
    }
    dest.assign(at + 1, std::byte{0xEE});
    expected = dest;
    must_match.assign(dest.size(), gap == 0);
    for (const Spec& s : specs) {
      reads.push_back({files.fds[s.file], &io, s.offset, s.length, dest.data() + s.at});
      std::memcpy(expected.data() + s.at, files.contents[s.file].data() + s.offset, s.length);
      for (std::uint64_t k = 0; k < s.length; ++k) must_match[s.at + k] = true;
    }
  }
  void check(const std::string& what) const {
    for (std::size_t i = 0; i < dest.size(); ++i) {
      if (must_match[i] && dest[i] != expected[i]) {
        ADD_FAILURE() << what << ": byte " << i << " differs";
        return;
      }
    }
  }
};

TEST(GdsPipeline, StagedPiecesLandWhereTheyBelong) {
  std::mt19937_64 rng(1);
  Files files(rng, 12, 20000);
  FileIo io;
  for (const int threads : {1, 2, 4}) {
    for (const std::uint64_t piece : {1ull, 7ull, 512ull, 4096ull, 65536ull}) {
      std::atomic<int> outstanding{0};
      {
        PieceScheduler scheduler(lanes(threads, piece, outstanding), piece, nullptr);
        for (int round = 0; round < 6; ++round) {
          const std::uint64_t gap = round % 2 == 0 ? 0 : 300;
          RandomRequest request(rng, files, io, gap);
          const DeviceReadOutcome outcome = scheduler.read(request.reads, gap);
          EXPECT_TRUE(outcome.failures.empty());
          EXPECT_EQ(outcome.reads_compat, request.reads.size());
          EXPECT_EQ(outcome.reads_cufile, 0u);
          request.check("threads " + std::to_string(threads) + " piece " + std::to_string(piece));
        }
      }
      EXPECT_EQ(outstanding.load(), 0);
    }
  }
}

TEST(GdsPipeline, DirectReadsAndRefusalsAreCountedAndCorrect) {
  std::mt19937_64 rng(2);
  Files files(rng, 10, 30000);
  FileIo io;
  PreadDirect direct;
  direct.refused_fds = {files.fds[1], files.fds[4]};
  direct.refuse_every = 7;
  std::atomic<int> outstanding{0};
  {
    PieceScheduler scheduler(lanes(3, 8192, outstanding), 8192, &direct);
    std::uint64_t cufile = 0, compat = 0, refused = 0;
    for (int round = 0; round < 20; ++round) {
      RandomRequest request(rng, files, io, round % 2 == 0 ? 0 : 255);
      const DeviceReadOutcome outcome = scheduler.read(request.reads, round % 2 == 0 ? 0 : 255);
      EXPECT_TRUE(outcome.failures.empty());
      EXPECT_EQ(outcome.reads_cufile + outcome.reads_compat, request.reads.size());
      cufile += outcome.reads_cufile;
      compat += outcome.reads_compat;
      refused += outcome.cufile_refused;
      request.check("round " + std::to_string(round));
      EXPECT_EQ(direct.open_handles.load(), 0) << "handles left open";
    }
    EXPECT_GT(cufile, 0u);
    EXPECT_GT(compat, 0u);
    EXPECT_GT(refused, 0u);
  }
  EXPECT_EQ(outstanding.load(), 0);
}

// pread failing with EIO on one file descriptor.
class FailingFd : public FileIo {
 public:
  int bad_fd = -1;
  ssize_t pread(int fd, void* buffer, std::size_t count, off_t offset) override {
    if (fd == bad_fd) {
      errno = EIO;
      return -1;
    }
    return FileIo::pread(fd, buffer, count, offset);
  }
};

TEST(GdsPipeline, FailuresNameTheirReadsAndTheRestArrive) {
  std::mt19937_64 rng(3);
  Files files(rng, 3, 0);
  files.contents.clear();
  FailingFd io;
  // Three files of 10 KiB; reads of the middle one fail, and one read asks past its end.
  std::vector<std::string> data;
  for (int i = 0; i < 3; ++i) {
    data.emplace_back(10240, static_cast<char>('a' + i));
    testing::write_file(files.dir / ("g" + std::to_string(i)), data.back());
  }
  std::vector<int> fds;
  for (int i = 0; i < 3; ++i) fds.push_back(::open((files.dir / ("g" + std::to_string(i))).c_str(), O_RDONLY));
  io.bad_fd = fds[1];
  std::vector<std::byte> dest(40000);
  const std::vector<DeviceFileRead> reads = {{fds[0], &io, 0, 10240, dest.data()},
                                             {fds[1], &io, 0, 10240, dest.data() + 10240},
                                             {fds[2], &io, 5000, 6000, dest.data() + 20480},
                                             {fds[2], &io, 0, 5000, dest.data() + 30000}};
  std::atomic<int> outstanding{0};
  std::vector<DeferredLane*> raw;
  {
    PieceScheduler scheduler(lanes(2, 4096, outstanding, &raw), 4096, nullptr);
    DeviceReadOutcome outcome = scheduler.read(reads, 0);
    std::set<std::size_t> failed;
    for (const auto& f : outcome.failures) failed.insert(f.read);
    EXPECT_EQ(failed, (std::set<std::size_t>{1, 2}));
    for (const auto& f : outcome.failures) {
      if (f.read == 1) {
        EXPECT_EQ(f.what, "Input/output error");
      } else {
        EXPECT_NE(f.what.find("ended at byte 10240, 11000 expected"), std::string::npos) << f.what;
      }
    }
    EXPECT_EQ(std::memcmp(dest.data(), data[0].data(), 10240), 0);
    EXPECT_EQ(std::memcmp(dest.data() + 30000, data[2].data(), 5000), 0);

    // A copy that cannot be queued fails its piece's reads, and the scheduler goes on.
    raw[0]->fail_next_copy = true;
    raw[1]->fail_next_copy = true;
    io.bad_fd = -1;
    const std::vector<DeviceFileRead> one = {{fds[0], &io, 0, 100, dest.data()}};
    outcome = scheduler.read(one, 0);
    ASSERT_EQ(outcome.failures.size(), 1u);
    EXPECT_NE(outcome.failures[0].what.find("the copy engine said no"), std::string::npos);
    raw[0]->fail_next_copy = raw[1]->fail_next_copy = false;
    outcome = scheduler.read(reads, 0);
    EXPECT_EQ(outcome.failures.size(), 1u);  // only the read past the end
  }
  for (int fd : fds) ::close(fd);
}

TEST(GdsPipeline, RequestsFromSeveralThreadsAtOnce) {
  std::mt19937_64 seed_rng(4);
  Files files(seed_rng, 16, 50000);
  FileIo io;
  PreadDirect direct;
  direct.refused_fds = {files.fds[3]};
  std::atomic<int> outstanding{0};
  {
    PieceScheduler staged(lanes(3, 3000, outstanding), 3000, nullptr);
    PieceScheduler mixed(lanes(2, 5000, outstanding), 5000, &direct);
    std::vector<std::thread> callers;
    std::mutex failures;
    for (int t = 0; t < 4; ++t) {
      callers.emplace_back([&, t] {
        std::mt19937_64 rng(100 + t);
        for (int round = 0; round < 25; ++round) {
          RandomRequest request(rng, files, io, round % 3 == 0 ? 0 : 511);
          PieceScheduler& s = (t + round) % 2 == 0 ? staged : mixed;
          const DeviceReadOutcome outcome = s.read(request.reads, round % 3 == 0 ? 0 : 511);
          std::lock_guard lock(failures);
          EXPECT_TRUE(outcome.failures.empty());
          request.check("caller " + std::to_string(t) + " round " + std::to_string(round));
        }
      });
    }
    for (auto& c : callers) c.join();
  }
  EXPECT_EQ(outstanding.load(), 0);
  EXPECT_EQ(direct.open_handles.load(), 0);
}

TEST(GdsPipeline, NeedsAThread) {
  std::atomic<int> outstanding{0};
  EXPECT_THROW(PieceScheduler(lanes(0, 10, outstanding), 10, nullptr), zarrkit::InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit::detail
