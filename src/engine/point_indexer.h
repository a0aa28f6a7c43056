// Point selections: coordinate selections (zarr's vindex) and boolean masks over the whole
// array. Each selected element is named by its own coordinates, so unlike ChunkPlan the
// plan holds the points themselves: it groups them by chunk (one sort), and each task is
// one chunk with the points that fall into it, decoded once.
//
// Memory is O(points x ndim) for the coordinates plus O(points) for the grouping. The point
// count comes from the caller's own arrays (their broadcast shape, or the number of true
// mask entries), never from stored data, and is checked before anything is allocated.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zarrkit/chunk_grid.h"
#include "zarrkit/ndbuffer.h"
#include "zarrkit/selection.h"

namespace zarrkit {

struct NormalizedPoints {
  Shape output_shape;            // what a read returns
  std::uint64_t num_points = 0;  // product of output_shape
  // coords[a][p]: the index along axis a of point p (p in C order of output_shape).
  std::vector<std::vector<std::uint64_t>> coords;
};

// Broadcasts the coordinate arrays (one per axis) and resolves negative indices.
// InvalidArgumentError: wrong number of arrays, values that do not match their shape,
// shapes that do not broadcast, out-of-bounds indices. ResourceExhaustedError: more points
// than can be held.
NormalizedPoints normalize_coordinates(const CoordinateSelection& selection, const Shape& shape);

// The true entries of a mask of the array's shape, in C order.
// InvalidArgumentError if the mask's shape differs from `shape` or its values do not match.
NormalizedPoints normalize_mask(const MaskSelection& mask, const Shape& shape);

struct PointTask {
  std::vector<std::uint64_t> chunk_coords;
  std::span<const std::uint64_t> points;  // point numbers in this chunk, increasing
};

class PointPlan {
 public:
  // `chunk_shape` must have the array's rank and positive entries (InvalidArgumentError).
  PointPlan(NormalizedPoints points, const Shape& shape, const Shape& chunk_shape);
  // Over any chunk grid; `grid` must have the array's rank and cover `shape`.
  PointPlan(NormalizedPoints points, const Shape& shape, const ChunkGrid& grid);
  PointPlan(const PointPlan&) = delete;
  PointPlan& operator=(const PointPlan&) = delete;

  const NormalizedPoints& points() const { return points_; }
  const Shape& output_shape() const { return points_.output_shape; }
  std::uint64_t num_tasks() const { return group_starts_.empty() ? 0 : group_starts_.size() - 1; }
  void task(std::uint64_t index, PointTask& out) const;
  // Offset in elements of point p inside its chunk (C order of the chunk).
  std::uint64_t offset_in_chunk(std::uint64_t p) const;

 private:
  std::uint64_t chunk_of(std::size_t axis, std::uint64_t p) const {
    return grid_.axis(axis).chunk_of(points_.coords[axis][static_cast<std::size_t>(p)]);
  }

  NormalizedPoints points_;
  ChunkGrid grid_;
  std::vector<std::uint64_t> chunk_strides_;  // elements, C order (regular grids)
  std::vector<std::uint64_t> order_;         // point numbers grouped by chunk, increasing within
  std::vector<std::size_t> group_starts_;    // task i is order_[group_starts_[i], group_starts_[i+1])
};

// Byte offset of element `index` (C order over `shape`) in a view with `byte_strides`.
std::int64_t strided_offset(std::uint64_t index, const Shape& shape, std::span<const std::int64_t> byte_strides);

}  // namespace zarrkit
