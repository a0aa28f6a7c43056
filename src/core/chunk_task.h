// One chunk's share of a request: per axis, the runs of positions in the chunk that a
// selection takes, and where they go in the caller's region. The indexer (engine/indexer.h)
// makes these; the engine, the codecs that read and write chunks in part
// (core/partial_chunk_codec.h) and the copies between chunks and regions take them.
//
// Coordinates of the region: one entry per array axis, with integer-selected axes kept at
// size 1 (see expand_to_region in engine/indexer.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace zarrkit {

// In-chunk indices chunk_start + k * chunk_step go to region positions
// out_start + k * out_step along one axis, for k < count.
struct AxisRun {
  std::uint64_t chunk_start = 0;
  // > 0: runs walk the chunk forwards. A run of one element has steps 1, so that byte strides
  // derived from them never overflow.
  std::uint64_t chunk_step = 1;
  std::uint64_t count = 0;       // > 0
  std::uint64_t out_start = 0;
  std::int64_t out_step = 1;  // != 0
  bool operator==(const AxisRun&) const = default;
};

// The piece of one axis's selection that falls into one chunk.
struct AxisChunkPart {
  std::uint64_t chunk_index = 0;
  // The chunk's first position along this axis (chunk_index times the chunk size on a
  // regular grid; a rectilinear grid's chunks differ in size).
  std::uint64_t chunk_origin = 0;
  // Every index of the chunk that lies inside the array is selected (at least once).
  bool covers_chunk = false;
  // The chunk lies wholly inside the array along this axis (not a ragged edge chunk).
  bool full_extent = false;

  // The runs, in the order a write must apply them (a repeated index: the one that comes
  // last in the output is applied last).
  std::span<const AxisRun> runs() const {
    return stored_runs_ != nullptr ? std::span<const AxisRun>(stored_runs_, num_stored_runs_)
                                   : std::span<const AxisRun>(&single_run_, 1);
  }
  // Number of selected positions (with repeats) in this chunk.
  std::uint64_t num_selected() const {
    std::uint64_t n = 0;
    for (const AxisRun& r : runs()) n += r.count;
    return n;
  }

 private:
  friend class AxisSplit;
  AxisRun single_run_;                     // strided axes: their only run
  const AxisRun* stored_runs_ = nullptr;   // list axes: runs kept by the AxisSplit
  std::size_t num_stored_runs_ = 0;
};

struct ChunkTask {
  std::vector<std::uint64_t> chunk_coords;
  std::vector<AxisChunkPart> axes;  // per array axis
  // Every element of the chunk that lies inside the array is selected: a write need not
  // read the old chunk.
  bool covers_whole_chunk = false;
  // covers_whole_chunk, the chunk is not a ragged edge chunk, and every axis is one run
  // in order (chunk index i goes to out_start + i): the selected region is the entire
  // decoded chunk in its own order, so a read can copy it in one piece.
  bool is_entire_chunk = false;
};

}  // namespace zarrkit
