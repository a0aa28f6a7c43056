// LocalStore: opening the root, path checks, reads and atomic writes. Listing and bulk
// removal are in local_store_listing.cpp.
#include "zarrkit/stores/local_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <vector>

#include "core/checked_math.h"
#include "stores/file_io.h"
#include "stores/file_update_lock.h"
#include "stores/local_store_internal.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {

using detail::errno_text;
using detail::FileIo;
using detail::retry_eintr;

// A file descriptor closed on scope exit.
class FileHandle {
 public:
  FileHandle(FileIo& io, int fd) : io_(io), fd_(fd) {}
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  ~FileHandle() {
    if (fd_ >= 0) io_.close(fd_);
  }
  int fd() const { return fd_; }
  // Gives up ownership: the descriptor stays open.
  void release() { fd_ = -1; }
  // Closes now and reports the result; EINTR from close still closed the file on Linux.
  int close() {
    int result = io_.close(fd_);
    fd_ = -1;
    return (result == -1 && errno == EINTR) ? 0 : result;
  }

 private:
  FileIo& io_;
  int fd_;
};

// A temporary file that is removed unless the write that made it completed.
class TempFileGuard {
 public:
  TempFileGuard(FileIo& io, std::string path) : io_(io), path_(std::move(path)) {}
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;
  ~TempFileGuard() {
    if (!committed_) {
      int saved = errno;
      io_.unlink(path_.c_str());
      errno = saved;
    }
  }
  void commit() { committed_ = true; }

 private:
  FileIo& io_;
  std::string path_;
  bool committed_ = false;
};

std::string parent_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

}  // namespace

// ---- Opening ---------------------------------------------------------------------------

LocalStore::LocalStore(std::filesystem::path root, LocalStoreOptions options)
    : options_(std::move(options)),
      io_(options_.io ? options_.io : detail::system_file_io()) {
  if (root.empty()) fail_invalid("cannot open a local store: the root path is empty");
  // The settings ask every local store for durable writes; an option asks it of this one.
  options_.durable = options_.durable || current_config().durable_writes;
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(root, ec);
  if (ec) fail_io("cannot open the local store \"{}\": {}", root.string(), ec.message());
  root_string_ = absolute.lexically_normal().string();
  while (root_string_.size() > 1 && root_string_.back() == '/') root_string_.pop_back();
  root_ = root_string_;
  if (root_string_ == "/") root_string_.clear();  // so that root_string_ + "/key" is right

  struct stat st;
  if (::stat(root_.c_str(), &st) != 0) {
    int error = errno;
    if (error != ENOENT) fail_io("cannot open the local store \"{}\": {}", root_.string(), errno_text(error));
    if (options_.read_only || !options_.create) {
      fail_not_found("cannot open the local store \"{}\": it does not exist", root_.string());
    }
    // The directories made here, outermost first: each one's entry is durable once its
    // parent is synced.
    std::vector<std::filesystem::path> made;
    for (std::filesystem::path p = root_; !p.empty() && p != p.root_path() && !std::filesystem::exists(p, ec);
         p = p.parent_path()) {
      made.insert(made.begin(), p);
    }
    std::filesystem::create_directories(root_, ec);
    if (ec) fail_io("cannot create the local store root \"{}\": {}", root_.string(), ec.message());
    if (options_.durable) {
      for (const auto& dir : made) sync_directory(dir.parent_path().string(), dir.filename().string());
    }
  } else if (!S_ISDIR(st.st_mode)) {
    fail_invalid("cannot open the local store \"{}\": it is not a directory", root_.string());
  }
  char* resolved = ::realpath(root_.c_str(), nullptr);
  if (resolved == nullptr) {
    fail_io("cannot resolve the local store root \"{}\": {}", root_.string(), errno_text(errno));
  }
  canonical_root_ = resolved;
  std::free(resolved);

  if (!options_.read_only && options_.clean_stale_temp_files) clean_stale_temp_files();
}

std::shared_ptr<LocalStore> LocalStore::open(std::filesystem::path root, LocalStoreOptions options) {
  return std::make_shared<LocalStore>(std::move(root), std::move(options));
}

StoreCapabilities LocalStore::capabilities() const {
  return {.writable = !options_.read_only, .listable = true, .partial_reads = true};
}

std::string LocalStore::describe() const { return "file://" + root_.string(); }

std::string LocalStore::cache_identity() const {
  return "file://" + canonical_root_ + (canonical_root_.ends_with('/') ? "" : "/");
}

