#include "zarrkit/stores/zip_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <optional>
#include <utility>

#include "stores/local_store_internal.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"

namespace zarrkit {

// Owns an archive opened read-only; zarrkit never modifies an archive in place (flush writes
// a new one), so this handle only reads.
struct ZipStore::Archive {
  zip_t* handle = nullptr;
  ~Archive() {
    if (handle != nullptr) zip_discard(handle);
  }
};

namespace {

namespace fs = std::filesystem;

// How libzip's error codes map to zarrkit's typed errors.
[[noreturn]] void fail_zip(int zip_code, int system_code, const std::string& what) {
  zip_error_t error;
  zip_error_init_with_code(&error, zip_code);
  std::string reason = zip_error_strerror(&error);
  const bool has_system_reason = zip_error_system_type(&error) == ZIP_ET_SYS;
  zip_error_fini(&error);
  if (has_system_reason && system_code != 0 && reason.find(':') == std::string::npos) {
    reason += fmt::format(": {}", std::generic_category().message(system_code));
  }
  switch (zip_code) {
    case ZIP_ER_NOENT:
      fail_not_found("{}: {}", what, reason);
    case ZIP_ER_MEMORY:
      fail_resource("{}: {}", what, reason);
    case ZIP_ER_COMPNOTSUPP:
    case ZIP_ER_ENCRNOTSUPP:
    case ZIP_ER_NOPASSWD:
    case ZIP_ER_WRONGPASSWD:
    case ZIP_ER_MULTIDISK:
      fail_unsupported("{}: {}", what, reason);
    case ZIP_ER_OPEN:
    case ZIP_ER_READ:
    case ZIP_ER_WRITE:
    case ZIP_ER_SEEK:
    case ZIP_ER_TELL:
    case ZIP_ER_CLOSE:
    case ZIP_ER_RENAME:
    case ZIP_ER_REMOVE:
    case ZIP_ER_TMPOPEN:
      fail_io("{}: {}", what, reason);
    default:  // NOZIP, INCONS, CRC, ZLIB, EOF, COMPRESSED_DATA, ...: the bytes are wrong
      fail_data_loss("{}: {}", what, reason);
  }
}

[[noreturn]] void fail_zip(zip_error_t* error, const std::string& what) {
  fail_zip(zip_error_code_zip(error), zip_error_code_system(error), what);
}

// A source for libzip that reads one value from the spill file (pread, so sources share
// the descriptor). libzip calls it while it writes the new archive in flush().
struct SpillSource {
  int fd;
  std::uint64_t offset;
  std::uint64_t size;
  std::time_t mtime;
  std::uint64_t position = 0;
  zip_error_t error{};
};

zip_int64_t spill_source_callback(void* state, void* data, zip_uint64_t length, zip_source_cmd_t command) {
  auto* source = static_cast<SpillSource*>(state);
  switch (command) {
    case ZIP_SOURCE_OPEN:
      source->position = 0;
      return 0;
    case ZIP_SOURCE_READ: {
      const std::uint64_t wanted = std::min<std::uint64_t>(length, source->size - source->position);
      std::uint64_t done = 0;
      while (done < wanted) {
        ssize_t n = ::pread(source->fd, static_cast<char*>(data) + done, wanted - done,
                            static_cast<off_t>(source->offset + source->position + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          zip_error_set(&source->error, ZIP_ER_READ, n < 0 ? errno : EIO);
          return -1;
        }
        done += static_cast<std::uint64_t>(n);
      }
      source->position += done;
      return static_cast<zip_int64_t>(done);
    }
    case ZIP_SOURCE_CLOSE:
      return 0;
    case ZIP_SOURCE_STAT: {
      zip_stat_t* stat = ZIP_SOURCE_GET_ARGS(zip_stat_t, data, length, &source->error);
      if (stat == nullptr) return -1;
      zip_stat_init(stat);
      stat->valid = ZIP_STAT_SIZE | ZIP_STAT_MTIME;
      stat->size = source->size;
      stat->mtime = source->mtime;
      return sizeof(zip_stat_t);
    }
    case ZIP_SOURCE_ERROR:
      return zip_error_to_data(&source->error, data, length);
    case ZIP_SOURCE_FREE:
      zip_error_fini(&source->error);
      delete source;
      return 0;
    case ZIP_SOURCE_SUPPORTS:
      return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
                                            ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, -1);
    default:
      zip_error_set(&source->error, ZIP_ER_OPNOTSUPP, 0);
      return -1;
  }
}

// An open member of the archive, closed when it goes out of scope.
class MemberReader {
 public:
  MemberReader(zip_t* archive, std::uint64_t index, const std::string& what) : what_(what) {
    file_ = zip_fopen_index(archive, index, 0);
    if (file_ == nullptr) fail_zip(zip_get_error(archive), what_);
  }
  ~MemberReader() { zip_fclose(file_); }
  MemberReader(const MemberReader&) = delete;
  MemberReader& operator=(const MemberReader&) = delete;

