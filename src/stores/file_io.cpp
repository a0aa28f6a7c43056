#include "stores/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

namespace zarrkit::detail {

int FileIo::open(const char* path, int flags, mode_t mode) { return ::open(path, flags, mode); }
ssize_t FileIo::pread(int fd, void* buffer, std::size_t count, off_t offset) {
  return ::pread(fd, buffer, count, offset);
}
ssize_t FileIo::preadv(int fd, const struct iovec* buffers, int count, off_t offset) {
  return ::preadv(fd, buffers, count, offset);
}
ssize_t FileIo::write(int fd, const void* buffer, std::size_t count) {
  return ::write(fd, buffer, count);
}
int FileIo::fsync(int fd) { return ::fsync(fd); }
int FileIo::close(int fd) { return ::close(fd); }
int FileIo::rename(const char* from, const char* to) { return std::rename(from, to); }
int FileIo::unlink(const char* path) { return ::unlink(path); }
int FileIo::mkdir(const char* path, mode_t mode) { return ::mkdir(path, mode); }

const std::shared_ptr<FileIo>& system_file_io() {
  static const std::shared_ptr<FileIo> io = std::make_shared<FileIo>();
  return io;
}

}  // namespace zarrkit::detail