// ---- Paths ---------------------------------------------------------------------------

std::string LocalStore::checked_path(std::string_view relative) const {
  std::string path = root_string_;
  if (!relative.empty()) path.append("/").append(relative);
  if (path.empty()) path = "/";  // the root is "/" itself
  // lstat each existing component below the root; a symlink must resolve inside it.
  for (std::size_t end = root_string_.size() + 1; end <= path.size() && !relative.empty(); ++end) {
    if (end != path.size() && path[end] != '/') continue;
    std::string component = path.substr(0, end);
    struct stat st;
    if (::lstat(component.c_str(), &st) != 0) {
      int error = errno;
      if (error == ENOENT || error == ENOTDIR) break;  // nothing below can exist either
      fail_io("{}: cannot inspect \"{}\" for key \"{}\": {}", describe(), component, relative,
              errno_text(error));
    }
    if (!S_ISLNK(st.st_mode)) continue;
    char* resolved = ::realpath(component.c_str(), nullptr);
    if (resolved == nullptr) {
      fail_invalid("{}: refusing key \"{}\": the symlink \"{}\" cannot be resolved ({})", describe(),
                   relative, component, errno_text(errno));
    }
    std::string target = resolved;
    std::free(resolved);
    if (!detail::path_is_inside(target, canonical_root_)) {
      fail_invalid("{}: refusing key \"{}\": the symlink \"{}\" leads outside the store to \"{}\"",
                   describe(), relative, component, target);
    }
  }
  return path;
}

void LocalStore::require_writable(std::string_view operation, std::string_view key) const {
  if (options_.read_only) {
    fail_invalid("{}: cannot {} \"{}\": the store is read-only", describe(), operation, key);
  }
}

// ---- Reads ---------------------------------------------------------------------------

namespace {

bool wants_host_memory(const BufferPrototype& prototype) { return is_host_accessible(prototype.kind()); }

// Opens `path` for reading into `handle`; false when there is no such file or it is a
// directory. Returns the file size through `size`.
bool open_value(FileIo& io, const std::string& path, std::string_view key, const std::string& store,
                std::optional<FileHandle>& handle, std::uint64_t& size, int extra_flags = 0) {
  // O_NONBLOCK: opening a FIFO planted in the store must not hang.
  int fd = retry_eintr([&] { return io.open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | extra_flags, 0); });
  if (fd < 0) {
    int error = errno;
    if (error == ENOENT || error == ENOTDIR) return false;
    fail_io("{}: cannot open \"{}\" to read key \"{}\": {}", store, path, key, errno_text(error));
  }
  handle.emplace(io, fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    fail_io("{}: cannot stat \"{}\" for key \"{}\": {}", store, path, key, errno_text(errno));
  }
  if (S_ISDIR(st.st_mode)) return false;
  if (!S_ISREG(st.st_mode)) {
    fail_io("{}: key \"{}\" names \"{}\", which is not a regular file", store, key, path);
  }
  size = static_cast<std::uint64_t>(st.st_size);
  return true;
}

