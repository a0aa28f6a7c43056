// The system calls LocalStore makes, behind an interface so that tests can make any of them
// fail (EIO, ENOSPC), be interrupted (EINTR) or come back short. Each method behaves like
// the POSIX call of the same name: it returns -1 and sets errno on failure.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <memory>

namespace zarrkit::detail {

class FileIo {
 public:
  virtual ~FileIo() = default;
  virtual int open(const char* path, int flags, mode_t mode);
  virtual ssize_t pread(int fd, void* buffer, std::size_t count, off_t offset);
  // One contiguous range of the file into several buffers (a chunk's rows into the rows of
  // an output array): one call where pread would need one per buffer.
  virtual ssize_t preadv(int fd, const struct iovec* buffers, int count, off_t offset);
  virtual ssize_t write(int fd, const void* buffer, std::size_t count);
  virtual int fsync(int fd);
  virtual int close(int fd);
  virtual int rename(const char* from, const char* to);
  virtual int unlink(const char* path);
  virtual int mkdir(const char* path, mode_t mode);
};

// The plain system calls; shared by every LocalStore that is given no other.
const std::shared_ptr<FileIo>& system_file_io();

}  // namespace zarrkit::detail
