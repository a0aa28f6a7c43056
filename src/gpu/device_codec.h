// The device halves of codecs: what a codec does on the GPU, batch by batch.
//
// A codec's device half is registered in the codec registry under the codec's own name(s),
// beside its host half (src/gpu/codecs/: one file per codec, register.h lists them). The
// device reader and writer ask the registry for the half of each codec of a chain and never
// look at a codec's name or configuration themselves, so a new GPU codec is its own file
// pair and one registration line.
//
// Decoding (DeviceChain, device_chain.h): the bytes->bytes codecs run in decode order. The
// GPU takes the longest tail of that order that its halves can plan: a stage plans from the
// chunk's bytes as the host sees them (its headers), so only the last GPU stage may make new
// bytes (a decompressor, into a slot of the decode area); the stages before it only check
// and narrow the bytes (checksums). The codecs before that tail decode on the host into
// pinned staging. The array->bytes codec and the array->array codecs fold into the layout
// the scatter reads the decoded chunk in (byte order, axis order); where one cannot, the
// whole chain decodes on the host and the GPU only places the chunks.
//
// Jobs: a stage adds its chunk's jobs to one of the batch's work tables (BatchWork: LZ4
// streams, checksums, nvCOMP's batch, ...), each launched once per batch over every chunk,
// in phase order. Every job names its chunk and records a status for it; a chunk the GPU
// refuses is decoded again on the host, which reports the error a host read reports.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <typeindex>
#include <vector>

#include "zarrkit/codec.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/config.h"

namespace zarrkit::gpu {

struct DeviceSettings;

// Where bytes of one chunk lie during a batch, relative to that chunk's own place: its
// uploaded input (the staged bytes) or its slot of the decode area (one slot per chunk that
// a stage decodes into, sized for the decoded chunk).
struct ChunkBytes {
  enum class Area : std::uint8_t { kInput, kSlot };
  Area area = Area::kInput;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

// The device addresses of a launched batch, for works to turn their chunk-relative offsets
// into absolute ones.
struct BatchAddresses {
  const std::uint8_t* input = nullptr;  // the uploaded bytes
  std::uint8_t* slots = nullptr;        // the decode area
  std::uint64_t slot_bytes = 0;         // the size of one slot
  std::uint64_t slots_used = 0;
  const std::vector<std::uint64_t>* input_offset = nullptr;  // per chunk, into `input`
  const std::vector<std::uint64_t>* slot_index = nullptr;    // per chunk, its slot (if it has one)
  std::int32_t* status = nullptr;       // per chunk, the first error a job found (0: none)
  cudaStream_t stream = nullptr;

  std::uint64_t address(std::uint32_t chunk, const ChunkBytes& where) const {
    if (where.area == ChunkBytes::Area::kInput) {
      return reinterpret_cast<std::uint64_t>(input) + (*input_offset)[chunk] + where.offset;
    }
    return reinterpret_cast<std::uint64_t>(slots) + (*slot_index)[chunk] * slot_bytes + where.offset;
  }
};

// Packs job tables for one upload (the batch's tables travel to the device in one copy).
class TableWriter {
 public:
  // Appends `bytes` bytes (aligned) and returns their offset in the tables.
  std::uint64_t append(const void* data, std::size_t bytes);
  template <typename T>
  std::uint64_t append(const std::vector<T>& rows) {
    return append(rows.data(), rows.size() * sizeof(T));
  }
  const std::vector<std::byte>& bytes() const { return bytes_; }
  void clear() { bytes_.clear(); }

 private:
  std::vector<std::byte> bytes_;
};

// One kind of device work of a batch: its jobs for every chunk, launched once. Works live as
// long as the reader's slot of the pipeline and are cleared for each batch, so their device
// buffers are reused.
class BatchWork {
 public:
  // The order of launches: checks of the input first, then decompressors, then the passes
  // over decoded bytes (unshuffles), then whole-chunk array passes.
  enum Phase : int { kVerify = 0, kDecompress = 1, kAfterDecompress = 2, kArray = 3 };