// Reads [begin, begin + length) of the open file into `dest`, continuing short reads; stops
// early at the end of the file. Returns the bytes read.
std::size_t read_span(FileIo& io, int fd, std::uint64_t begin, std::byte* dest, std::size_t length,
                      std::string_view key, const std::string& store) {
  std::size_t done = 0;
  while (done < length) {
    ssize_t got = retry_eintr([&] {
      return io.pread(fd, dest + done, length - done, static_cast<off_t>(begin + done));
    });
    if (got < 0) fail_io("{}: cannot read key \"{}\": {}", store, key, errno_text(errno));
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

// Values this large are read in pieces by the shared pool's threads: one thread copies from
// the page cache at a fraction of the memory bandwidth, and a read of a few large chunks
// (16 MiB chunks, a whole shard) would otherwise leave the other threads idle.
constexpr std::size_t kParallelReadPiece = std::size_t{4} << 20;

// Reads [begin, end) of the open file into memory from `prototype`. Short reads are
// continued; a file that turns out shorter than it was gives the bytes that are there.
Buffer read_bytes(FileIo& io, int fd, std::uint64_t begin, std::uint64_t end,
                  const BufferPrototype& prototype, std::string_view key, const std::string& store) {
  std::size_t length = to_size(end - begin, "value size");
  Buffer buffer = prototype.allocate(length);
  const std::size_t pieces = length / kParallelReadPiece;
  if (pieces < 2) {
    buffer.shrink(read_span(io, fd, begin, buffer.data(), length, key, store));
    return buffer;
  }
  // The last piece takes the remainder. Where the file ended early, the value is what
  // precedes the first piece that came back short.
  std::vector<std::size_t> got(pieces, 0);
  shared_thread_pool().parallel_for(pieces, [&](std::size_t i) {
    const std::size_t offset = i * kParallelReadPiece;
    const std::size_t span = i + 1 == pieces ? length - offset : kParallelReadPiece;
    got[i] = read_span(io, fd, begin + offset, buffer.data() + offset, span, key, store);
  });
  std::size_t done = 0;
  for (std::size_t i = 0; i < pieces; ++i) {
    const std::size_t span = i + 1 == pieces ? length - i * kParallelReadPiece : kParallelReadPiece;
    done += got[i];
    if (got[i] < span) break;
  }
  buffer.shrink(done);
  return buffer;
}

// A value's file kept open and read with pread (LocalStore::open_reader).
class FileSource final : public ByteSource {
 public:
  FileSource(std::shared_ptr<FileIo> io, std::string key, std::string store)
      : io_(std::move(io)), key_(std::move(key)), store_(std::move(store)) {}

  // False when the value is absent.
  bool open(const std::string& path) { return open_value(*io_, path, key_, store_, handle_, size_); }

  std::uint64_t size() const override { return size_; }

  std::size_t read(std::uint64_t offset, MutableByteView dest) override {
    std::size_t done = 0;
    while (done < dest.size()) {
      ssize_t got = retry_eintr([&] {
        return io_->pread(handle_->fd(), dest.data() + done, dest.size() - done, static_cast<off_t>(offset + done));
      });
      if (got < 0) fail_io("{}: cannot read key \"{}\": {}", store_, key_, errno_text(errno));
      if (got == 0) break;  // the file is shorter than it was
      done += static_cast<std::size_t>(got);
    }
    return done;
  }

 private:
  std::shared_ptr<FileIo> io_;  // before handle_: the handle closes through it
  std::string key_;
  std::string store_;
  std::optional<FileHandle> handle_;
  std::uint64_t size_ = 0;
};

}  // namespace

std::unique_ptr<ByteSource> LocalStore::open_reader(std::string_view key) {
  validate_key(key);
  auto source = std::make_unique<FileSource>(io_, std::string(key), describe());
  if (!source->open(checked_path(key))) return nullptr;
  return source;
}

std::optional<Buffer> LocalStore::get(std::string_view key, const BufferPrototype& prototype,
                                      std::optional<ByteRange> range) {
  const ByteRange whole = ByteRange::from_offset(0);
  auto parts = get_ranges(key, std::span(range ? &*range : &whole, 1), prototype);
  if (!parts) return std::nullopt;
  return std::move(parts->front());
}

std::optional<std::vector<Buffer>> LocalStore::get_ranges(std::string_view key,
                                                          std::span<const ByteRange> ranges,
                                                          const BufferPrototype& prototype) {
  validate_key(key);
  if (!wants_host_memory(prototype)) {
    fail_unsupported("{}: cannot read key \"{}\" into {} memory; read into host memory and copy",
                     describe(), key, memory_kind_name(prototype.kind()));
  }
  std::string path = checked_path(key);
  std::optional<FileHandle> handle;
  std::uint64_t size = 0;
  if (!open_value(*io_, path, key, describe(), handle, size)) return std::nullopt;
  std::vector<Buffer> parts;
  parts.reserve(ranges.size());
  for (const ByteRange& range : ranges) {
    auto [begin, end] = range.resolve(size);
    parts.push_back(read_bytes(*io_, handle->fd(), begin, end, prototype, key, describe()));
  }
  return parts;
}

std::optional<std::uint64_t> LocalStore::read_into(std::string_view key, std::span<const ByteRange> ranges,
                                                   std::span<const MutableByteView> dests) {
  validate_key(key);
  if (ranges.size() != dests.size()) {
    fail_invalid("read_into: {} ranges but {} destinations", ranges.size(), dests.size());
  }
  std::string path = checked_path(key);
  std::optional<FileHandle> handle;
  std::uint64_t size = 0;
  if (!open_value(*io_, path, key, describe(), handle, size)) return std::nullopt;
  std::vector<std::pair<std::uint64_t, std::size_t>> spans(ranges.size());  // begin, length
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto [begin, end] = ranges[i].resolve(size);
    spans[i] = {begin, to_size(end - begin, "range size")};
    if (spans[i].second > dests[i].size()) {
      fail_invalid("read_into: range {} has {} bytes, its destination {}", i, spans[i].second, dests[i].size());
    }
  }
  // Reads range i from byte `from` on with pread, continuing short reads. Returns the end
  // of what was read when the file ends early (it shrank since it was opened).
  auto read_range = [&](std::size_t i, std::size_t from) -> std::optional<std::uint64_t> {
    // Plain variables, not a structured binding: clang before 16 cannot capture one in the
    // lambda below (the fuzz preset builds with Debian's clang).
    const std::uint64_t begin = spans[i].first;
    const std::size_t length = spans[i].second;
    for (std::size_t done = from; done < length;) {
      ssize_t got = retry_eintr([&] {
        return io_->pread(handle->fd(), dests[i].data() + done, length - done, static_cast<off_t>(begin + done));
      });
      if (got < 0) fail_io("{}: cannot read key \"{}\": {}", describe(), key, errno_text(errno));
      if (got == 0) return begin + done;
      done += static_cast<std::size_t>(got);
    }
    return std::nullopt;
  };
  std::vector<struct iovec> iov;
  for (std::size_t i = 0; i < spans.size();) {
    // Ranges that follow one another in the file go in one preadv call.
    std::size_t j = i + 1;
    std::size_t total = spans[i].second;
    while (j < spans.size() && j - i < static_cast<std::size_t>(IOV_MAX) &&
           spans[j].first == spans[j - 1].first + spans[j - 1].second) {
      total += spans[j].second;
      ++j;
    }
    std::size_t skip = 0;  // bytes of ranges i..j-1 already read
    if (j - i > 1) {
      iov.clear();
      for (std::size_t k = i; k < j; ++k) iov.push_back({dests[k].data(), spans[k].second});
      ssize_t got = retry_eintr([&] {
        return io_->preadv(handle->fd(), iov.data(), static_cast<int>(iov.size()), static_cast<off_t>(spans[i].first));
      });
      if (got < 0) fail_io("{}: cannot read key \"{}\": {}", describe(), key, errno_text(errno));
      skip = static_cast<std::size_t>(got);
    }
    if (skip < total) {  // one range at a time from where preadv stopped
      for (std::size_t k = i; k < j; ++k) {
        const std::size_t from = std::min(skip, spans[k].second);
        skip -= from;
        if (auto end = read_range(k, from)) return end;
      }
    }
    i = j;
  }
  return size;
}