  // Reads up to `length` bytes; fewer only at the end of the member.
  std::uint64_t read(std::byte* out, std::uint64_t length) {
    std::uint64_t done = 0;
    while (done < length) {
      zip_int64_t n = zip_fread(file_, out + done, length - done);
      if (n < 0) fail_zip(zip_file_get_error(file_), what_);
      if (n == 0) break;
      done += static_cast<std::uint64_t>(n);
    }
    return done;
  }
  void seek(std::uint64_t offset) {
    if (zip_fseek(file_, static_cast<zip_int64_t>(offset), SEEK_SET) != 0) {
      fail_zip(zip_file_get_error(file_), what_);
    }
  }

 private:
  std::string what_;
  zip_file_t* file_ = nullptr;
};

// The keys of `entries` below the directory `dir` (normalized; "" is the root).
template <typename Map>
auto range_under(Map& entries, std::string_view dir) {
  if (dir.empty()) return std::pair(entries.begin(), entries.end());
  // Every key below "dir/" sorts between "dir/" and "dir0" ('0' follows '/').
  std::string low = std::string(dir) + '/';
  std::string high = std::string(dir) + static_cast<char>('/' + 1);
  return std::pair(entries.lower_bound(low), entries.lower_bound(high));
}

std::unique_ptr<ZipStore::Archive> open_archive(const fs::path& path, const std::string& what) {
  int code = 0;
  // No ZIP_CHECKCONS: it refuses duplicate names, which zarr-python writes when it
  // overwrites a key (the last one wins, see load_members).
  zip_t* handle = zip_open(path.c_str(), ZIP_RDONLY, &code);
  if (handle == nullptr) fail_zip(code, code == ZIP_ER_OPEN || code == ZIP_ER_READ ? errno : 0, what);
  auto archive = std::make_unique<ZipStore::Archive>();
  archive->handle = handle;
  return archive;
}

// fsync of the file or directory at `path` (opened with `flags`); IoError with `what`.
void sync_path(const fs::path& path, int flags, const std::string& what) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) fail_io("{}: {}", what, std::generic_category().message(errno));
  const int result = detail::retry_eintr([&] { return ::fsync(fd); });
  const int error = errno;
  ::close(fd);
  if (result != 0) fail_io("{}: {}", what, std::generic_category().message(error));
}

// Removes the new archive's temporary unless it was renamed into place.
struct TempArchiveGuard {
  fs::path path;
  bool committed = false;
  ~TempArchiveGuard() {
    if (!committed) ::unlink(path.c_str());
  }
};

}  // namespace

std::shared_ptr<ZipStore> ZipStore::open(fs::path path, ZipStoreOptions options) {
  return std::make_shared<ZipStore>(std::move(path), std::move(options));
}

