// A directory store whose reads into device memory go through GPUDirect Storage (cuFile)
// where it works, and through pinned host buffers with overlapped copies where it does not.
// Like kvikio's GDSStore for zarr-python.
//
// Keys, writes, listings and reads into host or pinned memory are those of the LocalStore
// it wraps (the same files, the same checks, the same errors). Reads into device memory
// (get / get_many / get_ranges with a device prototype, read_into with device destinations)
// take one of two paths, chosen at the first such read:
//   cuFile      libcufile is loaded at run time (dlopen of Config::gpu.cufile_library, from
//               $ZARRKIT_CUFILE_LIBRARY, else libcufile.so.0, else libcufile.so: zarrkit
//               neither builds nor runs against it) and its driver opened. Without the nvidia-fs kernel driver cuFile runs in
//               its own compatibility mode (it reads through its own bounce buffers); the
//               report says which mode it is in.
//   compat      zarrkit's own path: the bytes are cut into pieces (gds_plan.h), several I/O
//               threads pread pieces into reused pinned staging buffers, and each piece's
//               copy to the device is queued on the thread's stream as soon as it is read, so
//               reading the next piece overlaps copying the last. Small values share pieces
//               (one copy for many chunks).
// The mode (GdsOptions::mode, else Config::gpu.gds_mode, from $ZARRKIT_GDS_MODE) is "auto" (cuFile if it loads and
// its driver opens, else compat: silently, but device_path() says so and why), "cufile"
// (cuFile or UnsupportedError saying why not) or "compat" (cuFile is never loaded). A
// value that cuFile refuses (a file system it does not support, a device pointer it cannot
// use) is read through the compat path; stats() counts it.
//
// Errors: a file that ends before the size it had when it was opened (truncated in
// place), or a failing read (EIO), is IoError naming the store and the key; nothing read
// in part is returned. Values replaced through the store are renamed into place, so a read
// that had opened the old file reads the old value whole.
//
// Device reads need zarrkit's GPU module (a build with CUDA; any device allocation or
// install_gpu_support() loads it) and a usable device: otherwise they are
// UnsupportedError("no CUDA device: ..."). Everything else works without them.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "zarrkit/config.h"
#include "zarrkit/store.h"
#include "zarrkit/stores/local_store.h"

namespace zarrkit {

namespace detail {
class GdsEngine;
}

// The path device reads take.
enum class GdsPath : std::uint8_t { kCufile, kCompat };

struct GdsPathReport {
  GdsPath path = GdsPath::kCompat;
  bool cufile_compat_mode = false;  // cuFile without the nvidia-fs driver
  // What was found: "cuFile 1.15 in its compatibility mode (no nvidia-fs driver)", or why
  // cuFile is not used ("cuFile is not installed (...)", "forced by ZARRKIT_GDS_MODE=compat").
  std::string detail;
  // "cufile", "cufile-compat" (cuFile in its compatibility mode) or "compat".
  std::string name() const;
};

// Unset fields take the settings in force when the store is made (Config::gpu: gds_mode,
// gds_threads, gds_piece_bytes; their defaults auto, 16 and 4 MiB come from
// ZARRKIT_GDS_MODE, ZARRKIT_GDS_THREADS and ZARRKIT_GDS_PIECE_BYTES).
struct GdsOptions {
  std::optional<GdsMode> mode;
  std::size_t threads = 0;        // I/O threads (at most 256); 0: unset
  std::uint64_t piece_bytes = 0;  // bytes per piece (at most 1 GiB); 0: unset
};

// The options with current_config().gpu applied to the unset fields.
GdsOptions resolve_gds_options(GdsOptions options);

// Device reads of one store so far.
struct GdsStats {
  std::uint64_t values_cufile = 0;  // values (or ranges) read through cuFile
  std::uint64_t values_compat = 0;  // through the compat path
  std::uint64_t bytes_cufile = 0;
  std::uint64_t bytes_compat = 0;
  std::uint64_t cufile_refused = 0;  // values cuFile refused, read through compat instead
  std::string cufile_refusal;        // why cuFile refused the first file it refused
};

class GdsStore : public Store {
 public:
  // Wraps `inner` (reads of host memory, writes and listings go to it).
  explicit GdsStore(std::shared_ptr<LocalStore> inner, GdsOptions options = {});
  ~GdsStore() override;
  // Opens (as LocalStore does) the directory `root`.
  static std::shared_ptr<GdsStore> open(std::filesystem::path root, LocalStoreOptions local = {},
                                        GdsOptions options = {});