LocalFile::LocalFile(std::shared_ptr<detail::FileIo> io, int fd, std::uint64_t size)
    : io_(std::move(io)), fd_(fd), size_(size) {}

LocalFile::LocalFile(LocalFile&& other) noexcept : io_(other.io_), fd_(other.fd_), size_(other.size_) {
  other.fd_ = -1;
}

LocalFile::~LocalFile() {
  if (fd_ >= 0) io_->close(fd_);
}

std::optional<LocalFile> LocalStore::open_file(std::string_view key, int extra_flags) const {
  validate_key(key);
  std::string path = checked_path(key);
  std::optional<FileHandle> handle;
  std::uint64_t size = 0;
  if (!open_value(*io_, path, key, describe(), handle, size, extra_flags)) return std::nullopt;
  LocalFile file(io_, handle->fd(), size);
  handle->release();
  return file;
}

std::optional<std::uint64_t> LocalStore::size(std::string_view key) {
  validate_key(key);
  std::string path = checked_path(key);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    int error = errno;
    if (error == ENOENT || error == ENOTDIR) return std::nullopt;
    fail_io("{}: cannot stat \"{}\" for key \"{}\": {}", describe(), path, key, errno_text(error));
  }
  if (S_ISDIR(st.st_mode)) return std::nullopt;
  if (!S_ISREG(st.st_mode)) {
    fail_io("{}: key \"{}\" names \"{}\", which is not a regular file", describe(), key, path);
  }
  return static_cast<std::uint64_t>(st.st_size);
}

bool LocalStore::exists(std::string_view key) { return size(key).has_value(); }

// ---- Writes --------------------------------------------------------------------------