ZipStore::ZipStore(fs::path path, ZipStoreOptions options)
    : options_(std::move(options)), uncaught_at_open_(std::uncaught_exceptions()) {
  if (options_.max_member_bytes == 0) options_.max_member_bytes = current_config().max_chunk_bytes;
  options_.durable = options_.durable || current_config().durable_writes;
  std::error_code ec;
  path_ = fs::absolute(path, ec).lexically_normal();
  if (ec) fail_io("cannot open the zip store \"{}\": {}", path.string(), ec.message());
  if (!options_.read_only) remove_stale_temp_archives();
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) {
    const int error = errno;
    if (error != ENOENT) fail_io("cannot open the zip store {}: {}", describe(), std::generic_category().message(error));
    if (options_.read_only) fail_not_found("cannot open the zip store {}: no such file", describe());
    return;  // created at the first flush
  }
  if (S_ISDIR(st.st_mode)) fail_invalid("cannot open the zip store {}: it is a directory", describe());
  if (!options_.read_only && options_.truncate) {
    dirty_ = true;  // the next flush replaces the old archive, even with nothing written
    return;
  }
  archive_ = open_archive(path_, fmt::format("cannot open the zip store {}", describe()));
  load_members();
}

namespace {

// An flock on the directory that holds an archive. Every writer holds it shared from before
// libzip makes its temporary archive until after the rename; the clean-up of stale temporaries
// takes it exclusively without waiting, and so knows that no writer on this host is writing
// an archive in that directory now: every unfinished temporary there is a killed writer's.
class ArchiveDirectoryLock {
 public:
  // Shared, waiting for a clean-up that holds it (a moment). Without the lock (a directory
  // that cannot be opened) the writer goes on: only the clean-up's certainty depends on it.
  static ArchiveDirectoryLock for_writing(const fs::path& directory) {
    ArchiveDirectoryLock lock(directory);
    if (lock.fd_ >= 0) {
      while (::flock(lock.fd_, LOCK_SH) != 0 && errno == EINTR) {
      }
    }
    return lock;
  }
  // Exclusive, at once or never: true when held.
  static bool try_for_cleaning(const fs::path& directory, std::optional<ArchiveDirectoryLock>& lock) {
    lock.emplace(ArchiveDirectoryLock(directory));
    return lock->fd_ >= 0 && ::flock(lock->fd_, LOCK_EX | LOCK_NB) == 0;
  }
  ArchiveDirectoryLock(ArchiveDirectoryLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  ArchiveDirectoryLock& operator=(ArchiveDirectoryLock&&) = delete;
  ~ArchiveDirectoryLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }

 private:
  explicit ArchiveDirectoryLock(const fs::path& directory)
      : fd_(::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {}
  int fd_ = -1;
};

// True for what a killed libzip writer leaves: the start of an archive (a local file
// header first) without its end (no end-of-central-directory record, written last, just
// before the rename). A complete archive under such a name (someone's copy) is kept.
bool is_unfinished_archive(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  std::string head(4, '\0');
  const ssize_t head_size = ::pread(fd, head.data(), head.size(), 0);
  if (head_size >= 0 && head_size < 4) {  // killed before its first member was written
    ::close(fd);
    return true;
  }
  bool unfinished = head_size == 4 && head == std::string("PK\x03\x04", 4);
  if (unfinished) {
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      unfinished = false;
    } else {
      // The record is 22 bytes plus a comment of at most 65535.
      const off_t tail_size = std::min<off_t>(st.st_size, 22 + 65535);
      std::string tail(static_cast<std::size_t>(tail_size), '\0');
      if (::pread(fd, tail.data(), tail.size(), st.st_size - tail_size) != tail_size) {
        unfinished = false;
      } else {
        unfinished = tail.find(std::string("PK\x05\x06", 4)) == std::string::npos;
      }
    }
  }
  ::close(fd);
  return unfinished;
}

}  // namespace

