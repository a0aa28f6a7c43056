// Executing chunk decodes on the device in batches: the part of a device read that does not
// depend on where the chunks come from.
//
// A driver (an array read, device_read.cpp; the batch API, batch_decode.cpp) hands the
// chunks over batch by batch: for each chunk of a batch, its copy geometry (the task: which
// elements go where in its output region) and, in the host phase, its encoded bytes
// (DeviceBatches::process, in parallel on the shared pool; straight into the pinned arena
// where the store can). Each batch then goes to the device in one copy and is decoded by
// one launch per kind of work (the device halves' works, device_codec.h) and one scatter.
// Several batches are in flight: the host prepares one while the device works on others.
// A chunk the device refuses is decoded again on the host, which reports the error a host
// read reports, or supplies the values.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/block_runs.h"
#include "engine/indexer.h"
#include "gpu/batch_support.h"
#include "gpu/device_chain.h"
#include "gpu/device_codec.h"
#include "gpu/device_settings.h"
#include "zarrkit/buffer.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/ndbuffer.h"

namespace zarrkit::gpu {

// One chunk of a batch.
struct DeviceChunk {
  // Per axis, the chunk's selected positions and their places in `region`: the runs of a
  // chunk task (task_runs(task)), or of an inner chunk a partial codec located, whose
  // storage `runs_owner` keeps alive.
  BlockRuns runs;
  ChunkTask task;                            // the driver's task, where the chunk is one
  std::shared_ptr<const void> runs_owner;
  const NDView* region = nullptr;  // the output (device memory, region coordinates)
  std::string key;                 // for error messages (and a driver's own use)
  std::uint64_t ordinal = 0;       // a driver's own use (an inner chunk's place in its shard)
  std::uint32_t group = 0;         // a driver's own use (the batch's shard it is in)
  bool fetched = false;            // a driver's own use (bytes found for it)
  bool present = false;            // false: the fill value
  bool abandoned = false;          // its driver gave up on it (and kept the error): nothing is written
  bool direct = false;             // already in device memory, laid out as stored (GDS, a cache)
  std::uint64_t direct_address = 0;
  // A driver's own use, for a cache of decoded chunks in device memory: the cached copy
  // that direct_address points into (held until the batch is done), whether to keep a copy
  // of this chunk once the device has decoded it (on_kept), and the cache's ticket for it.
  Buffer cached;
  bool keep = false;
  std::uint64_t cache_ticket = 0;
  Buffer original;                 // the stored value (for the host's decode of a refused chunk)
  // Set by process():
  Buffer staged;                   // owns the bytes to upload
  const std::byte* upload = nullptr;
  std::uint64_t upload_size = 0;
  BatchWorks works;                // the device stages' jobs (absorbed by the batch's)
  ChunkBytes decoded;              // where its stored-layout bytes are once the device stages ran
  std::uint64_t input_offset = 0;
};

class DeviceBatches {
 public:
  // Chunks decoded with `prepared` (the chain prepared for their spec); the fill value
  // `fill` (one element). `describe` names a chunk in error messages ("array 'a' in
  // file://..., chunk 'c/0/1'").
  DeviceBatches(std::shared_ptr<const PreparedChain> prepared, ByteView fill, std::uint64_t num_chunks,
                std::function<std::string(const DeviceChunk&)> describe);
  ~DeviceBatches();
  DeviceBatches(const DeviceBatches&) = delete;
  DeviceBatches& operator=(const DeviceBatches&) = delete;

  const DeviceChain& chain() const { return chain_; }
  // Config::gpu as it was on the thread that made these batches.
  const DeviceSettings& settings() const { return settings_; }
  std::uint64_t chunk_bytes() const { return chunk_bytes_; }
  std::uint64_t slot_bytes() const { return slot_bytes_; }
  std::uint64_t chunks_per_batch() const { return per_batch_; }

