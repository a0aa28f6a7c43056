// LocalStore under failing, interrupted and short system calls (through the FileIo seam).
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "stores/file_io.h"
#include "stores/testing/temp_dir.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/local_store.h"

namespace zarrkit {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// Real system calls, with scripted interruptions, short transfers and failures, and a
// count of every call by name.
class ScriptedFileIo : public detail::FileIo {
 public:
  std::map<std::string, int> calls;
  bool interrupt_every_other_call = false;
  std::size_t max_transfer = 0;          // 0: no limit
  std::map<std::string, int> fail_with;  // call name -> errno, for the next such call only

  int open(const char* path, int flags, mode_t mode) override {
    if (int e = scripted("open")) return fail(e);
    return FileIo::open(path, flags, mode);
  }
  ssize_t pread(int fd, void* buffer, std::size_t count, off_t offset) override {
    if (int e = scripted("pread")) return fail(e);
    return FileIo::pread(fd, buffer, limit(count), offset);
  }
  ssize_t preadv(int fd, const struct iovec* buffers, int count, off_t offset) override {
    if (int e = scripted("preadv")) return fail(e);
    // A short transfer fills the first buffers with at most max_transfer bytes in all.
    std::vector<struct iovec> cut;
    std::size_t left = max_transfer == 0 ? SIZE_MAX : max_transfer;
    for (int i = 0; i < count && left > 0; ++i) {
      const std::size_t n = std::min(left, buffers[i].iov_len);
      cut.push_back({buffers[i].iov_base, n});
      left -= n;
    }
    return FileIo::preadv(fd, cut.data(), static_cast<int>(cut.size()), offset);
  }
  ssize_t write(int fd, const void* buffer, std::size_t count) override {
    if (int e = scripted("write")) return fail(e);
    return FileIo::write(fd, buffer, limit(count));
  }
  int fsync(int fd) override {
    if (int e = scripted("fsync")) return fail(e);
    return FileIo::fsync(fd);
  }
  int close(int fd) override {
    ++calls["close"];
    return FileIo::close(fd);  // EINTR from close is never retried, so not scripted
  }
  int rename(const char* from, const char* to) override {
    if (int e = scripted("rename")) return fail(e);
    return FileIo::rename(from, to);
  }
  int unlink(const char* path) override {
    if (int e = scripted("unlink")) return fail(e);
    return FileIo::unlink(path);
  }
  int mkdir(const char* path, mode_t mode) override {
    if (int e = scripted("mkdir")) return fail(e);
    return FileIo::mkdir(path, mode);
  }

 private:
  // The errno the call `name` must fail with now, or 0 to run it.
  int scripted(const std::string& name) {
    int n = ++calls[name];
    if (auto it = fail_with.find(name); it != fail_with.end()) {
      int e = it->second;
      fail_with.erase(it);
      return e;
    }
    if (interrupt_every_other_call && n % 2 == 1) return EINTR;
    return 0;
  }
  static int fail(int e) {
    errno = e;
    return -1;
  }
  std::size_t limit(std::size_t count) const {
    return max_transfer == 0 ? count : std::min(count, max_transfer);
  }
};

struct Fixture {
  TempDir dir;
  std::shared_ptr<ScriptedFileIo> io = std::make_shared<ScriptedFileIo>();
  LocalStore store{dir.path(), LocalStoreOptions{.io = io}};
  LocalStore durable_store{dir.path(), LocalStoreOptions{.durable = true, .io = io}};