  const std::shared_ptr<LocalStore>& inner() const { return inner_; }
  const std::filesystem::path& root() const { return inner_->root(); }
  const GdsOptions& options() const { return options_; }

  StoreCapabilities capabilities() const override;
  // "gds:///data/x.zarr".
  std::string describe() const override;
  // The directory's, as its LocalStore names it: both read the same files.
  std::string cache_identity() const override;
  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype = BufferPrototype::host(),
                            std::optional<ByteRange> range = std::nullopt) override;
  // Device memory: one allocation holding every value (each a slice of it, 256-byte
  // aligned), the files read together over the I/O threads.
  std::vector<std::optional<Buffer>> get_many(std::span<const std::string> keys,
                                              const BufferPrototype& prototype = BufferPrototype::host()) override;
  std::optional<std::vector<Buffer>> get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                const BufferPrototype& prototype = BufferPrototype::host()) override;
  // Host destinations (Store's contract).
  std::optional<std::uint64_t> read_into(std::string_view key, std::span<const ByteRange> ranges,
                                         std::span<const MutableByteView> dests) override;
  // Destinations of `kind`: device memory goes through the device path, other kinds as above.
  std::optional<std::uint64_t> read_into(std::string_view key, std::span<const ByteRange> ranges,
                                         std::span<const MutableByteView> dests, MemoryKind kind);
  // The whole values of `keys` into `dests` (memory of `kind`), read together. Returns each
  // value's size, nullopt for an absent one. A value larger than its destination is not
  // read (its size says so); a smaller one fills the start of it.
  std::vector<std::optional<std::uint64_t>> read_values_into(std::span<const std::string> keys,
                                                             std::span<const MutableByteView> dests,
                                                             MemoryKind kind);
  bool exists(std::string_view key) override;
  std::optional<std::uint64_t> size(std::string_view key) override;
  void set(std::string_view key, ByteView value) override;
  void erase(std::string_view key) override;
  std::unique_ptr<UpdateLock> lock_for_update(std::string_view key) override;
  void erase_prefix(std::string_view prefix) override;
  std::vector<std::string> list(std::string_view prefix = "") override;
  DirListing list_dir(std::string_view prefix) override;

  // The path device reads take (chosen now if no device read has run yet: this loads
  // cuFile unless the mode is compat). UnsupportedError without a device, or when the mode
  // is cufile and cuFile cannot be used.
  GdsPathReport device_path();
  GdsStats stats() const;

 private:
  struct DeviceRead;
  std::shared_ptr<detail::GdsEngine> engine(std::string_view key);
  // Reads `reads` into device memory through `engine`, or throws IoError naming the key of
  // the first that failed.
  void run_device_reads(detail::GdsEngine& engine, std::span<const DeviceRead> reads, std::uint64_t max_gap);

  std::shared_ptr<LocalStore> inner_;
  GdsOptions options_;
  std::string cufile_library_;  // Config::gpu.cufile_library when the store was made
  std::mutex engine_mutex_;
  std::shared_ptr<detail::GdsEngine> engine_;
  std::atomic<std::uint64_t> values_cufile_{0}, values_compat_{0}, bytes_cufile_{0}, bytes_compat_{0},
      cufile_refused_{0};
  mutable std::mutex refusal_mutex_;
  std::string cufile_refusal_;
};

}  // namespace zarrkit