  // The host phase of one batch: `chunks` holds `count` chunks (default-made); the driver
  // sets each one's task and region, reads its bytes and calls process() (or marks it
  // absent, or direct). `staging` is where stores read the bytes: the pinned arena where
  // they go to the device as stored, ordinary memory where the host decodes them first.
  // `stream` and `device_area` are the batch's stream and device memory of the driver's own
  // (kept for its slot of the pipeline, so not shared with a batch still in flight), for
  // drivers that place bytes on the device themselves.
  struct Batch {
    std::vector<DeviceChunk>& chunks;
    const BufferPrototype& staging;
    PinnedArena& arena;
    cudaStream_t stream;
    DeviceBuffer& device_area;
    std::uint64_t first = 0;  // the index of its first chunk among all chunks
  };
  using HostPhase = std::function<void(Batch& batch)>;
  // Decodes chunks 0..num_chunks-1 (as given to the constructor) in batches.
  void run(const HostPhase& host_phase);
  // For drivers whose host phase depends on its batch alone (nothing carried from one batch
  // to the next): the host phases of the batches in flight run at once, each on a thread of
  // its own, and the batches are cut small enough that every slot of the pipeline gets one.
  // A read of one batch (a part of a multi-device read, a small request) then overlaps its
  // host and device phases, and the pool has several batches' chunks to work on.
  void allow_concurrent_host_phases();

  // The host part of one present chunk (the batch's chunk `index`): the host stages, then
  // the device stages' jobs (or, when a header asks for it, their decode on the host),
  // staged in the arena. Thread-safe across chunks.
  void process(DeviceChunk& chunk, std::uint32_t index, PinnedArena& arena, Buffer encoded) const;
  // Drops whatever process() made for `chunk` before it failed: the batch goes on without it
  // and nothing is written to its region.
  static void abandon(DeviceChunk& chunk);

  // Makes ahead what running these batches needs: pinned staging and streams (kept in their
  // pools), device memory (the pool grown once), the kernels loaded.
  void warm_up();

  // How a refused direct chunk is read again on the host (set by drivers with direct chunks).
  std::function<Buffer(const DeviceChunk&)> reread_direct;
  // Where set, chunks marked `keep` that the device decoded (not refused) are copied, once
  // their batch is done, into device memory of their own (stored layout: what the scatter
  // reads, as a direct chunk's bytes) and handed here, on the thread that finishes the batch.
  std::function<void(const DeviceChunk&, Buffer decoded)> on_kept;
  // Where set, a refused chunk that the host cannot decode either is handed here with its
  // error (std::current_exception(), naming the chunk) and the batches go on: for drivers
  // whose chunks are independent requests (the batch API). Unset, the error ends the run.
  std::function<void(const DeviceChunk&, std::exception_ptr)> on_chunk_error;

 private:
  struct Slot;
  // Pinned bytes a batch of `count` chunks stages.
  std::uint64_t staging_bytes(std::uint64_t count) const;
  // True where the chunks' stored bytes go to the device as they are (no host stages), so
  // stores read them into the pinned arena.
  bool stages_stored_bytes() const;
  void run_batch(Slot& slot, std::uint64_t first, const HostPhase& host_phase);
  void launch(Slot& slot);
  void finish(Slot& slot);
  void keep_copies(Slot& slot, const std::vector<std::uint32_t>& rejected);
  void recover(Slot& slot, const DeviceChunk& c);

  const DeviceSettings settings_ = device_settings();  // read on the thread that starts the read
  const std::shared_ptr<const PreparedChain> prepared_;
  const ChunkSpec spec_;
  const std::uint32_t itemsize_;
  const std::uint64_t chunk_bytes_;
  const std::uint64_t slot_bytes_;
  const std::uint64_t num_chunks_;
  std::uint64_t per_batch_;
  const DeviceChain chain_;
  std::vector<std::byte> fill_;
  std::function<std::string(const DeviceChunk&)> describe_;
  bool concurrent_ = false;
  std::mutex arena_mutex_;  // guards next_arena_size_
  std::uint64_t next_arena_size_ = 0;
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace zarrkit::gpu
