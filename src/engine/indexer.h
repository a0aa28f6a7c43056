// The indexer: turns a user selection into a plan of per-chunk work.
//
// normalize_selection() resolves a Selection against an array shape with NumPy rules
// (ellipsis, missing trailing axes, negative indices, clamped slices). ChunkPlan then
// splits every axis at chunk boundaries; the tasks of a request are the cartesian product
// of those per-axis pieces, in C order over the chunk grid. Planning costs O(1) per axis:
// the pieces of an axis follow arithmetically from its selection and chunk size, and
// task(i) assembles task i from them. Nothing is sized by the number of chunks a request
// touches, so a huge request (or a hostile shape) cannot exhaust memory while planning.
//
// Coordinates of the output: a read produces `output_shape` (integer axes dropped). Tasks
// describe their output region in "region" coordinates instead: one entry per array axis,
// with integer-selected axes kept at size 1. expand_to_region() turns a view of the output
// into a view with that shape, so every copy works on the array's own number of axes.
#pragma once

#include <cstdint>
#include <vector>

#include "zarrkit/ndbuffer.h"
#include "zarrkit/selection.h"

namespace zarrkit {

// One axis of a normalised selection: indices start, start + step, ... (count of them).
struct AxisSelection {
  std::uint64_t start = 0;
  std::uint64_t step = 1;  // always > 0
  std::uint64_t count = 0;
  bool drops_axis = false;  // selected by an integer: count is 1, no output axis
  bool operator==(const AxisSelection&) const = default;
};

struct NormalizedSelection {
  std::vector<AxisSelection> axes;  // one per array axis
  Shape output_shape;               // what a read returns (integer axes dropped)
  Shape region_shape;               // count per array axis (integer axes as 1)
};

// Resolves `selection` against `shape`. Errors:
//   InvalidArgumentError: out-of-bounds integer, too many indices, two ellipses, step 0;
//   UnsupportedError: negative steps.
NormalizedSelection normalize_selection(const Selection& selection, const Shape& shape);

// Selected indices inside one chunk, in chunk coordinates: start, start + step, ... < stop.
// `stop` is tight: start + (count - 1) * step + 1.
struct ChunkAxisSelection {
  std::uint64_t start = 0;
  std::uint64_t stop = 0;
  std::uint64_t step = 1;
  std::uint64_t count = 0;
  bool operator==(const ChunkAxisSelection&) const = default;
};

// Where one chunk's selected indices go along an axis of the region.
struct OutputRange {
  std::uint64_t start = 0;
  std::uint64_t count = 0;
  bool operator==(const OutputRange&) const = default;
};

// The piece of one axis's selection that falls into one chunk.
struct AxisChunkPart {
  std::uint64_t chunk_index = 0;
  ChunkAxisSelection in_chunk;
  OutputRange out;
  // Every index of the chunk that lies inside the array is selected (step 1, from 0 to
  // the chunk's end or the array's edge, whichever comes first).
  bool covers_chunk = false;
  // The chunk lies wholly inside the array along this axis (not a ragged edge chunk).
  bool full_extent = false;
};

struct ChunkTask {
  std::vector<std::uint64_t> chunk_coords;
  std::vector<ChunkAxisSelection> chunk_selection;  // per array axis
  std::vector<OutputRange> output_selection;        // per array axis, region coordinates
  // Every element of the chunk that lies inside the array is selected: a write need not
  // read the old chunk.
  bool covers_whole_chunk = false;
  // covers_whole_chunk, and the chunk is not a ragged edge chunk: the selected region is
  // the entire decoded chunk, so a read can copy it in one piece.
  bool is_entire_chunk = false;
};

// The chunks one axis's selection touches, in increasing order, computed on demand.
class AxisSplit {
 public:
  AxisSplit(const AxisSelection& axis, std::uint64_t extent, std::uint64_t chunk_size);
  std::uint64_t num_parts() const { return num_parts_; }
  AxisChunkPart part(std::uint64_t k) const;  // 0 <= k < num_parts()

 private:
  AxisSelection axis_;
  std::uint64_t extent_;
  std::uint64_t chunk_size_;
  std::uint64_t first_chunk_ = 0;
  std::uint64_t num_parts_ = 0;
  bool one_index_per_chunk_ = false;  // step >= chunk size: every index in its own chunk
};

class ChunkPlan {
 public:
  // `chunk_shape` must have the array's rank and positive entries (InvalidArgumentError).
  ChunkPlan(const Shape& shape, const Shape& chunk_shape, const Selection& selection);

  const NormalizedSelection& selection() const { return selection_; }
  const Shape& output_shape() const { return selection_.output_shape; }
  const Shape& region_shape() const { return selection_.region_shape; }
  const AxisSplit& axis_split(std::size_t axis) const { return splits_[axis]; }

  // Number of chunks the selection touches (0 when it selects nothing).
  std::uint64_t num_tasks() const { return num_tasks_; }
  // Task `index` (0 <= index < num_tasks()), in C order over the touched chunks.
  ChunkTask task(std::uint64_t index) const;
  // Same, reusing `out`'s storage (the hot path of a request with many small chunks).
  void task(std::uint64_t index, ChunkTask& out) const;
  // Every task; for tests and small requests.
  std::vector<ChunkTask> tasks() const;

 private:
  NormalizedSelection selection_;
  std::vector<AxisSplit> splits_;
  std::uint64_t num_tasks_ = 0;
};

// Every part of AxisSplit(axis, extent, chunk_size), materialised; for tests.
std::vector<AxisChunkPart> split_axis(const AxisSelection& axis, std::uint64_t extent,
                                      std::uint64_t chunk_size);

// A view of `view` (shape == selection.output_shape) with one axis per array axis: integer
// axes come back with size 1 and stride 0. InvalidArgumentError if the shape differs.
NDView expand_to_region(const NDView& view, const NormalizedSelection& selection);

// A view of `data` broadcast (NumPy rules: align trailing axes; size-1 axes and missing
// leading axes repeat) to the selection's region. Lets a write take a single element, or
// a row for every row. InvalidArgumentError if the shapes are not compatible.
NDView broadcast_to_region(const NDView& data, const NormalizedSelection& selection);

}  // namespace zarrkit
