// A chunk whose encoded form can be read and written in part: an array->bytes codec that
// stores a chunk as separately encoded inner chunks behind an index (sharding_indexed),
// prepared for one chunk spec (ArrayToBytesCodec::prepare_partial). PreparedChain::partial()
// hands it out when the chain is that codec alone; chains with codecs around it (transpose
// before, a checksum after) read and write whole chunks.
//
// The engine reads and writes a chunk task through it (read, write) without knowing which
// codec it is.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/block_runs.h"
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
  // Writes the task's elements of request.region (the input) into the chunk at `key`,
  // keeping the rest of it; a chunk left without inner chunks is deleted.
  virtual void write(const PartialRequest& request, const std::string& key, const ChunkTask& task) const = 0;

  // The shape of the chunks this codec was prepared for.
  virtual const Shape& chunk_shape() const = 0;
};

// Per axis, the runs a chunk task selects its chunk by.
BlockRuns task_runs(const ChunkTask& task);
// Per axis, how many positions of the task's chunk (of `chunk_shape`) lie inside an array
// of `array_shape`.
Shape chunk_valid_extent(const ChunkTask& task, const Shape& chunk_shape, const Shape& array_shape);

}  // namespace zarrkit
