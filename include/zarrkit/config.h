// Runtime settings: one object holding every knob of the engine, the remote stores and the
// GPU path; global, and overridable for a scope (like zarr.config.set).
//
//   zarrkit::global_config().num_threads = 8;         // global
//   { zarrkit::ScopedConfig scoped([](Config& c) { c.remote.concurrency = 16; }); ... }
//
// The global settings start from the defaults below with the ZARRKIT_* environment
// variables applied, read once, when global_config() is first used (docs/settings.md lists
// every setting with its variable). A malformed variable is InvalidArgumentError naming it,
// from that first use on.
//
// Each request reads the settings on the thread that starts it (current_config()), when it
// starts, and hands what its tasks need to the pool's workers. Stores read theirs when they
// are made: a remote or GDS store keeps the settings in force at its creation, and explicit
// options given to it (RemoteOptions, S3Options, GdsOptions) win over them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "zarrkit/buffer.h"

namespace zarrkit {

class ThreadPool;

// How a GdsStore reads into device memory: cuFile where it works, else zarrkit's pinned
// staging ("compat"); see zarrkit/stores/gds_store.h.
enum class GdsMode : std::uint8_t { kAuto, kCufile, kCompat };

// Whether zarrkit's own GPU kernels decode a codec's chunks in reads into device memory:
// never, where they beat the host's threads for the read at hand (its size, its chunks' size
// and the host's threads, by the rule docs/gpu.md gives), or wherever they can.
enum class KernelUse : std::uint8_t { kOff, kAuto, kOn };

// The HTTP and S3 stores (zarrkit/stores/http_store.h, s3_store.h).
struct RemoteConfig {
  // Requests in flight at once per transport (ZARRKIT_HTTP_CONCURRENCY). Object stores
  // answer each request after a round trip: many requests in flight hide that latency,
  // while each one may open a connection of its own, which servers limit.
  std::size_t concurrency = 64;
  // Event-loop threads that receive responses, sharing the requests in flight
  // (ZARRKIT_HTTP_THREADS); 0: one per 4 hardware threads, 1 to 4 (one thread copying
  // every body becomes the limit on many cores).
  std::size_t event_loops = 0;
  // ZARRKIT_HTTP_CONNECT_TIMEOUT_MS: a server that does not accept a connection within this
  // is treated as down (and the request retried).
  std::chrono::milliseconds connect_timeout{10'000};
  // ZARRKIT_HTTP_STALL_TIMEOUT_MS: a transfer that moves no bytes for this long fails and is
  // retried. Catches dead connections without limiting large transfers.
  std::chrono::milliseconds stall_timeout{30'000};
  // ZARRKIT_HTTP_REQUEST_TIMEOUT_MS: a limit on a whole request; 0, none (stalls are caught
  // above, and large values take time).
  std::chrono::milliseconds request_timeout{0};
  // Retries of failures that may pass (5xx, throttling, timeouts, resets), with exponential
  // backoff and full jitter: ZARRKIT_HTTP_MAX_ATTEMPTS tries in all (the first included),
  // the ceiling starting at ZARRKIT_HTTP_RETRY_INITIAL_MS and doubling up to
  // ZARRKIT_HTTP_RETRY_MAX_MS; no retry starts later than ZARRKIT_HTTP_RETRY_TOTAL_MS
  // after the first try. The defaults ride out a short outage or a burst of throttling
  // and still fail within about a minute when a server stays down.
  int max_attempts = 8;
  std::chrono::milliseconds retry_initial_delay{100};
  std::chrono::milliseconds retry_max_delay{5'000};
  std::chrono::milliseconds retry_total{60'000};
  // Check servers' TLS certificates (ZARRKIT_HTTP_VERIFY_TLS). Off only for test servers.
  bool verify_tls = true;
  // A PEM file of the certificate authorities to trust instead of the system's (a private
  // CA, a self-signed server); empty: the system's. From ZARRKIT_CA_BUNDLE, else
  // AWS_CA_BUNDLE (as boto3 reads it), else CURL_CA_BUNDLE.
  std::string ca_bundle;
  // get_ranges merges ranges of one value that are at most coalesce_gap_bytes apart into
  // requests of at most coalesce_max_bytes: a round trip costs more than the bytes between
  // two nearby ranges, and one large request more than several in flight at once.
  std::uint64_t coalesce_gap_bytes = 256 * 1024;
  std::uint64_t coalesce_max_bytes = 32 * 1024 * 1024;
  // S3 values larger than this are written as multipart uploads of s3_part_size_bytes
  // (ZARRKIT_S3_MULTIPART_THRESHOLD, ZARRKIT_S3_PART_SIZE; parts are at least 5 MiB, S3's
  // minimum, and larger when 10000 parts would not hold the value). Parts go up in
  // parallel, and a failed part is retried alone.
  std::uint64_t s3_multipart_threshold_bytes = std::uint64_t{64} << 20;
  std::uint64_t s3_part_size_bytes = std::uint64_t{16} << 20;

  bool operator==(const RemoteConfig&) const = default;
};

// Reads into (and writes from) device memory: the device reader and writer, nvCOMP,
// GdsStore (docs/gpu.md). Plain values: a build without CUDA keeps and ignores them.
struct GpuConfig {
  // Decoded bytes one batch of chunks may hold (ZARRKIT_GPU_BATCH_BYTES). A batch is read
  // into pinned staging and decoded by a few kernel launches: large enough to fill the GPU
  // with work, small enough that the staging and device scratch of several batches in
  // flight stay a small part of the device's memory.
  std::uint64_t batch_budget_bytes = std::uint64_t{256} << 20;
  // Batches in flight at once, 1 to 8 (ZARRKIT_GPU_PIPELINE_DEPTH): the host prepares one
  // while the GPU works on the others; a batch of blosc chunks rarely has enough streams to
  // fill a GPU by itself, hence 4.
  std::size_t pipeline_depth = 4;
  // How many GPUs' reads share this host at once, 1 to 1024
  // (ZARRKIT_GPU_DEVICES_SHARING_HOST): set it to the number of processes where one process
  // per GPU runs on a host (Dask-CUDA, torchrun), so that each takes its share of the host's
  // threads (num_threads 0 then means hardware threads / this) instead of all of them.
  // A multi-device read in one process (multi_device.h) shares its one pool by itself.
  std::size_t devices_sharing_host = 1;
  // Decode zstd and gzip chunks with nvCOMP (ZARRKIT_NVCOMP_DECODE), in batches of at least
  // nvcomp_min_chunks of them (ZARRKIT_NVCOMP_MIN_CHUNKS): its batched decoders beat the
  // host's threads only on many small chunks. Off by default because nvCOMP documents
  // undefined behaviour on corrupt input: for data one trusts (docs/gpu.md).
  bool nvcomp_decode = false;
  std::uint64_t nvcomp_min_chunks = 512;
  // Decode zstd chunks, and blosc's zstd blocks, with zarrkit's own GPU kernels
  // (ZARRKIT_ZSTD_KERNELS: auto, on or off), which check every read and write against the
  // chunk's buffers: a corrupt chunk fails alone and is decoded again on the host, which
  // reports its error. kOn takes precedence over nvcomp_decode for zstd; under kAuto an
  // explicit nvcomp_decode wins.
  KernelUse zstd_kernels = KernelUse::kAuto;
  // Decode gzip and zlib chunks (a warp per chunk), and blosc's zlib blocks, with zarrkit's
  // own GPU kernels (ZARRKIT_DEFLATE_KERNELS: auto, on or off), checked as the zstd kernels
  // are; precedence over nvcomp_decode for gzip as for zstd.
  KernelUse deflate_kernels = KernelUse::kAuto;
  // Arrays on a GdsStore whose chunks are stored as laid out (no codec but bytes and
  // transposes, not sharded) are read by the store straight into device memory rather
  // than through the pinned staging (ZARRKIT_GDS_DIRECT; off only to compare the paths).
  bool gds_direct = true;
  // GdsStore's device-read path (ZARRKIT_GDS_MODE: auto, cufile or compat), its I/O threads
  // (ZARRKIT_GDS_THREADS, at most 256) and the bytes each reads at a time
  // (ZARRKIT_GDS_PIECE_BYTES, at most 1 GiB; "4M", "512k"): 16 threads of 4 MiB pieces
  // keep a page cache's reads and the copies to the device overlapped.
  GdsMode gds_mode = GdsMode::kAuto;
  std::size_t gds_threads = 16;
  std::uint64_t gds_piece_bytes = std::uint64_t{4} << 20;
  // Where to load cuFile and nvCOMP from at run time (ZARRKIT_CUFILE_LIBRARY,
  // ZARRKIT_NVCOMP_LIBRARY); empty: libcufile.so.0 then libcufile.so, libnvcomp.so.6 then
  // libnvcomp.so on the loader's path. Each library is loaded once per process, with the
  // path in force at that first load (a GdsStore's creation for cuFile, the first read
  // that may use nvCOMP for nvCOMP).
  std::string cufile_library;
  std::string nvcomp_library;

  bool operator==(const GpuConfig&) const = default;
};

// The decoded-chunk cache (zarrkit/chunk_cache.h, docs/chunk-cache.md): decoded chunks kept
// for later reads that touch them again (sliding windows, data loaders, viewers, repeated
// remote or sharded reads). Off by default: a read that never comes back to a chunk pays a
// copy into the cache and the memory for nothing.
struct CacheConfig {
  // Bytes of decoded chunks the process keeps in host memory, one budget shared by every
  // array (ZARRKIT_CACHE_BYTES, "512M", "4G"); 0: none. A read takes the value in force when
  // it starts and resizes the process's cache to it (0 empties it): set it for the process,
  // not for a scope.
  std::uint64_t host_bytes = 0;
  // Where not 0, an array opened (or created) while it is in force keeps a cache of its own
  // of this many bytes, which its reads use instead of the process's (ZARRKIT_CACHE_ARRAY_BYTES):
  // one array's reads then never push out another's chunks.
  std::uint64_t array_bytes = 0;
  // Bytes of decoded chunks kept in GPU memory for reads into device memory, per GPU
  // (ZARRKIT_CACHE_DEVICE_BYTES); 0: none. Separate from the host's budget.
  std::uint64_t device_bytes = 0;

  bool operator==(const CacheConfig&) const = default;
};

// The memory this process may use: physical memory, or the cgroup's limit where lower.
std::uint64_t usable_memory_bytes();
// The defaults of Config::max_chunk_bytes and Config::max_request_bytes (see there).
std::uint64_t default_max_chunk_bytes();
std::uint64_t default_max_request_bytes();

struct Config {
  // Worker threads for encoding/decoding (ZARRKIT_NUM_THREADS); 0 means the number of
  // hardware threads.
  std::size_t num_threads = 0;
  // Store chunks that are entirely the fill value (zarr-python's write_empty_chunks).
  bool write_empty_chunks = false;
  // Local writes count as done only once they would survive a power loss
  // (ZARRKIT_DURABLE_WRITES; the CLI's --durable): a LocalStore (and GdsStore) syncs each
  // written file before renaming it into place and its directory after, as
  // LocalStoreOptions::durable asks of one store, and a ZipStore syncs the new archive before
  // renaming it over the old one, then the directory. Stores take it when they are opened.
  // Off by default: every key written then waits for the disk (docs/concurrency.md).
  bool durable_writes = false;
  // Memory that reads land in by default (host now; pinned/device with the GPU module).
  MemoryKind memory = MemoryKind::kHost;
  // Reading part of a shard: inner chunks whose byte ranges are at most this far apart are
  // fetched as one range (one request instead of two, at the cost of the bytes between).
  std::uint64_t shard_coalesce_gap_bytes = 64 * 1024;
  // Reading whole shards from a store that reads values in parts (LocalStore): the encoded
  // inner chunks are read and decoded this many bytes at a time, so that a thread holds one
  // window rather than a whole shard (16 threads each holding a 12-16 MiB shard raised a
  // read's peak memory by ~20% of its output). Large enough that one read serves many
  // inner chunks.
  std::uint64_t shard_read_window_bytes = 4 << 20;
  // Resource limits against hostile or mistaken input (docs/settings.md). A chunk whose
  // decoded size exceeds max_chunk_bytes is refused before anything is read or allocated for
  // it (ZARRKIT_MAX_CHUNK_BYTES); the same bound caps a zip member read at once. Default:
  // the smaller of 2 GiB and an eighth of the memory this process may use, so that one
  // chunk never takes the machine down, while every chunk shape in common use fits.
  std::uint64_t max_chunk_bytes = default_max_chunk_bytes();
  // The decoded bytes one read may hold at once (ZARRKIT_MAX_REQUEST_BYTES): chunks being
  // decoded in parallel, and the elements of variable-length chunks it has decoded. A limit
  // per chunk times the chunks in flight is still a machine-sized allocation; reads decode
  // fewer chunks at once to stay within this, and fail when even one does not fit. Default:
  // the smaller of 8 GiB and a quarter of the memory this process may use.
  std::uint64_t max_request_bytes = default_max_request_bytes();
  RemoteConfig remote;
  GpuConfig gpu;
  CacheConfig cache;

  bool operator==(const Config&) const = default;
};

// The defaults with the ZARRKIT_* environment variables applied, read once: what
// global_config() starts from, and what zarrkit.config.reset() restores.
const Config& environment_config();

// The process-wide settings. Change them before starting work, not during.
Config& global_config();
// The settings in force on this thread: the innermost ScopedConfig, else the global ones.
const Config& current_config();

// Overrides settings on this thread until destroyed.
class ScopedConfig {
 public:
  explicit ScopedConfig(const std::function<void(Config&)>& change);
  ~ScopedConfig();
  ScopedConfig(const ScopedConfig&) = delete;
  ScopedConfig& operator=(const ScopedConfig&) = delete;

 private:
  const Config* previous_;
  Config config_;
};

// The shared pool, sized by current_config().num_threads (re-created if that changed).
ThreadPool& shared_thread_pool();

// The buffer prototype for current_config().memory.
BufferPrototype default_prototype();

// The GPU module registers its pinned and device allocators here at start-up; without it
// asking for those kinds of memory is an UnsupportedError.
void register_allocator(MemoryKind kind, Allocator* allocator);
Allocator* registered_allocator(MemoryKind kind);

}  // namespace zarrkit
