// A store inside one zip archive, compatible with zarr-python 3's ZipStore both ways: keys
// are member names ("zarr.json", "c/0/1"), new members are stored uncompressed (as
// zarr-python writes them, so that byte ranges are cheap), and zip64 is used when needed.
// The archive is read and written through libzip.
//
// Reading. The central directory is read once, when the store is opened. Ranged reads of a
// stored (uncompressed) member seek inside it and read only the bytes asked for; a ranged
// read of a deflated (or otherwise compressed) member decompresses from its start up to the
// end of the range. A whole read checks the member's CRC-32. When a name occurs more than
// once (zarr-python appends a second member when a key is written twice), the last one wins,
// as in Python's zipfile. Directory entries ("a/") are skipped.
//
// Writing. Zip is append-only, so zarrkit keeps writes pending and rewrites the archive when
// the store is flushed, closed or destroyed: set() appends the value to an unnamed spill
// file beside the archive (memory stays small whatever is written), erase() and
// overwrites only mark members. flush() then writes a new archive (the members kept are
// copied as they are, compressed bytes included, the new ones added uncompressed) to a
// temporary file beside it (".<archive>.zarrkit-tmp.<pid>-<random>") and renames it over the
// old one, so a reader or a crash sees the old archive or the new one, never a mix. With
// `durable` (or the durable_writes setting) the new archive is synced before that rename and
// the directory after it. Unlike zarr-python, which appends a duplicate member
// and warns, an overwritten or erased key is really gone: zarrkit's archives never hold a
// name twice (duplicates found in an archive are dropped when zarrkit rewrites it). Reads
// through the store see pending writes at once. A store destroyed while an exception
// unwinds the stack discards its pending writes (the archive keeps its last flushed
// state); destroyed otherwise, it flushes, and a failure then is reported on stderr only,
// so call flush() or close() to see errors. An archive left without members is removed
// (libzip writes no empty archives).
//
// Bad archives: a file that is not a zip, a truncated one or an inconsistent central
// directory is DataLossError when opened; a member whose name is not a safe key (".."
// segments, a leading '/', a backslash, NUL) is DataLossError when opened; a member whose
// declared size exceeds `max_member_bytes` is ResourceExhaustedError when read whole (a range
// within the limit may still be read), before anything is inflated; a member
// whose bytes do not match its declared size or CRC-32 is DataLossError; encrypted members
// and compression methods libzip lacks are UnsupportedError.
//
// All methods are safe to call from several threads (one mutex: libzip handles are not).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "zarrkit/store.h"

namespace zarrkit {

struct ZipStoreOptions {
  bool read_only = true;
  // Writable only: start from an empty archive even if the file exists (zarr-python's
  // mode "w"); the old archive is replaced at the first flush.
  bool truncate = false;
  // Writable only: compress new members with deflate instead of storing them. Off by
  // default, as in zarr-python: chunks are compressed already, and stored members can be
  // read in part.
  bool deflate_new_members = false;
  // More than this many bytes of a member are refused in one read, judged by the member's
  // declared uncompressed size before anything is inflated (zip bombs); 0: the
  // max_chunk_bytes setting (config.h) in force when the store is opened.
  std::uint64_t max_member_bytes = 0;
  // Writable only: on open, delete the temporary archives that killed writers left beside
  // the archive (libzip names them after it: a dot and six random letters or digits): at
  // once when no writer of this host is writing an archive in that directory (they hold a
  // lock on it while they do), else once they are older than this (a live writer keeps
  // touching its own).
  double stale_temp_seconds = 3600.0;
  // Writable only: sync the new archive to disk before renaming it over the old one, and the
  // directory after, so that a flushed archive survives a power loss; also on when the
  // durable_writes setting (config.h) is, when the store is opened.
  bool durable = false;
};

class ZipStore : public Store {
 public:
  // Opens `path`. Read-only: the file must exist (NotFoundError) and be a zip archive.
  // Writable: a missing file is created at the first flush (with its parent directories).
  static std::shared_ptr<ZipStore> open(std::filesystem::path path, ZipStoreOptions options = {});
  ZipStore(std::filesystem::path path, ZipStoreOptions options);
  ~ZipStore() override;
  ZipStore(const ZipStore&) = delete;
  ZipStore& operator=(const ZipStore&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Writes the pending changes into the archive (see the file comment); nothing to do
  // when there are none. The store stays open.
  void flush();
  // flush(), then releases the archive; every later call is InvalidArgumentError.
  void close();

  StoreCapabilities capabilities() const override;
  std::string describe() const override;
  std::optional<Buffer> get(std::string_view key,
                            const BufferPrototype& prototype = BufferPrototype::host(),
                            std::optional<ByteRange> range = std::nullopt) override;
  std::optional<std::vector<Buffer>> get_ranges(std::string_view key,
                                                std::span<const ByteRange> ranges,
                                                const BufferPrototype& prototype =
                                                    BufferPrototype::host()) override;
  bool exists(std::string_view key) override;
  std::optional<std::uint64_t> size(std::string_view key) override;
  void set(std::string_view key, ByteView value) override;
  void erase(std::string_view key) override;
  void erase_prefix(std::string_view prefix) override;
  std::vector<std::string> list(std::string_view prefix = "") override;

  struct Archive;  // the libzip handle (zip_store.cpp)

 private:
  // Deletes what killed writers left beside the archive (ZipStoreOptions::stale_temp_seconds);
  // returns how many.
  std::size_t remove_stale_temp_archives();
  // Where the current value of a key lives: a member of the archive on disk, or a range of
  // the spill file (written since the last flush).
  struct Entry {
    bool pending = false;
    std::uint64_t index = 0;   // member index in the archive (not pending)
    std::uint64_t offset = 0;  // in the spill file (pending)
    std::uint64_t size = 0;    // uncompressed size
  };

  void require_open() const;
  void require_writable(std::string_view operation, std::string_view key) const;
  void load_members();                       // fills entries_ from the archive
  void flush_locked();
  Buffer read_entry(std::string_view key, const Entry& entry, std::uint64_t begin, std::uint64_t end,
                    const BufferPrototype& prototype);
  int spill_fd();                            // opens the spill file on first use

  std::filesystem::path path_;
  ZipStoreOptions options_;
  int uncaught_at_open_ = 0;
  mutable std::mutex mutex_;
  std::unique_ptr<Archive> archive_;        // null when the file does not exist yet
  std::map<std::string, Entry, std::less<>> entries_;
  bool dirty_ = false;                      // entries_ differ from the archive
  bool closed_ = false;
  int spill_fd_ = -1;
  std::uint64_t spill_size_ = 0;
};

}  // namespace zarrkit
