#include "demo/page_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "zarrkit/error.h"

namespace zarrkit::demo {

namespace fs = std::filesystem;

namespace {

// Closes the descriptor on every path out.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Pages of the open file `fd` (of `size` bytes) that are in the page cache, in bytes.
std::uint64_t resident_bytes(int fd, std::uint64_t size, const fs::path& path) {
  if (size == 0) return 0;
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) fail_io("cannot map {} to count its cached pages: {}", path.string(), std::strerror(errno));
  const std::uint64_t page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in_core((size + page - 1) / page);
  const int rc = mincore(map, size, in_core.data());
  const int saved_errno = errno;
  munmap(map, size);
  if (rc != 0) fail_io("mincore on {} failed: {}", path.string(), std::strerror(saved_errno));
  std::uint64_t resident = 0;
  for (std::size_t i = 0; i < in_core.size(); ++i) {
    if (in_core[i] & 1) resident += std::min(page, size - i * page);
  }
  return resident;
}

void drop_file(const fs::path& path, CacheDrop& totals) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) fail_io("cannot open {} to drop it from the page cache: {}", path.string(), std::strerror(errno));
  // Dirty pages cannot be dropped: write them out first.
  if (fsync(fd.get()) != 0) fail_io("fsync of {} failed: {}", path.string(), std::strerror(errno));
  const int advice = posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  if (advice != 0) fail_io("posix_fadvise(DONTNEED) on {} failed: {}", path.string(), std::strerror(advice));
  const std::uint64_t size = fs::file_size(path);
  totals.files += 1;
  totals.bytes += size;
  totals.resident_bytes += resident_bytes(fd.get(), size, path);
}

}  // namespace

CacheDrop drop_from_page_cache(const fs::path& path) {
  CacheDrop totals;
  if (fs::is_regular_file(path)) {
    drop_file(path, totals);
    return totals;
  }
  for (const auto& entry : fs::recursive_directory_iterator(path)) {
    if (entry.is_regular_file()) drop_file(entry.path(), totals);
  }
  return totals;
}

std::optional<std::uint64_t> bytes_read_from_storage() {
  std::ifstream io("/proc/self/io");
  std::string key;
  std::uint64_t value = 0;
  while (io >> key >> value) {
    if (key == "read_bytes:") return value;
  }
  return std::nullopt;
}

}  // namespace zarrkit::demo
