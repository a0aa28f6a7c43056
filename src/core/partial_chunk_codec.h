// A chunk whose encoded form can be read and written in part: an array->bytes codec that
// stores a chunk as separately encoded inner chunks behind an index (sharding_indexed),
// prepared for one chunk spec (ArrayToBytesCodec::prepare_partial). PreparedChain::partial()
// hands it out when the chain is that codec alone; chains with codecs around it (transpose
// before, a checksum after) read and write whole chunks.
//
// The engine reads and writes a chunk task through it (read, write) without knowing which
// codec it is. Executors that decode in batches themselves (the GPU reader) ask it instead
// where a task's inner chunks lie (locate), then fetch, decode and place each one: the
// inner chain decodes it, and where that chain has a partial codec of its own (nested
// sharding) the inner chunk is located in turn.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/block_runs.h"
#include "core/chunk_cache.h"
#include "core/chunk_task.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/ndbuffer.h"
#include "zarrkit/store.h"

namespace zarrkit {

// The settings partial reads and writes take from Config (per thread: read them on the
// thread that starts the request, with current()).
struct PartialIoSettings {
  std::uint64_t coalesce_gap = 0;       // Config::shard_coalesce_gap_bytes
  std::uint64_t read_window = 4 << 20;  // Config::shard_read_window_bytes
  bool write_empty_chunks = false;      // Config::write_empty_chunks

  static PartialIoSettings current();
};

// What every chunk task of one request shares.
struct PartialRequest {
  Store& store;
  const Shape& array_shape;  // edge chunks hold positions past it
  // Reads: the caller's output; writes: its input. One axis per array axis (region
  // coordinates, see indexer.h), host memory.
  const NDView& region;
  PartialIoSettings settings;
  // Reads: where set, inner chunks are looked for in this cache first, and those decoded
  // are put there (keyed by the chunk's store key and their ordinal in its index).
  ChunkCacheView cache{};
};

// Where the encoded bytes of a chunk are, for locate: the value of `key`, or a byte range
// of it (a nested shard: an inner chunk of the shard around it), in memory when fetched.
struct ChunkSource {
  Store* store = nullptr;  // read from with ranged gets where `bytes` is not given
  std::string_view key;
  std::uint64_t base = 0;              // where the chunk starts in the value
  std::optional<std::uint64_t> size;   // its size, where known (a fetched value, a nested shard)
  std::optional<ByteView> bytes;       // the chunk's bytes, [base, base + size) of the value
};

// Where one inner chunk's encoded bytes lie: [offset, offset + nbytes) of the store value
// (never relative to a nested shard). An inner chunk that is not stored reads as the fill
// value. Entries were checked against the chunk's size where locate knew it (its bytes or
// its size given); after a ranged read of the index alone, a fetch of the range must check
// that it got nbytes bytes (the value may have changed since).
struct InnerChunkBytes {
  bool stored = false;
  std::uint64_t offset = 0;
  std::uint64_t nbytes = 0;
};

// What locate finds for one chunk: the inner chunks the task touches, in C order of the
// inner chunk grid (selection.chunks, with their runs into the caller's region and their
// ordinals), where each one is stored (bytes[i] for selection.chunks[i]) and the chain that
// decodes them. When the chunk itself is not stored, `stored` is false and every inner
// chunk reads as the fill value.
struct LocatedChunks {
  bool stored = false;
  InnerChunkSelection selection;
  std::vector<InnerChunkBytes> bytes;
  std::shared_ptr<const PreparedChain> inner;
};

class PartialChunkCodec {
 public:
  virtual ~PartialChunkCodec() = default;

  // The chain each inner chunk is encoded with, prepared for the inner chunk's spec. Its
  // own partial() is set where inner chunks can be read in part too (nested sharding).
  virtual const std::shared_ptr<const PreparedChain>& inner_chain() const = 0;

  // Reads the task's elements of the chunk stored at `key` into request.region; a chunk
  // or inner chunk that is not stored reads as the fill value.
  virtual void read(const PartialRequest& request, const std::string& key, const ChunkTask& task) const = 0;
  // The same from request.cache alone, when it holds every inner chunk the task touches;
  // otherwise false, having written nothing and read nothing from the store.
  virtual bool read_from_cache(const PartialRequest& request, const std::string& key, const ChunkTask& task) const = 0;
  // Writes the task's elements of request.region (the input) into the chunk at `key`,
  // keeping the rest of it; a chunk left without inner chunks is deleted.
  virtual void write(const PartialRequest& request, const std::string& key, const ChunkTask& task) const = 0;

  // How many inner chunks one chunk holds.
  virtual std::uint64_t num_inner_chunks() const = 0;
  // The inner chunks that `runs` touch (see locate), without reading anything: lets a
  // caller choose between fetching the whole chunk and letting locate read its index.
  virtual InnerChunkSelection select(const BlockRuns& runs, std::span<const std::uint64_t> valid) const = 0;

  // Finds the inner chunks that `runs` (per axis, positions of the chunk to region
  // positions; `valid` per axis: how much of the chunk lies inside the array) touch and
  // where they are stored: reads the chunk's index from `source` (one ranged get where its
  // bytes are not at hand) and validates it. Reads nothing else.
  virtual LocatedChunks locate(const ChunkSource& source, const BlockRuns& runs,
                               std::span<const std::uint64_t> valid) const = 0;
  // The same for a chunk task of an array of `array_shape`.
  LocatedChunks locate_task(const ChunkSource& source, const ChunkTask& task, const Shape& array_shape) const;

  // The shape of the chunks this codec was prepared for.
  virtual const Shape& chunk_shape() const = 0;
};

// Per axis, the runs a chunk task selects its chunk by.
BlockRuns task_runs(const ChunkTask& task);
// Per axis, how many positions of the task's chunk (of `chunk_shape`) lie inside an array
// of `array_shape`.
Shape chunk_valid_extent(const ChunkTask& task, const Shape& chunk_shape, const Shape& array_shape);

}  // namespace zarrkit
