#include "engine/point_indexer.h"

#include <algorithm>
#include <limits>
#include <new>
#include <utility>

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using Wide = __int128;

std::uint64_t normalize_index(std::int64_t index, std::uint64_t extent, std::size_t axis) {
  Wide i = index;
  if (i < 0) i += static_cast<Wide>(extent);
  if (i < 0 || i >= static_cast<Wide>(extent)) {
    fail_invalid("index {} is out of bounds for axis {} with size {}", index, axis, extent);
  }
  return static_cast<std::uint64_t>(i);
}

// Product of `shape`, nullopt on overflow.
std::optional<std::uint64_t> product(const Shape& shape) {
  std::optional<std::uint64_t> n = 1;
  for (const auto d : shape) n = n ? try_mul(*n, d) : std::nullopt;
  return n;
}

std::string shape_list(const CoordinateSelection& selection) {
  std::string out;
  for (const auto& c : selection) out += fmt::format("{}[{}]", out.empty() ? "" : ", ", fmt::join(c.shape, ", "));
  return out;
}

// NumPy broadcasting of the coordinate arrays' shapes (trailing axes aligned).
Shape broadcast_shapes(const CoordinateSelection& selection) {
  std::size_t ndim = 0;
  for (const auto& c : selection) ndim = std::max(ndim, c.shape.size());
  Shape out(ndim, 1);
  for (const auto& c : selection) {
    const std::size_t offset = ndim - c.shape.size();
    for (std::size_t i = 0; i < c.shape.size(); ++i) {
      std::uint64_t& o = out[offset + i];
      const std::uint64_t d = c.shape[i];
      if (d == o || d == 1) continue;
      if (o != 1) {
        fail_invalid("shape mismatch: the coordinate arrays could not be broadcast together with shapes {}",
                     shape_list(selection));
      }
      o = d;
    }
  }
  return out;
}

// Room for `points` points of `ndim` coordinates, or ResourceExhaustedError.
void reserve_points(NormalizedPoints& out, std::uint64_t points, std::size_t ndim) {
  const auto bytes = try_mul(points, std::max<std::uint64_t>(ndim, 1) * 3 * sizeof(std::uint64_t));
  if (!bytes || *bytes > static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max())) {
    fail_resource("a selection of {} points needs more memory than can be allocated", points);
  }
  try {
    out.coords.assign(ndim, {});
    for (auto& column : out.coords) column.reserve(static_cast<std::size_t>(points));
  } catch (const std::bad_alloc&) {
    fail_resource("out of memory holding a selection of {} points", points);
  }
}

}  // namespace

NormalizedPoints normalize_coordinates(const CoordinateSelection& selection, const Shape& shape) {
  const std::size_t ndim = shape.size();
  if (selection.size() != ndim) {
    fail_invalid("a coordinate selection needs one index array per axis: the array has {} axes, {} arrays "
                 "were given", ndim, selection.size());
  }
  for (std::size_t a = 0; a < ndim; ++a) {
    const auto& c = selection[a];
    const auto n = product(c.shape);
    if (!n || *n != c.values.size()) {
      fail_invalid("the coordinate array for axis {} has shape [{}] but {} values", a, fmt::join(c.shape, ", "),
                   c.values.size());
    }
  }
  NormalizedPoints out;
  out.output_shape = broadcast_shapes(selection);
  const auto num_points = product(out.output_shape);
  if (!num_points) fail_resource("the coordinate arrays broadcast to [{}]: too many points", fmt::join(out.output_shape, ", "));
  out.num_points = *num_points;
  reserve_points(out, out.num_points, ndim);
  const Shape& target = out.output_shape;
  const std::size_t out_ndim = target.size();
  for (std::size_t a = 0; a < ndim; ++a) {
    const CoordinateArray& c = selection[a];
    // Element strides of this array along the broadcast axes (0 where it repeats).
    std::vector<std::uint64_t> strides(out_ndim, 0);
    std::uint64_t stride = 1;
    const std::size_t offset = out_ndim - c.shape.size();
    for (std::size_t i = c.shape.size(); i-- > 0;) {
      strides[offset + i] = c.shape[i] == 1 ? 0 : stride;
      stride *= c.shape[i];
    }
    auto& column = out.coords[a];
    std::vector<std::uint64_t> index(out_ndim, 0);
    std::uint64_t position = 0;
    for (std::uint64_t p = 0; p < out.num_points; ++p) {
      column.push_back(normalize_index(c.values[static_cast<std::size_t>(position)], shape[a], a));
      for (std::size_t d = out_ndim; d-- > 0;) {  // odometer, last axis fastest
        position += strides[d];
        if (++index[d] < target[d]) break;
        position -= strides[d] * target[d];
        index[d] = 0;
      }
    }
  }
  return out;
}