// zarrkit writes a new archive under a temporary name beside it that carries the writer's
// process id (flush_locked), through libzip, which writes to a temporary of that name plus a dot
// and six random letters or digits (mkstemp) and renames it in zip_close; a writer killed before
// its renames leaves one or the other behind, removed here once its process is gone. Writers of
// older versions left only libzip's temporary of the archive's own name (the archive's name, a
// dot and six letters or digits). While no writer on this host
// writes an archive in the directory (ArchiveDirectoryLock), every unfinished one is stale at
// once; otherwise only those older than stale_temp_seconds (a writer on another host).
std::size_t ZipStore::remove_stale_temp_archives() {
  const std::string prefix = path_.filename().string() + ".";
  std::optional<ArchiveDirectoryLock> lock;
  const bool no_live_writer = ArchiveDirectoryLock::try_for_cleaning(path_.parent_path(), lock);
  std::error_code ec;
  std::size_t removed = 0;
  const auto now = fs::file_time_type::clock::now();
  // Those of zarrkit's writers (and libzip's temporaries of those) carry the writer's process id.
  const std::string own_prefix =
      "." + path_.filename().string().substr(0, detail::kTempNameMaxStem) + std::string(detail::kTempMarker);
  for (const auto& entry : fs::directory_iterator(path_.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(own_prefix)) {
      std::error_code item_ec;
      if (detail::temp_writer_is_gone(name) && entry.is_regular_file(item_ec) && !entry.is_symlink(item_ec) &&
          fs::remove(entry.path(), item_ec)) {
        ++removed;
      }
      continue;
    }
    if (name.size() != prefix.size() + 6 || name.compare(0, prefix.size(), prefix) != 0) continue;
    if (!std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                     [](unsigned char c) { return std::isalnum(c) != 0; })) {
      continue;
    }
    std::error_code item_ec;
    if (!entry.is_regular_file(item_ec) || entry.is_symlink(item_ec)) continue;
    const auto modified = entry.last_write_time(item_ec);
    if (item_ec) continue;
    const double age = std::chrono::duration<double>(now - modified).count();
    if ((!no_live_writer && age < options_.stale_temp_seconds) || !is_unfinished_archive(entry.path())) continue;
    if (fs::remove(entry.path(), item_ec)) ++removed;
  }
  return removed;
}

ZipStore::~ZipStore() {
  if (!closed_ && dirty_ && !options_.read_only) {
    if (std::uncaught_exceptions() > uncaught_at_open_) {
      // Unwinding: the work that wrote these values failed, so they are not committed.
    } else {
      try {
        std::lock_guard lock(mutex_);
        flush_locked();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "zarrkit: error: writing the zip store %s failed: %s\n", describe().c_str(), e.what());
      }
    }
  }
  archive_.reset();
  if (spill_fd_ >= 0) ::close(spill_fd_);
}

void ZipStore::load_members() {
  entries_.clear();
  zip_t* handle = archive_->handle;
  const zip_int64_t count = zip_get_num_entries(handle, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const auto index = static_cast<std::uint64_t>(i);
    zip_stat_t st;
    if (zip_stat_index(handle, index, 0, &st) != 0) {
      fail_zip(zip_get_error(handle), fmt::format("zip store {}: member {}", describe(), index));
    }
    if ((st.valid & ZIP_STAT_NAME) == 0 || (st.valid & ZIP_STAT_SIZE) == 0) {
      fail_data_loss("zip store {}: member {} has no name or size", describe(), index);
    }
    std::string_view name = st.name;
    // Directory entries (written by zip tools, never by zarr-python for Zarr keys).
    const bool directory = name.ends_with('/');
    if (directory) name.remove_suffix(1);
    try {
      if (directory && name.empty()) continue;
      validate_key(name);
    } catch (const InvalidArgumentError& e) {
      fail_data_loss("zip store {}: the member name \"{}\" is not a safe key: {}", describe(), st.name, e.what());
    }
    if (directory) continue;
    // The last member of a name wins, as in Python's zipfile.
    entries_.insert_or_assign(std::string(name), Entry{false, index, 0, st.size});
  }
}

void ZipStore::require_open() const {
  if (closed_) fail_invalid("zip store {} is closed", describe());
}