  std::string read(std::string_view key) {
    auto value = store.get(key);
    return value ? std::string(as_chars(value->view())) : "<absent>";
  }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(dir.path())) {
      if (!entry.is_directory()) out.push_back(fs::relative(entry.path(), dir.path()).string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

std::string pattern(std::size_t size) {
  std::string s(size, '\0');
  for (std::size_t i = 0; i < size; ++i) s[i] = static_cast<char>('a' + i % 23);
  return s;
}

TEST(LocalStoreFaults, InterruptedCallsAreRetried) {
  Fixture f;
  f.io->interrupt_every_other_call = true;
  f.store.set("a/b/c", as_bytes("value"));
  f.durable_store.set("a/b/d", as_bytes("durable"));
  EXPECT_EQ(f.read("a/b/c"), "value");
  EXPECT_EQ(f.read("a/b/d"), "durable");
  f.store.erase("a/b/c");
  EXPECT_EQ(f.read("a/b/c"), "<absent>");
  EXPECT_EQ(f.files(), (std::vector<std::string>{"a/b/d"}));
  EXPECT_GE(f.io->calls["write"], 4);  // two writes, each interrupted once
}

TEST(LocalStoreFaults, ShortReadsAndWritesAreContinued) {
  Fixture f;
  f.io->max_transfer = 7;
  const std::string value = pattern(1000);
  f.store.set("k", as_bytes(value));
  EXPECT_EQ(f.io->calls["write"], 143);  // ceil(1000 / 7)
  EXPECT_EQ(testing::read_file(f.dir / "k"), value);
  EXPECT_EQ(f.read("k"), value);
  EXPECT_EQ(f.io->calls["pread"], 143);
  auto part = f.store.get("k", BufferPrototype::host(), ByteRange::range(100, 130));
  ASSERT_TRUE(part);
  EXPECT_EQ(as_chars(part->view()), value.substr(100, 30));
}

// read_into: ranges that follow one another in the file are one preadv call (a chunk's rows
// into an output's rows); short and interrupted transfers are continued range by range.
TEST(LocalStoreFaults, ReadIntoConsecutiveRangesIsOnePreadv) {
  for (const std::size_t max_transfer : {std::size_t{0}, std::size_t{7}, std::size_t{120}}) {
    for (const bool interrupt : {false, true}) {
      Fixture f;
      const std::string value = pattern(1000);
      f.store.set("k", as_bytes(value));
      f.io->calls.clear();
      f.io->max_transfer = max_transfer;
      f.io->interrupt_every_other_call = interrupt;
      std::string a(100, '.'), b(150, '.'), c(750, '.'), d(10, '.');
      const ByteRange ranges[] = {ByteRange::range(0, 100), ByteRange::range(100, 250), ByteRange::from_offset(250),
                                  ByteRange::range(10, 20)};
      const MutableByteView dests[] = {{reinterpret_cast<std::byte*>(a.data()), a.size()},
                                       {reinterpret_cast<std::byte*>(b.data()), b.size()},
                                       {reinterpret_cast<std::byte*>(c.data()), c.size()},
                                       {reinterpret_cast<std::byte*>(d.data()), d.size()}};
      EXPECT_EQ(f.store.read_into("k", ranges, dests), 1000u);
      EXPECT_EQ(a + b + c, value) << max_transfer << " " << interrupt;
      EXPECT_EQ(d, value.substr(10, 10));
      EXPECT_EQ(f.io->calls["preadv"], interrupt ? 2 : 1);
      if (max_transfer == 0) {
        EXPECT_EQ(f.io->calls["pread"], interrupt ? 2 : 1);
      }
    }
  }
  Fixture f;
  f.store.set("k", as_bytes(pattern(100)));
  f.io->fail_with["preadv"] = EIO;
  std::string a(50, '.'), b(50, '.');
  const ByteRange ranges[] = {ByteRange::range(0, 50), ByteRange::range(50, 100)};
  const MutableByteView dests[] = {{reinterpret_cast<std::byte*>(a.data()), a.size()},
                                   {reinterpret_cast<std::byte*>(b.data()), b.size()}};
  EXPECT_THROW(f.store.read_into("k", ranges, dests), IoError);
}

TEST(LocalStoreFaults, GetRangesOpensTheFileOnce) {
  Fixture f;
  f.store.set("shard", as_bytes(pattern(100)));
  f.io->calls.clear();
  const ByteRange ranges[] = {ByteRange::last(16), ByteRange::range(0, 10), ByteRange::range(50, 60)};
  auto parts = f.store.get_ranges("shard", ranges);
  ASSERT_TRUE(parts);
  EXPECT_EQ(as_chars((*parts)[0].view()), pattern(100).substr(84));
  EXPECT_EQ(f.io->calls["open"], 1);
  EXPECT_EQ(f.io->calls["pread"], 3);
  EXPECT_EQ(f.io->calls["close"], 1);
}

TEST(LocalStoreFaults, OpenReaderContinuesShortAndInterruptedReadsAndReportsFailures) {
  for (const bool interrupt : {false, true}) {
    Fixture f;
    const std::string value = pattern(1000);
    f.store.set("k", as_bytes(value));
    f.io->calls.clear();
    f.io->max_transfer = 7;
    f.io->interrupt_every_other_call = interrupt;
    const auto reader = f.store.open_reader("k");
    ASSERT_NE(reader, nullptr);
    std::string part(300, '.');
    EXPECT_EQ(reader->read(100, MutableByteView(reinterpret_cast<std::byte*>(part.data()), part.size())), 300u);
    EXPECT_EQ(part, value.substr(100, 300));
    EXPECT_EQ(f.io->calls["open"], interrupt ? 2 : 1);  // one open, retried once where interrupted
    EXPECT_GE(f.io->calls["pread"], 43);                 // ceil(300 / 7)
  }
  Fixture f;
  f.store.set("k", as_bytes(pattern(100)));
  const auto reader = f.store.open_reader("k");
  f.io->fail_with["pread"] = EIO;
  std::string part(10, '.');
  EXPECT_THROW(reader->read(0, MutableByteView(reinterpret_cast<std::byte*>(part.data()), part.size())), IoError);
  f.io->fail_with["open"] = EACCES;
  EXPECT_THROW(f.store.open_reader("k"), IoError);
}

TEST(LocalStoreFaults, DiskFullKeepsTheOldValueAndRemovesTheTemporaryFile) {
  Fixture f;
  f.store.set("a/k", as_bytes("old"));
  f.io->fail_with["write"] = ENOSPC;
  try {
    f.store.set("a/k", as_bytes(pattern(5000)));
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a/k"), std::string::npos) << e.what();
  }
  EXPECT_EQ(f.read("a/k"), "old");
  EXPECT_EQ(f.files(), (std::vector<std::string>{"a/k"}));
}

TEST(LocalStoreFaults, FailedFsyncIsReportedAndNotRetried) {
  Fixture f;
  f.store.set("k", as_bytes("old"));
  f.io->calls.clear();
  f.io->fail_with["fsync"] = EIO;
  EXPECT_THROW(f.durable_store.set("k", as_bytes("new")), IoError);
  EXPECT_EQ(f.io->calls["fsync"], 1);
  EXPECT_EQ(f.io->calls["rename"], 0);  // never renamed into place after a failed fsync
  EXPECT_EQ(f.read("k"), "old");
  EXPECT_EQ(f.files(), (std::vector<std::string>{"k"}));
}

// Fails the second fsync: in a durable overwrite that is the directory's, after the rename.
class DirectorySyncFails : public ScriptedFileIo {
 public:
  int fsync(int fd) override {
    if (++count == 2) {
      errno = EIO;
      return -1;
    }
    return ScriptedFileIo::fsync(fd);
  }
  int count = 0;
};

TEST(LocalStoreFaults, FailedDirectorySyncIsReported) {
  TempDir dir;
  LocalStore(dir.path()).set("k", as_bytes("v1"));
  LocalStore store(dir.path(), LocalStoreOptions{.durable = true, .io = std::make_shared<DirectorySyncFails>()});
  try {
    store.set("k", as_bytes("v2"));
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    // The value is in place but the write is not acknowledged as durable.
    EXPECT_NE(std::string(e.what()).find("could not be synced"), std::string::npos) << e.what();
  }
  EXPECT_EQ(testing::read_file(dir / "k"), "v2");
}

TEST(LocalStoreFaults, DurableWritesSyncFileAndDirectories) {
  Fixture f;
  f.durable_store.set("new_dir/k", as_bytes("v"));
  // The new directory's entry in the root, the file, then the file's entry in new_dir.
  EXPECT_EQ(f.io->calls["fsync"], 3);
  f.io->calls.clear();
  f.durable_store.set("new_dir/k", as_bytes("v2"));
  EXPECT_EQ(f.io->calls["fsync"], 2);
  f.io->calls.clear();
  f.store.set("new_dir/k", as_bytes("v3"));
  EXPECT_EQ(f.io->calls["fsync"], 0);
  f.durable_store.erase("new_dir/k");
  EXPECT_EQ(f.io->calls["fsync"], 1);
}

TEST(LocalStoreFaults, TheDurableWritesSettingMakesEveryStoreOpenedUnderItDurable) {
  TempDir dir;
  auto io = std::make_shared<ScriptedFileIo>();
  {
    const ScopedConfig durable([](Config& c) { c.durable_writes = true; });
    // The root is made here: its entry in its parent is synced too.
    LocalStore store(dir.path() / "root", LocalStoreOptions{.io = io});
    EXPECT_EQ(io->calls["fsync"], 1);
    store.set("k", as_bytes("v"));
    EXPECT_EQ(io->calls["fsync"], 3);  // the file, then the root directory
  }
  io->calls.clear();
  LocalStore later(dir.path() / "root", LocalStoreOptions{.io = io});  // opened without the setting
  later.set("k", as_bytes("v2"));
  EXPECT_EQ(io->calls["fsync"], 0);
}

TEST(LocalStoreFaults, FailedRenameRemovesTheTemporaryFile) {
  Fixture f;
  f.store.set("k", as_bytes("old"));
  f.io->fail_with["rename"] = EXDEV;
  EXPECT_THROW(f.store.set("k", as_bytes("new")), IoError);
  EXPECT_EQ(f.read("k"), "old");
  EXPECT_EQ(f.files(), (std::vector<std::string>{"k"}));
}

TEST(LocalStoreFaults, FailedMkdirIsAnIoError) {
  Fixture f;
  f.io->fail_with["mkdir"] = EACCES;
  EXPECT_THROW(f.store.set("a/b", as_bytes("x")), IoError);
  EXPECT_TRUE(f.files().empty());
}

TEST(LocalStoreFaults, ReadFailuresAreIoErrors) {
  Fixture f;
  f.store.set("k", as_bytes("value"));
  f.io->fail_with["open"] = EACCES;
  EXPECT_THROW(f.store.get("k"), IoError);
  f.io->fail_with["pread"] = EIO;
  EXPECT_THROW(f.store.get("k"), IoError);
  f.io->fail_with["unlink"] = EROFS;
  EXPECT_THROW(f.store.erase("k"), IoError);
  EXPECT_EQ(f.read("k"), "value");  // and the store works again afterwards
}

// Large values are read in pieces by several threads (thread-safe counters here): every
// piece's bytes land where they belong, and where the file ends early (it shrank after the
// size was taken) the value is what precedes the first short piece.
class ShrunkFileIo : public detail::FileIo {
 public:
  std::atomic<int> preads{0};
  std::atomic<std::int64_t> visible_end{INT64_MAX};  // reads see no byte at or past this offset

  ssize_t pread(int fd, void* buffer, std::size_t count, off_t offset) override {
    ++preads;
    const std::int64_t end = visible_end.load();
    if (offset >= end) return 0;
    count = std::min<std::size_t>(count, static_cast<std::size_t>(end - offset));
    return FileIo::pread(fd, buffer, count, offset);
  }
};

TEST(LocalStoreFaults, LargeValuesAreReadInPiecesAndAShrunkFileGivesWhatPrecedesTheEnd) {
  TempDir dir;
  auto io = std::make_shared<ShrunkFileIo>();
  LocalStore store(dir.path(), LocalStoreOptions{.io = io});
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  const std::string value = pattern(13 * kMiB + 11);
  store.set("big", as_bytes(value));
  auto whole = store.get("big");
  ASSERT_TRUE(whole);
  EXPECT_TRUE(as_chars(whole->view()) == value);
  EXPECT_GE(io->preads.load(), 3);  // 4 MiB pieces
  auto part = store.get("big", BufferPrototype::host(), ByteRange::range(kMiB + 3, 12 * kMiB));
  ASSERT_TRUE(part);
  EXPECT_TRUE(as_chars(part->view()) == value.substr(kMiB + 3, 11 * kMiB - 3));
  for (const std::size_t end : {9 * kMiB + 5, 5 * kMiB, 4 * kMiB, std::size_t{17}}) {
    io->visible_end = static_cast<std::int64_t>(end);
    auto shrunk = store.get("big");
    ASSERT_TRUE(shrunk);
    EXPECT_EQ(shrunk->size(), end);
    EXPECT_TRUE(as_chars(shrunk->view()) == value.substr(0, end));
  }
}

}  // namespace
}  // namespace zarrkit