  virtual ~BatchWork() = default;
  virtual Phase phase() const = 0;
  virtual bool empty() const = 0;
  virtual void clear() = 0;
  // A work of the same kind with no jobs, and moving another's jobs (of the same kind) here.
  virtual std::unique_ptr<BatchWork> make_empty() const = 0;
  virtual void absorb(BatchWork& other) = 0;
  // Before the upload: adds the work's tables, with absolute device addresses where the work
  // needs them (`addresses` already holds the batch's allocations; only `status` and the
  // tables' own device address are not known yet).
  virtual void write_tables(const BatchAddresses& addresses, TableWriter& tables) = 0;
  // After the upload: queues the work's kernels on addresses.stream. `tables` is the device
  // address of the uploaded tables.
  virtual void launch(const BatchAddresses& addresses, const std::byte* tables) = 0;
  // After the batch's stream completed: the chunks this work rejected in a way the per-chunk
  // status does not show (a library with its own result table, nvCOMP). Default: none.
  virtual void rejected_chunks(std::vector<std::uint32_t>& chunks) const { (void)chunks; }
  // Device memory the work holds between batches, released with the reader.
  virtual void release(cudaStream_t stream) { (void)stream; }
};

// Work tables, one per kind, made on first use. Chunks are planned in parallel, each into
// works of its own; the batch then absorbs them in chunk order.
class BatchWorks {
 public:
  template <typename W>
  W& get() {
    for (auto& w : works_) {
      if (w.first == std::type_index(typeid(W))) return static_cast<W&>(*w.second);
    }
    works_.emplace_back(std::type_index(typeid(W)), std::make_unique<W>());
    return static_cast<W&>(*works_.back().second);
  }
  // Moves every job of `other` into this batch's works of the same kind.
  void absorb(BatchWorks& other);
  // Every work that has jobs, in launch order.
  std::vector<BatchWork*> in_phase_order() const;
  void clear();
  void release(cudaStream_t stream);