void ZipStore::require_writable(std::string_view operation, std::string_view key) const {
  require_open();
  if (options_.read_only) {
    fail_unsupported("cannot {} \"{}\": the zip store {} is read-only", operation, key, describe());
  }
}

StoreCapabilities ZipStore::capabilities() const {
  return {.writable = !options_.read_only, .listable = true, .partial_reads = true};
}

std::string ZipStore::describe() const { return fmt::format("zip://{}", path_.string()); }

Buffer ZipStore::read_entry(std::string_view key, const Entry& entry, std::uint64_t begin, std::uint64_t end,
                            const BufferPrototype& prototype) {
  const std::string what = fmt::format("zip store {}: reading \"{}\"", describe(), key);
  if (end - begin > options_.max_member_bytes) {
    fail_resource("{}: {} bytes asked for (the member declares {}), more than the limit of {} (max_member_bytes; "
                  "by default the max_chunk_bytes setting, ZARRKIT_MAX_CHUNK_BYTES)",
                  what, end - begin, entry.size, options_.max_member_bytes);
  }
  Buffer out = prototype.allocate(static_cast<std::size_t>(end - begin));
  if (entry.pending) {
    std::uint64_t done = 0;
    while (done < end - begin) {
      ssize_t n = ::pread(spill_fd_, out.data() + done, end - begin - done,
                          static_cast<off_t>(entry.offset + begin + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail_io("{}: the spill file: {}", what, std::generic_category().message(n < 0 ? errno : EIO));
      done += static_cast<std::uint64_t>(n);
    }
    return out;
  }

  zip_t* handle = archive_->handle;
  zip_stat_t st;
  if (zip_stat_index(handle, entry.index, 0, &st) != 0) fail_zip(zip_get_error(handle), what);
  const bool stored = (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE;
  if (stored && (st.valid & ZIP_STAT_COMP_SIZE) && st.comp_size != st.size) {
    fail_data_loss("{}: a stored member of {} bytes declares {} compressed bytes", what, st.size, st.comp_size);
  }
  MemberReader reader(handle, entry.index, what);
  if (begin > 0) {
    if (stored) {
      reader.seek(begin);  // reads only the bytes asked for
    } else {
      // Compressed data cannot be entered in the middle: decompress up to the range.
      std::vector<std::byte> scratch(std::min<std::uint64_t>(begin, 1 << 16));
      for (std::uint64_t skipped = 0; skipped < begin;) {
        std::uint64_t step = std::min<std::uint64_t>(scratch.size(), begin - skipped);
        if (reader.read(scratch.data(), step) != step) {
          fail_data_loss("{}: the member ends before its declared size of {} bytes", what, entry.size);
        }
        skipped += step;
      }
    }
  }
  if (reader.read(out.data(), end - begin) != end - begin) {
    fail_data_loss("{}: the member ends before its declared size of {} bytes", what, entry.size);
  }
  if (end == entry.size) {
    // At the declared end: one more read must find nothing (more would be a size lie, as
    // in a zip bomb), and reaching the end makes libzip check the CRC-32 of a whole read.
    std::byte extra;
    if (reader.read(&extra, 1) != 0) {
      fail_data_loss("{}: the member holds more than its declared size of {} bytes", what, entry.size);
    }
  }
  return out;
}

std::optional<Buffer> ZipStore::get(std::string_view key, const BufferPrototype& prototype,
                                    std::optional<ByteRange> range) {
  const ByteRange whole = ByteRange::from_offset(0);
  auto parts = get_ranges(key, std::span(range ? &*range : &whole, 1), prototype);
  if (!parts) return std::nullopt;
  return std::move(parts->front());
}

std::optional<std::vector<Buffer>> ZipStore::get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                        const BufferPrototype& prototype) {
  validate_key(key);
  if (!is_host_accessible(prototype.kind())) {
    fail_unsupported("{}: cannot read \"{}\" into {} memory; read into host memory and copy", describe(), key,
                     memory_kind_name(prototype.kind()));
  }
  std::lock_guard lock(mutex_);
  require_open();
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  std::vector<Buffer> parts;
  parts.reserve(ranges.size());
  for (const ByteRange& range : ranges) {
    auto [begin, end] = range.resolve(it->second.size);
    parts.push_back(read_entry(key, it->second, begin, end, prototype));
  }
  return parts;
}

bool ZipStore::exists(std::string_view key) {
  validate_key(key);
  std::lock_guard lock(mutex_);
  require_open();
  return entries_.find(key) != entries_.end();
}

std::optional<std::uint64_t> ZipStore::size(std::string_view key) {
  validate_key(key);
  std::lock_guard lock(mutex_);
  require_open();
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second.size;
}

int ZipStore::spill_fd() {
  if (spill_fd_ >= 0) return spill_fd_;
  // Beside the archive, so that a large write does not fill another file system; unnamed
  // (O_TMPFILE), so that nothing is left behind by a crash.
  const fs::path directory = path_.parent_path();
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) fail_io("zip store {}: cannot create {}: {}", describe(), directory.string(), ec.message());
  int fd = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {  // file systems without O_TMPFILE: a named file, unlinked at once
    std::string pattern = (directory / ".zarrkit-zip-spill.XXXXXX").string();
    fd = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(pattern.c_str());
  }
  if (fd < 0) {
    fail_io("zip store {}: cannot create a spill file in {}: {}", describe(), directory.string(),
            std::generic_category().message(errno));
  }
  spill_fd_ = fd;
  spill_size_ = 0;
  return spill_fd_;
}

void ZipStore::set(std::string_view key, ByteView value) {
  validate_key(key);
  const WriteScope written(*this, key);
  std::lock_guard lock(mutex_);
  require_writable("write", key);
  const int fd = spill_fd();
  std::uint64_t done = 0;
  while (done < value.size()) {
    ssize_t n = ::pwrite(fd, value.data() + done, value.size() - done, static_cast<off_t>(spill_size_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      fail_io("zip store {}: writing \"{}\" to the spill file: {}", describe(), key,
              std::generic_category().message(n < 0 ? errno : EIO));
    }
    done += static_cast<std::uint64_t>(n);
  }
  entries_.insert_or_assign(std::string(key), Entry{true, 0, spill_size_, value.size()});
  spill_size_ += value.size();
  dirty_ = true;
}

void ZipStore::erase(std::string_view key) {
  validate_key(key);
  const WriteScope erased(*this, key);
  std::lock_guard lock(mutex_);
  require_writable("erase", key);
  if (auto it = entries_.find(key); it != entries_.end()) {
    entries_.erase(it);
    dirty_ = true;
  }
}

void ZipStore::erase_prefix(std::string_view prefix) {
  std::string_view dir = normalize_prefix(prefix);
  const WriteScope erased(*this, dir, /*below=*/true);
  std::lock_guard lock(mutex_);
  require_writable("erase", prefix);
  auto [first, last] = range_under(entries_, dir);
  if (first != last) dirty_ = true;
  entries_.erase(first, last);
}

std::vector<std::string> ZipStore::list(std::string_view prefix) {
  std::string_view dir = normalize_prefix(prefix);
  std::lock_guard lock(mutex_);
  require_open();
  std::vector<std::string> keys;
  auto [first, last] = range_under(entries_, dir);
  for (auto it = first; it != last; ++it) keys.push_back(it->first);
  return keys;
}

void ZipStore::flush() {
  std::lock_guard lock(mutex_);
  require_open();
  flush_locked();
}

void ZipStore::close() {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  if (!options_.read_only) flush_locked();
  archive_.reset();
  if (spill_fd_ >= 0) ::close(spill_fd_);
  spill_fd_ = -1;
  entries_.clear();
  closed_ = true;
}

void ZipStore::flush_locked() {
  if (!dirty_ || options_.read_only) return;
  const std::string what = fmt::format("zip store {}: writing the archive", describe());
  std::error_code ec;
  if (entries_.empty()) {
    // libzip writes no archive without members; the old one must not stay either.
    if (::unlink(path_.c_str()) != 0 && errno != ENOENT) {
      fail_io("{}: removing the emptied archive: {}", what, std::generic_category().message(errno));
    }
  } else {
    fs::create_directories(path_.parent_path(), ec);
    if (ec) fail_io("{}: creating {}: {}", what, path_.parent_path().string(), ec.message());
    const ArchiveDirectoryLock writing = ArchiveDirectoryLock::for_writing(path_.parent_path());
    // The new archive goes to a temporary name beside the old one that carries this process's
    // id (libzip writes it through a temporary of its own, renamed to that name in zip_close),
    // and is then renamed over the old archive; with durable writes it is synced before that
    // rename and the directory after. The old archive stays readable through archive_ (its
    // descriptor outlives the rename), and the kept members are copied from it.
    const fs::path temp = path_.parent_path() / detail::temp_name_for(path_.filename().string());
    TempArchiveGuard guard{temp};
    int code = 0;
    zip_t* out = zip_open(temp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
    if (out == nullptr) fail_zip(code, errno, what);
    const std::time_t now = std::time(nullptr);
    try {
      for (const auto& [key, entry] : entries_) {
        zip_source_t* source = nullptr;
        if (entry.pending) {
          auto* state = new SpillSource{spill_fd_, entry.offset, entry.size, now};
          zip_error_init(&state->error);
          source = zip_source_function(out, spill_source_callback, state);
          if (source == nullptr) {
            zip_error_fini(&state->error);
            delete state;
          }
        } else {
          // start 0 and length -1: the member's compressed bytes, copied as they are.
          source = zip_source_zip(out, archive_->handle, entry.index, 0, 0, -1);
        }
        if (source == nullptr) fail_zip(zip_get_error(out), fmt::format("{}: member \"{}\"", what, key));
        const zip_int64_t index = zip_file_add(out, key.c_str(), source, ZIP_FL_ENC_UTF_8);
        if (index < 0) {
          zip_source_free(source);
          fail_zip(zip_get_error(out), fmt::format("{}: member \"{}\"", what, key));
        }
        if (entry.pending) {
          const zip_int32_t method = options_.deflate_new_members ? ZIP_CM_DEFLATE : ZIP_CM_STORE;
          if (zip_set_file_compression(out, static_cast<zip_uint64_t>(index), method, 0) != 0) {
            fail_zip(zip_get_error(out), fmt::format("{}: member \"{}\"", what, key));
          }
        }
      }
      if (zip_close(out) != 0) fail_zip(zip_get_error(out), what);
    } catch (...) {
      zip_discard(out);
      throw;
    }
    // A failed sync may have dropped what it was to write: reported, never retried.
    if (options_.durable) sync_path(temp, O_RDONLY, fmt::format("{}: syncing the new archive", what));
    if (detail::retry_eintr([&] { return ::rename(temp.c_str(), path_.c_str()); }) != 0) {
      fail_io("{}: renaming the new archive into place: {}", what, std::generic_category().message(errno));
    }
    guard.committed = true;
    if (options_.durable) {
      const fs::path directory = path_.parent_path().empty() ? fs::path(".") : path_.parent_path();
      sync_path(directory, O_RDONLY | O_DIRECTORY,
                fmt::format("{}: the archive is in place but its directory could not be synced", what));
    }
  }
  // The new archive is in place: read from it from now on.
  archive_.reset();
  if (spill_fd_ >= 0) ::close(spill_fd_);
  spill_fd_ = -1;
  spill_size_ = 0;
  dirty_ = false;
  entries_.clear();
  if (fs::exists(path_, ec)) {
    archive_ = open_archive(path_, fmt::format("zip store {}: reopening the written archive", describe()));
    load_members();
  }
}

}  // namespace zarrkit
