// A store over a local directory. Keys map to files below the root ("a/c/0/1" ->
// ROOT/a/c/0/1).
//
// Reads open the file and pread only the bytes asked for (get_ranges reads all its ranges
// through one open). A missing file, or a key that names a directory, reads as absent.
//
// Writes go to a temporary file in the same directory (".<name>.zarrkit-tmp.<pid>-<random>")
// that is then renamed into place, so a reader or a crash sees the old value or the new
// one, never a mix. Missing parent directories are created. With `durable` the file is
// fsynced before the rename and its directory after it (and any directory the write
// created, in its parent), so an acknowledged write survives a crash; a failed fsync is
// reported, never retried. On any failure the temporary file is removed and IoError is
// thrown with the system's reason. Listings never show temporary files, so keys whose
// last segment starts with '.' and contains ".zarrkit-tmp." are reserved.
//
// Temporary files left by a crashed writer are deleted when a writable store is opened:
// at once when the process named in their name is gone, else once they are more than an
// hour old (names of older versions carry no process id). This walks the whole tree once;
// set `clean_stale_temp_files = false` to skip it on huge stores.
//
// Safety: keys are validated (store.h), and a key is refused with InvalidArgumentError if
// a path component below the root is a symlink whose resolved target lies outside the root
// (or cannot be resolved). Symlinks that stay inside the root are followed by reads and
// writes. Listings show symlinks to files inside the root but never descend into directory
// symlinks (no loops, no tree listed twice, never out of the root); they skip files whose
// names are not valid keys, temporary files, and anything not a regular file or directory.
//
// erase removes the file and leaves its (possibly empty) directories; list_dir reports
// such empty directories as prefixes. erase_prefix removes the whole directory tree: it is
// first renamed to a hidden temporary name in one step (for the root, its entries move into a
// hidden directory, the node's metadata first), so a crash leaves the node whole or gone.
// Reading into device memory is refused with UnsupportedError (the GPU stores do that).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "zarrkit/store.h"

namespace zarrkit {

namespace detail {
class FileIo;
}

// A value opened for reading by LocalStore::open_file: the file descriptor stays open (and
// the bytes it names stay those of the value as it was when opened, since writes replace
// files by renaming) until this is destroyed.
class LocalFile {
 public:
  LocalFile(std::shared_ptr<detail::FileIo> io, int fd, std::uint64_t size);
  LocalFile(LocalFile&& other) noexcept;
  LocalFile& operator=(LocalFile&&) = delete;
  LocalFile(const LocalFile&) = delete;
  ~LocalFile();

  int fd() const { return fd_; }
  std::uint64_t size() const { return size_; }
  // The system calls of the store that opened it (tests replace them).
  detail::FileIo& io() const { return *io_; }

 private:
  std::shared_ptr<detail::FileIo> io_;
  int fd_;
  std::uint64_t size_;
};

struct LocalStoreOptions {
  bool read_only = false;
  bool durable = false;  // fsync file and directory on every write
  bool create = true;    // create the root directory if missing (when writable)
  bool clean_stale_temp_files = true;  // on open, when writable (see above)
  // Tests only: replaces the system calls (src/stores/file_io.h). Null means the real ones.
  std::shared_ptr<detail::FileIo> io;
};

class LocalStore : public Store {
 public:
  // Throws NotFoundError if the root does not exist and is not to be created, and
  // InvalidArgumentError if it is not a directory.
  explicit LocalStore(std::filesystem::path root, LocalStoreOptions options = {});
  static std::shared_ptr<LocalStore> open(std::filesystem::path root, LocalStoreOptions options = {});

  const std::filesystem::path& root() const { return root_; }

  StoreCapabilities capabilities() const override;
  std::string describe() const override;
  // "file://" and the root with symlinks resolved, then "/".
  std::string cache_identity() const override;
  // Defaults repeated from Store so that calls through the concrete type may omit them.
  std::optional<Buffer> get(std::string_view key,
                            const BufferPrototype& prototype = BufferPrototype::host(),
                            std::optional<ByteRange> range = std::nullopt) override;
  std::optional<std::vector<Buffer>> get_ranges(std::string_view key,
                                                std::span<const ByteRange> ranges,
                                                const BufferPrototype& prototype =
                                                    BufferPrototype::host()) override;
  std::optional<std::uint64_t> read_into(std::string_view key, std::span<const ByteRange> ranges,
                                         std::span<const MutableByteView> dests) override;
  // Keeps the file open: reads see the value as it was when opened, even if it is replaced.
  std::unique_ptr<ByteSource> open_reader(std::string_view key) override;
  bool exists(std::string_view key) override;
  std::optional<std::uint64_t> size(std::string_view key) override;
  void set(std::string_view key, ByteView value) override;
  void erase(std::string_view key) override;
  void erase_prefix(std::string_view prefix) override;
  std::vector<std::string> list(std::string_view prefix = "") override;
  DirListing list_dir(std::string_view prefix) override;
  // An flock shared by the processes of this host (src/stores/file_update_lock.h); null
  // for a read-only store.
  std::unique_ptr<UpdateLock> lock_for_update(std::string_view key) override;

  // For stores that read the files themselves (GdsStore): the value of `key` opened for
  // reading, after the same key and symlink checks as get(); nullopt when it is absent.
  // `extra_flags` are added to open()'s (O_DIRECT, say).
  std::optional<LocalFile> open_file(std::string_view key, int extra_flags = 0) const;
  bool read_only() const { return options_.read_only; }

  // Deletes the temporaries (files, and directories of whole nodes) of writers that are gone
  // (no longer running on this host), and those without a writer's process id in their name
  // that are older than `min_age_seconds`; returns how many. Run on open.
  std::size_t clean_stale_temp_files(double min_age_seconds = 3600.0);

 private:
  // ROOT/relative, after checking that no existing component below the root is a symlink
  // leading out of it. `relative` is a validated key or normalized prefix ("" = the root).
  std::string checked_path(std::string_view relative) const;
  void require_writable(std::string_view operation, std::string_view key) const;
  // Creates the missing directories of `relative_dir` below the root.
  void make_parent_directories(std::string_view relative_dir);
  void sync_directory(const std::string& path, std::string_view key);
  // erase_prefix("") : everything below the root `path`, metadata first.
  void erase_root_entries(const std::string& path);

  std::filesystem::path root_;
  std::string root_string_;       // root_ absolute and normalized, without a trailing '/'
  std::string canonical_root_;    // root_ with symlinks resolved, for containment checks
  LocalStoreOptions options_;
  std::shared_ptr<detail::FileIo> io_;
};

}  // namespace zarrkit