void LocalStore::set(std::string_view key, ByteView value) {
  validate_key(key);
  require_writable("write", key);
  const WriteScope written(*this, key);
  const std::string path = checked_path(key);
  const std::string directory = parent_of(path);
  const std::string name = path.substr(directory.size() + 1);

  std::string temp;
  int fd = -1;
  bool made_directories = false;
  for (int attempt = 0; fd < 0; ++attempt) {
    temp = directory + '/' + detail::temp_name_for(name);
    fd = retry_eintr([&] { return io_->open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666); });
    if (fd >= 0) break;
    int error = errno;
    if (error == ENOENT && !made_directories) {
      std::string_view relative_directory = key.substr(0, key.rfind('/') == std::string_view::npos ? 0 : key.rfind('/'));
      make_parent_directories(relative_directory);
      made_directories = true;
      continue;
    }
    if (error == EEXIST && attempt < 8) continue;  // a random name collided: draw another
    fail_io("{}: cannot write key \"{}\": cannot create the temporary file \"{}\": {}", describe(), key,
            temp, errno_text(error));
  }
  TempFileGuard guard(*io_, temp);
  FileHandle handle(*io_, fd);

  std::size_t done = 0;
  while (done < value.size()) {
    ssize_t wrote = retry_eintr([&] { return io_->write(fd, value.data() + done, value.size() - done); });
    if (wrote < 0) {
      fail_io("{}: cannot write key \"{}\" ({} bytes): {}", describe(), key, value.size(), errno_text(errno));
    }
    if (wrote == 0) fail_io("{}: cannot write key \"{}\": the file system accepted no bytes", describe(), key);
    done += static_cast<std::size_t>(wrote);
  }
  // A failed fsync may have dropped the dirty pages: report it, never retry it (only an
  // interruption, which reports nothing about the data, is retried).
  if (options_.durable && retry_eintr([&] { return io_->fsync(fd); }) != 0) {
    fail_io("{}: cannot write key \"{}\": fsync failed: {}", describe(), key, errno_text(errno));
  }
  if (handle.close() != 0) {
    fail_io("{}: cannot write key \"{}\": closing the file failed: {}", describe(), key, errno_text(errno));
  }
  if (retry_eintr([&] { return io_->rename(temp.c_str(), path.c_str()); }) != 0) {
    fail_io("{}: cannot write key \"{}\": renaming the temporary file into place failed: {}", describe(),
            key, errno_text(errno));
  }
  guard.commit();
  if (options_.durable) sync_directory(directory, key);
}

void LocalStore::make_parent_directories(std::string_view relative_dir) {
  std::string path = root_string_;
  std::size_t begin = 0;
  while (begin < relative_dir.size()) {
    std::size_t end = relative_dir.find('/', begin);
    if (end == std::string_view::npos) end = relative_dir.size();
    path.append("/").append(relative_dir.substr(begin, end - begin));
    begin = end + 1;
    if (retry_eintr([&] { return io_->mkdir(path.c_str(), 0777); }) == 0) {
      // A new directory entry is durable only once its parent directory is synced.
      if (options_.durable) sync_directory(parent_of(path), relative_dir);
      continue;
    }
    int error = errno;
    if (error == EEXIST) continue;  // an existing non-directory fails at the next step
    fail_io("{}: cannot create the directory \"{}\": {}", describe(), path, errno_text(error));
  }
}

void LocalStore::sync_directory(const std::string& path, std::string_view key) {
  const std::string& directory = path.empty() ? std::string("/") : path;
  int fd = retry_eintr([&] { return io_->open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0); });
  if (fd < 0) {
    fail_io("{}: cannot sync the directory \"{}\" after writing \"{}\": {}", describe(), directory, key,
            errno_text(errno));
  }
  FileHandle handle(*io_, fd);
  if (retry_eintr([&] { return io_->fsync(fd); }) != 0) {
    fail_io("{}: \"{}\" is in place but its directory \"{}\" could not be synced: {}", describe(), key,
            directory, errno_text(errno));
  }
}

void LocalStore::erase(std::string_view key) {
  validate_key(key);
  require_writable("erase", key);
  const WriteScope erased(*this, key);
  const std::string path = checked_path(key);
  if (retry_eintr([&] { return io_->unlink(path.c_str()); }) != 0) {
    int error = errno;
    if (error == ENOENT || error == ENOTDIR || error == EISDIR) return;  // no such value
    struct stat st;
    if (error == EPERM && ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return;
    fail_io("{}: cannot erase key \"{}\": {}", describe(), key, errno_text(error));
  }
  if (options_.durable) sync_directory(parent_of(path), key);
}

std::unique_ptr<UpdateLock> LocalStore::lock_for_update(std::string_view key) {
  validate_key(key);
  if (options_.read_only) return nullptr;
  return lock_file_update(canonical_root_, key);
}

}  // namespace zarrkit