 private:
  std::vector<std::pair<std::type_index, std::unique_ptr<BatchWork>>> works_;
};

// What a stage sees of the read it takes part in (some halves only pay off in large batches).
struct DeviceStageContext {
  ChunkSpec spec;                    // the spec the bytes->bytes codecs see
  std::uint64_t chunk_bytes = 0;     // the decoded chunk
  std::uint64_t chunks_per_batch = 0;
  SizeBound output;                  // what this stage must decode to
  const DeviceSettings* settings = nullptr;  // Config::gpu of the read
  std::uint64_t chunks_in_read = 0;  // every batch's
  std::size_t host_threads = 1;      // the pool that runs the read's host phases
};

// One chunk at one stage, planned on the host: the stage's input as the host sees it and
// where the same bytes are on the device, and the batch's works to add jobs to. A stage that
// decodes into new bytes writes them to the chunk's slot (ChunkBytes::Area::kSlot).
struct ChunkStagePlan {
  std::uint32_t chunk = 0;  // its index in the batch
  ByteView host;
  ChunkBytes device;
  BatchWorks& works;
};
// Chunks a launch that gives each chunk one warp needs to fill a device: an H100 or H200 has
// 132 multiprocessors holding 16 or more such warps each.
constexpr std::uint64_t kChunksToFillTheDevice = 2048;

// Where zarrkit's own kernels beat the host's threads (KernelUse::kAuto): reads of at least
// min_read_bytes_per_host_thread (decoded) for each host thread, in chunks of at most
// max_chunk_bytes (0: any size). Each half's rule comes from the reads that crossed over in
// its measurements (docs/gpu.md, "When zarrkit's kernels decode").
struct OwnKernelsRule {
  std::uint64_t min_read_bytes_per_host_thread = 0;
  std::uint64_t max_chunk_bytes = 0;
};
// Whether the kernels take part in a read: kOn always, kOff never, kAuto by `rule` unless
// the read asked for nvCOMP and nvCOMP takes it (`nvcomp_instead`: Config::gpu.nvcomp_decode
// and nvCOMP's half usable for the read).
bool own_kernels_take(KernelUse use, const DeviceStageContext& context, const OwnKernelsRule& rule,
                      bool nvcomp_instead);

// The device half of a bytes->bytes codec.
class DeviceBytesCodec : public DeviceCodec {
 public:
  // Loads the kernels of this half's own works ahead of the first read (warm_up_gpu).
  virtual void load_kernels() const {}
  // Whether this half takes part in reads of this kind (nvCOMP: only when switched on and
  // worth it). Default: always.
  virtual bool usable(const DeviceStageContext& context) const {
    (void)context;
    return true;
  }
  // The fewest chunks a batch should hold for this half to fill the device (halves that
  // decode a chunk per warp, or batch across chunks only, want many): reads that split into
  // small batches to overlap their host phases keep at least this many in each, within the
  // batch budget. Default: 1 (no wish).
  virtual std::uint64_t min_chunks_per_batch(const DeviceStageContext& context) const {
    (void)context;
    return 1;
  }
  // True when decoding only checks the bytes and narrows them to a part of themselves
  // (checksums): the stages after it can still plan from the host's view of the bytes.
  virtual bool narrows_only() const = 0;
  // Plans one chunk: adds its jobs and returns where the decoded bytes will be (a part of
  // the input, or the chunk's slot), or nullopt when this chunk must decode on the host (its
  // header is not one the device decodes exactly as the host codec would, or it is
  // malformed: the host then reports it). The result must satisfy context.output.
  virtual std::optional<ChunkBytes> plan(const ChunkStagePlan& chunk, const DeviceStageContext& context) const = 0;
};

// How the scatter reads a decoded chunk: where each array axis lies in the stored bytes and
// the byte-swap unit of each element.
struct StoredLayout {
  std::vector<std::size_t> axis_of;   // axis_of[k]: the stored axis holding array axis k
  ChunkSpec stored;                   // the spec of the stored array (after array->array codecs)
  std::uint32_t swap_unit = 1;        // bytes per unit to reverse while scattering (1: none)
};

// The device half of an array->array or array->bytes codec: it folds into the scatter, or
// (array->array codecs) decodes with a pass over the decoded chunk's elements in place.
class DeviceArrayCodec : public DeviceCodec {
 public:
  // Loads the kernels of this half's own works ahead of the first read (warm_up_gpu).
  virtual void load_kernels() const {}
  // Array->array codecs: `layout` describes the codec's encoded side (its axes as the
  // stored bytes hold them); makes it describe the decoded side. Array->bytes codecs:
  // `layout.stored` is the codec's input spec; sets the byte order. False when it cannot
  // fold for this spec.
  virtual bool fold(const ChunkSpec& decoded, StoredLayout& layout) const {
    (void)decoded;
    (void)layout;
    return false;
  }
  // True when this codec decodes chunks of `decoded` by a pass over their elements, in C
  // order and native byte order, in place (the encoded elements have the same size). The
  // chain asks only while nothing before it in decode order has folded anything (the bytes
  // are still the elements in C order, native order).
  virtual bool passes_over(const ChunkSpec& decoded) const {
    (void)decoded;
    return false;
  }
  // Adds the pass over chunk `chunk`'s elements at `where` to `works`; false when it
  // cannot take them there (then the chunk's device stages decode on the host and the pass
  // is planned again over their output, which lies at the start of the chunk's bytes).
  virtual bool plan_pass(std::uint32_t chunk, const ChunkBytes& where, const ChunkSpec& decoded,
                         BatchWorks& works) const {
    (void)chunk;
    (void)where;
    (void)decoded;
    (void)works;
    return false;
  }
};

// The built-in device halves (src/gpu/codecs/register.h), registered in the built-in codec
// registry by install_gpu_support.
void register_builtin_device_codecs(const CodecRegistry& registry);

}  // namespace zarrkit::gpu
