// The indexer: turns a user selection into a plan of per-chunk work.
//
// normalize_selection() resolves a Selection against an array shape with NumPy rules
// (ellipsis, missing trailing axes, negative indices, clamped slices, negative steps,
// index and boolean lists). ChunkPlan then splits every axis at chunk boundaries; the tasks
// of a request are the cartesian product of those per-axis pieces, in C order over the
// chunk grid, so each task is one chunk, decoded once.
//
// A strided axis (integer or slice) is split arithmetically, in O(1) per axis: task(i)
// assembles task i from the pieces of each axis without any storage sized by the number of
// chunks touched, so a huge request (or a hostile shape) cannot exhaust memory while
// planning. A list axis is grouped by chunk once, in O(n log n) time and O(n) memory for a
// list of n indices: its size is the caller's own list, never a size found in data.
//
// Inside one chunk, an axis's selected indices come as runs (AxisRun, core/chunk_task.h):
// arithmetic progressions in the chunk whose output positions are also a progression. A
// slice gives one run per chunk (its output walks backwards for a negative step); a list
// gives as few runs as its pattern allows (a sorted range is one run).
//
// Coordinates of the output: a read produces `output_shape` (integer axes dropped). Tasks
// describe their output region in "region" coordinates instead: one entry per array axis,
// with integer-selected axes kept at size 1. expand_to_region() turns a view of the output
// into a view with that shape, so every copy works on the array's own number of axes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/chunk_task.h"
#include "zarrkit/chunk_grid.h"
#include "zarrkit/ndbuffer.h"
#include "zarrkit/selection.h"

namespace zarrkit {

// One axis of a normalised selection.
struct AxisSelection {
  // Strided form (is_list false): `count` indices start, start + step, ...; step != 0 and
  // may be negative (then start is the highest index).
  std::uint64_t start = 0;
  std::int64_t step = 1;
  std::uint64_t count = 0;
  bool drops_axis = false;  // selected by an integer: count is 1, no output axis
  // List form: the selected indices in output order (count == indices.size()).
  bool is_list = false;
  std::vector<std::uint64_t> indices;
  bool operator==(const AxisSelection&) const = default;
};

struct NormalizedSelection {
  std::vector<AxisSelection> axes;  // one per array axis
  Shape output_shape;               // what a read returns (integer axes dropped)
  Shape region_shape;               // count per array axis (integer axes as 1)
};

// Resolves `selection` against `shape`. InvalidArgumentError for an out-of-bounds integer
// or list entry, a boolean list of the wrong length, too many indices, two ellipses, a
// zero step.
NormalizedSelection normalize_selection(const Selection& selection, const Shape& shape);

// The chunks one axis's selection touches, in increasing order.
class AxisSplit {
 public:
  // `grid` must cover `extent` (InvalidArgumentError).
  AxisSplit(const AxisSelection& axis, std::uint64_t extent, AxisGrid grid);
  std::uint64_t num_parts() const { return num_parts_; }
  AxisChunkPart part(std::uint64_t k) const;  // 0 <= k < num_parts()

 private:
  struct ListPart {
    std::uint64_t chunk_index;
    std::size_t first_run;
    std::size_t num_runs;
    bool covers_chunk;
  };
  void split_list(const std::vector<std::uint64_t>& indices);
  AxisChunkPart strided_part(std::uint64_t k) const;

  std::uint64_t extent_;
  AxisGrid grid_;
  std::uint64_t num_parts_ = 0;
  // Strided axes, as the increasing progression start, start + step, ... and whether the
  // output walks it backwards.
  std::uint64_t start_ = 0;
  std::uint64_t step_ = 1;
  std::uint64_t count_ = 0;
  bool reversed_ = false;
  std::uint64_t first_chunk_ = 0;
  bool one_index_per_chunk_ = false;  // step >= chunk size: every index in its own chunk
  // A rectilinear axis whose step skips some chunks and not others: the chunks touched.
  std::vector<std::uint64_t> touched_chunks_;
  // List axes.
  bool is_list_ = false;
  std::vector<AxisRun> runs_;
  std::vector<ListPart> list_parts_;
};

class ChunkPlan {
 public:
  // `chunk_shape` must have the array's rank and positive entries (InvalidArgumentError).
  ChunkPlan(const Shape& shape, const Shape& chunk_shape, const Selection& selection);
  // Over any chunk grid; `grid` must have the array's rank and cover its shape.
  ChunkPlan(const Shape& shape, const ChunkGrid& grid, const Selection& selection);
  // The plan keeps pointers into its own per-axis storage: it stays where it was built.
  ChunkPlan(const ChunkPlan&) = delete;
  ChunkPlan& operator=(const ChunkPlan&) = delete;

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

// Every part of AxisSplit(axis, extent, chunk_size), with their runs copied out; for tests.
struct AxisPartCopy {
  std::uint64_t chunk_index;
  std::vector<AxisRun> runs;
  bool covers_chunk;
  bool full_extent;
};
std::vector<AxisPartCopy> split_axis(const AxisSelection& axis, std::uint64_t extent,
                                     std::uint64_t chunk_size);

// A view of `view` (shape == selection.output_shape) with one axis per array axis: integer
// axes come back with size 1 and stride 0. InvalidArgumentError if the shape differs.
NDView expand_to_region(const NDView& view, const NormalizedSelection& selection);

// A view of `data` broadcast to `target` (NumPy rules: align trailing axes; size-1 axes and
// missing leading axes repeat; extra leading axes of size 1 are dropped).
// InvalidArgumentError if the shapes are not compatible.
NDView broadcast_to_shape(const NDView& data, const Shape& target);

// broadcast_to_shape to the selection's output shape, then expand_to_region. Lets a write
// take a single element, or a row for every row.
NDView broadcast_to_region(const NDView& data, const NormalizedSelection& selection);

}  // namespace zarrkit