NormalizedPoints normalize_mask(const MaskSelection& mask, const Shape& shape) {
  if (mask.shape != shape) {
    fail_invalid("the mask has shape [{}], the array has shape [{}]", fmt::join(mask.shape, ", "),
                 fmt::join(shape, ", "));
  }
  const auto n = product(mask.shape);
  if (!n || *n != mask.mask.size()) {
    fail_invalid("the mask has shape [{}] but {} values", fmt::join(mask.shape, ", "), mask.mask.size());
  }
  NormalizedPoints out;
  out.num_points = static_cast<std::uint64_t>(std::count_if(mask.mask.begin(), mask.mask.end(),
                                                            [](std::uint8_t v) { return v != 0; }));
  out.output_shape = {out.num_points};
  reserve_points(out, out.num_points, shape.size());
  std::vector<std::uint64_t> index(shape.size(), 0);
  for (std::size_t k = 0; k < mask.mask.size(); ++k) {
    if (mask.mask[k] != 0) {
      for (std::size_t a = 0; a < shape.size(); ++a) out.coords[a].push_back(index[a]);
    }
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

namespace {
ChunkGrid checked_regular_grid(const Shape& shape, const Shape& chunk_shape) {
  if (chunk_shape.size() != shape.size()) {
    fail_invalid("chunk shape [{}] does not match array shape [{}]", fmt::join(chunk_shape, ", "),
                 fmt::join(shape, ", "));
  }
  for (std::size_t a = 0; a < shape.size(); ++a) {
    if (chunk_shape[a] == 0) fail_invalid("chunk shape has a zero on axis {}", a);
  }
  return ChunkGrid::regular(chunk_shape);
}
}  // namespace

PointPlan::PointPlan(NormalizedPoints points, const Shape& shape, const Shape& chunk_shape)
    : PointPlan(std::move(points), shape, checked_regular_grid(shape, chunk_shape)) {}

PointPlan::PointPlan(NormalizedPoints points, const Shape& shape, const ChunkGrid& grid)
    : points_(std::move(points)), grid_(grid) {
  const std::size_t ndim = shape.size();
  grid_.check_covers(shape);
  if (grid_.is_regular()) {
    chunk_strides_.assign(ndim, 1);
    for (std::size_t a = ndim; a-- > 1;) chunk_strides_[a - 1] = chunk_strides_[a] * grid_.axis(a).regular_size();
  }
  const auto n = to_size(points_.num_points, "number of points");
  if (n == 0) return;

  // Group by chunk: sort by the chunk's C-order number when the grid's size fits 64 bits,
  // else one stable sort per axis, last axis first. Either way points of one chunk keep
  // their increasing order, which is what makes a repeated point's last value win.
  const Shape chunks_per_axis = grid_.grid_shape(shape);
  std::optional<std::uint64_t> grid_size = 1;
  for (std::size_t a = 0; a < ndim && grid_size; ++a) grid_size = try_mul(*grid_size, chunks_per_axis[a]);
  order_.resize(n);
  if (grid_size) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> keyed(n);
    for (std::size_t p = 0; p < n; ++p) {
      std::uint64_t id = 0;
      for (std::size_t a = 0; a < ndim; ++a) id = id * chunks_per_axis[a] + chunk_of(a, p);
      keyed[p] = {id, p};
    }
    if (!std::is_sorted(keyed.begin(), keyed.end())) std::sort(keyed.begin(), keyed.end());
    for (std::size_t k = 0; k < n; ++k) order_[k] = keyed[k].second;
  } else {
    for (std::size_t p = 0; p < n; ++p) order_[p] = p;
    for (std::size_t a = ndim; a-- > 0;) {
      std::stable_sort(order_.begin(), order_.end(),
                       [&](std::uint64_t x, std::uint64_t y) { return chunk_of(a, x) < chunk_of(a, y); });
    }
  }
  group_starts_.push_back(0);
  for (std::size_t k = 1; k < n; ++k) {
    for (std::size_t a = 0; a < ndim; ++a) {
      if (chunk_of(a, order_[k]) != chunk_of(a, order_[k - 1])) {
        group_starts_.push_back(k);
        break;
      }
    }
  }
  group_starts_.push_back(n);
}

void PointPlan::task(std::uint64_t index, PointTask& out) const {
  if (index >= num_tasks()) throw InternalError(fmt::format("point task {} of {} requested", index, num_tasks()));
  const std::size_t begin = group_starts_[static_cast<std::size_t>(index)];
  const std::size_t end = group_starts_[static_cast<std::size_t>(index) + 1];
  out.points = std::span<const std::uint64_t>(order_.data() + begin, end - begin);
  out.chunk_coords.resize(grid_.ndim());
  for (std::size_t a = 0; a < grid_.ndim(); ++a) out.chunk_coords[a] = chunk_of(a, out.points[0]);
}

std::uint64_t PointPlan::offset_in_chunk(std::uint64_t p) const {
  std::uint64_t offset = 0;
  if (!chunk_strides_.empty() || grid_.ndim() == 0) {
    for (std::size_t a = 0; a < grid_.ndim(); ++a) {
      offset += points_.coords[a][static_cast<std::size_t>(p)] % grid_.axis(a).regular_size() * chunk_strides_[a];
    }
    return offset;
  }
  // A rectilinear grid: the strides are those of the point's own chunk.
  std::uint64_t stride = 1;
  for (std::size_t a = grid_.ndim(); a-- > 0;) {
    const AxisGrid& axis = grid_.axis(a);
    const std::uint64_t coord = points_.coords[a][static_cast<std::size_t>(p)];
    const std::uint64_t chunk = axis.chunk_of(coord);
    offset += (coord - axis.origin(chunk)) * stride;
    stride *= axis.size(chunk);
  }
  return offset;
}

std::int64_t strided_offset(std::uint64_t index, const Shape& shape, std::span<const std::int64_t> byte_strides) {
  std::int64_t offset = 0;
  for (std::size_t d = shape.size(); d-- > 0;) {
    offset += static_cast<std::int64_t>(index % shape[d]) * byte_strides[d];
    index /= shape[d];
  }
  return offset;
}

}  // namespace zarrkit
