// The chunk grid of an array: where each chunk starts and how large it is, per axis.
//
// Two kinds behind one interface. A regular axis repeats one chunk size forever. An
// explicit axis (the v3 "rectilinear" grid) lists its chunk sizes as runs of equal sizes,
// as its metadata encodes them ([size, count] pairs and bare sizes): the runs are kept as
// runs, so a run of a billion chunks costs one entry, and every lookup is a binary search
// over the runs. The sizes of an explicit axis may cover more than the array's extent
// (the last chunks then lie partly or wholly outside it); they may not cover less.
//
// A chunk's size here is its full (codec) size: an edge chunk that the array's extent cuts
// is still encoded at this size.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "zarrkit/ndbuffer.h"

namespace zarrkit {

// `count` consecutive chunks of `size` elements each along one axis.
struct ChunkRun {
  std::uint64_t size = 0;
  std::uint64_t count = 0;
  bool operator==(const ChunkRun&) const = default;
};

class AxisGrid {
 public:
  // Chunks of `size` (> 0) without end.
  static AxisGrid regular(std::uint64_t size);
  // Chunks as `runs` list them; adjacent runs of one size merge. InvalidArgumentError for
  // no runs, a zero size or count, or sizes whose sum overflows 64 bits.
  static AxisGrid explicit_runs(std::span<const ChunkRun> runs);

  bool is_regular() const { return runs_ == nullptr; }
  // The regular size (is_regular()).
  std::uint64_t regular_size() const { return size_; }
  // The runs of an explicit axis (empty for a regular one).
  std::span<const ChunkRun> runs() const;

  // How many positions the chunks cover: the sum of the sizes, or UINT64_MAX (regular).
  std::uint64_t covered() const;
  // Number of chunks the axis lists (UINT64_MAX for a regular axis).
  std::uint64_t listed_chunks() const;
  // The largest and smallest chunk size.
  std::uint64_t largest() const;
  std::uint64_t smallest() const;

  // The chunk holding `coord` (coord < covered()).
  std::uint64_t chunk_of(std::uint64_t coord) const;
  // First position of chunk `chunk` and its size (chunk < listed_chunks()).
  std::uint64_t origin(std::uint64_t chunk) const;
  std::uint64_t size(std::uint64_t chunk) const;
  // How many chunks overlap [0, extent) (extent <= covered()).
  std::uint64_t num_chunks(std::uint64_t extent) const;

  // The same axis with chunks appended so that it covers `extent`: an explicit axis that
  // covers less gains one chunk of the difference (what zarr-python does on a resize).
  AxisGrid covering(std::uint64_t extent) const;

  bool operator==(const AxisGrid& other) const;

 private:
  struct Run {
    std::uint64_t size;
    std::uint64_t count;
    std::uint64_t first_chunk;  // index of the run's first chunk
    std::uint64_t origin;       // position of the run's first chunk
  };
  const Run& run_of_chunk(std::uint64_t chunk) const;

  std::uint64_t size_ = 1;  // regular size
  std::shared_ptr<const std::vector<Run>> runs_;  // explicit axes only
  std::shared_ptr<const std::vector<ChunkRun>> plain_runs_;  // the same runs, as given out
};

class ChunkGrid {
 public:
  ChunkGrid() = default;
  explicit ChunkGrid(std::vector<AxisGrid> axes) : axes_(std::move(axes)) {}
  static ChunkGrid regular(const Shape& chunk_shape);

  std::size_t ndim() const { return axes_.size(); }
  const AxisGrid& axis(std::size_t a) const { return axes_[a]; }
  const std::vector<AxisGrid>& axes() const { return axes_; }
  // Every axis regular.
  bool is_regular() const;

  // Chunks per axis over an array of `shape`.
  Shape grid_shape(const Shape& shape) const;
  // Full size and first position of the chunk at `chunk` (a grid index).
  Shape chunk_shape(std::span<const std::uint64_t> chunk) const;
  Shape chunk_origin(std::span<const std::uint64_t> chunk) const;
  // The largest chunk per axis: what any one chunk's buffer may need.
  Shape largest_chunk() const;
  // InvalidArgumentError unless the grid has shape's rank and covers it on every axis.
  void check_covers(const Shape& shape) const;

  bool operator==(const ChunkGrid&) const = default;

 private:
  std::vector<AxisGrid> axes_;
};

}  // namespace zarrkit
