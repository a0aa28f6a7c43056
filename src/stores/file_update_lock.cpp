#include "stores/file_update_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "zarrkit/error.h"

namespace zarrkit {
namespace {

// FNV-1a: the same stripe in every process and build (std::hash need not be).
std::uint64_t stable_hash(std::string_view a, std::string_view b) {
  std::uint64_t h = 1469598103934665603ull;
  const auto mix = [&](std::string_view s) {
    for (const char c : s) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ull;
    }
  };
  mix(a);
  mix(std::string_view("\0", 1));
  mix(b);
  return h;
}

const std::string& lock_directory() {
  static const std::string dir = [] {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::temp_directory_path(ec);
    if (ec) base = "/tmp";
    const std::filesystem::path d = base / "zarrkit-locks";
    if (std::filesystem::create_directories(d, ec)) {
      // Shared by every user of the host, as /tmp is: anyone may add a lock file.
      (void)::chmod(d.c_str(), 01777);
    }
    return d.string();
  }();
  return dir;
}

class FileUpdateLock final : public UpdateLock {
 public:
  explicit FileUpdateLock(int fd) : fd_(fd) {}
  ~FileUpdateLock() override { ::close(fd_); }  // releases the flock
  FileUpdateLock(const FileUpdateLock&) = delete;
  FileUpdateLock& operator=(const FileUpdateLock&) = delete;

 private:
  int fd_;
};

}  // namespace

std::unique_ptr<UpdateLock> lock_file_update(std::string_view store_root, std::string_view key) {
  const std::string path =
      fmt::format("{}/{:03x}.lock", lock_directory(), stable_hash(store_root, key) % kUpdateLockStripes);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EACCES) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);  // made by another user
  if (fd < 0) {
    fail_io("cannot open the update lock file \"{}\" for key '{}': {}", path, key, std::strerror(errno));
  }
  // Made by this process: readable and writable by every user, whatever the umask.
  (void)::fchmod(fd, 0666);
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    ::close(fd);
    fail_io("cannot lock the update lock file \"{}\" for key '{}': {}", path, key, std::strerror(error));
  }
  return std::make_unique<FileUpdateLock>(fd);
}

}  // namespace zarrkit
