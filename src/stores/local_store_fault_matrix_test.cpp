// The fault matrix of a durable LocalStore write: each fault (ENOSPC, EIO, EINTR, a short
// write) at each step of the write (creating the temporary file, writing it, syncing it,
// renaming it into place, syncing its directory), with the store checked after each.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "stores/file_io.h"
#include "stores/testing/temp_dir.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/local_store.h"

namespace zarrkit {
namespace {

namespace fs = std::filesystem;

// The steps of LocalStore::set, each named by the system call and which call of that name
// it is within one durable overwrite of an existing key.
struct Step {
  const char* name;
  const char* call;
  int nth;
};
constexpr Step kCreateTemp{"create the temporary file", "open", 1};
constexpr Step kWrite{"write", "write", 1};
constexpr Step kSyncFile{"fsync the file", "fsync", 1};
constexpr Step kRename{"rename into place", "rename", 1};
constexpr Step kSyncDirectory{"fsync the directory", "fsync", 2};
constexpr Step kSteps[] = {kCreateTemp, kWrite, kSyncFile, kRename, kSyncDirectory};

constexpr int kShortWrite = -1;  // not an errno: the write transfers one byte

// Real system calls, except the nth call of one name, which fails with `error` (EINTR once:
// a retry then succeeds) or, for kShortWrite, transfers a single byte.
class OneFaultIo : public detail::FileIo {
 public:
  OneFaultIo(Step step, int error) : step_(step), error_(error) {}
  int fired = 0;

  int open(const char* path, int flags, mode_t mode) override {
    return inject("open") ? -1 : FileIo::open(path, flags, mode);
  }
  ssize_t write(int fd, const void* buffer, std::size_t count) override {
    if (error_ == kShortWrite && is_due("write")) {
      ++fired;
      return FileIo::write(fd, buffer, std::min<std::size_t>(count, 1));
    }
    return inject("write") ? -1 : FileIo::write(fd, buffer, count);
  }
  int fsync(int fd) override { return inject("fsync") ? -1 : FileIo::fsync(fd); }
  int rename(const char* from, const char* to) override { return inject("rename") ? -1 : FileIo::rename(from, to); }

 private:
  bool is_due(const std::string& call) { return call == step_.call && ++seen_ == step_.nth; }
  bool inject(const std::string& call) {
    if (error_ == kShortWrite || !is_due(call)) return false;
    ++fired;
    errno = error_;
    return true;
  }
  Step step_;
  int error_;
  int seen_ = 0;
};

std::vector<std::string> files_below(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_directory()) out.push_back(fs::relative(entry.path(), dir).string());
  }
  return out;
}

std::string read_value(Store& store, std::string_view key) {
  auto value = store.get(key);
  return value ? std::string(as_chars(value->view())) : "<absent>";
}

const std::string kOld = "old value";
const std::string kNew(10000, 'n');  // several writes when they come back short

struct Outcome {
  bool threw = false;
  std::string message;
  std::string value;
  std::vector<std::string> files;
  int fired = 0;
};

Outcome overwrite_with_fault(Step step, int error) {
  testing::TempDir dir;
  LocalStore(dir.path()).set("a/k", as_bytes(kOld));
  auto io = std::make_shared<OneFaultIo>(step, error);
  LocalStore store(dir.path(), LocalStoreOptions{.durable = true, .io = io});
  Outcome outcome;
  try {
    store.set("a/k", as_bytes(kNew));
  } catch (const IoError& e) {
    outcome.threw = true;
    outcome.message = e.what();
  }
  outcome.value = read_value(store, "a/k");
  outcome.files = files_below(dir.path());
  outcome.fired = io->fired;
  return outcome;
}

TEST(LocalStoreFaultMatrix, FailuresAreReportedAndLeaveTheOldValueAndNoTemporary) {
  for (const Step& step : kSteps) {
    for (int error : {ENOSPC, EIO}) {
      SCOPED_TRACE(std::string(step.name) + ": " + std::strerror(error));
      const Outcome outcome = overwrite_with_fault(step, error);
      ASSERT_EQ(outcome.fired, 1);
      ASSERT_TRUE(outcome.threw);
      EXPECT_NE(outcome.message.find(std::strerror(error)), std::string::npos) << outcome.message;
      EXPECT_NE(outcome.message.find("a/k"), std::string::npos) << outcome.message;
      // Once renamed, the new value is in place: only its durability is not acknowledged.
      EXPECT_EQ(outcome.value, step.call == kSyncDirectory.call && step.nth == 2 ? kNew : kOld);
      EXPECT_EQ(outcome.files, std::vector<std::string>{"a/k"});
    }
  }
}

TEST(LocalStoreFaultMatrix, InterruptionsAreRetriedAtEveryStep) {
  for (const Step& step : kSteps) {
    SCOPED_TRACE(step.name);
    const Outcome outcome = overwrite_with_fault(step, EINTR);
    ASSERT_EQ(outcome.fired, 1);
    EXPECT_FALSE(outcome.threw) << outcome.message;
    EXPECT_EQ(outcome.value, kNew);
    EXPECT_EQ(outcome.files, std::vector<std::string>{"a/k"});
  }
}

TEST(LocalStoreFaultMatrix, AShortWriteIsContinued) {
  const Outcome outcome = overwrite_with_fault(kWrite, kShortWrite);
  ASSERT_EQ(outcome.fired, 1);
  EXPECT_FALSE(outcome.threw) << outcome.message;
  EXPECT_EQ(outcome.value, kNew);
  EXPECT_EQ(outcome.files, std::vector<std::string>{"a/k"});
}

}  // namespace
}  // namespace zarrkit
