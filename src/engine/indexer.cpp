#include "engine/indexer.h"

#include <algorithm>
#include <limits>

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

// Slice bounds are int64 and extents uint64: 128-bit arithmetic keeps every intermediate
// exact (start + extent cannot overflow, whatever the caller passed).
using Wide = __int128;

std::uint64_t clamp_slice_bound(std::int64_t bound, std::uint64_t extent) {
  Wide b = bound;
  if (b < 0) b += static_cast<Wide>(extent);
  if (b < 0) return 0;
  if (b > static_cast<Wide>(extent)) return extent;
  return static_cast<std::uint64_t>(b);
}

AxisSelection normalize_slice(const Slice& slice, std::uint64_t extent, std::size_t axis) {
  if (slice.step == 0) fail_invalid("slice step cannot be zero (axis {})", axis);
  if (slice.step < 0) {
    fail_unsupported("negative steps are not supported yet (step {} on axis {})", slice.step, axis);
  }
  AxisSelection out;
  out.step = static_cast<std::uint64_t>(slice.step);
  out.start = slice.start ? clamp_slice_bound(*slice.start, extent) : 0;
  const std::uint64_t stop = slice.stop ? clamp_slice_bound(*slice.stop, extent) : extent;
  out.count = stop > out.start ? (stop - out.start - 1) / out.step + 1 : 0;
  if (out.count == 0) out.start = 0;  // one canonical form for an empty selection
  return out;
}

AxisSelection normalize_integer(std::int64_t index, std::uint64_t extent, std::size_t axis) {
  Wide i = index;
  if (i < 0) i += static_cast<Wide>(extent);
  if (i < 0 || i >= static_cast<Wide>(extent)) {
    fail_invalid("index {} is out of bounds for axis {} with size {}", index, axis, extent);
  }
  return {static_cast<std::uint64_t>(i), 1, 1, true};
}

}  // namespace

NormalizedSelection normalize_selection(const Selection& selection, const Shape& shape) {
  const std::size_t ndim = shape.size();
  std::size_t ellipses = 0;
  for (const auto& s : selection) ellipses += std::holds_alternative<Ellipsis>(s);
  if (ellipses > 1) fail_invalid("an index can only have a single ellipsis ('...')");
  const std::size_t indexed = selection.size() - ellipses;
  if (indexed > ndim) {
    fail_invalid("too many indices for array: array is {}-dimensional, but {} were indexed", ndim,
                 indexed);
  }

  NormalizedSelection out;
  out.axes.reserve(ndim);
  for (const auto& selector : selection) {
    if (std::holds_alternative<Ellipsis>(selector)) {
      // The ellipsis stands for as many full slices as make the count right.
      for (std::size_t k = 0; k < ndim - indexed; ++k) {
        const std::size_t axis = out.axes.size();
        out.axes.push_back(normalize_slice(Slice::all(), shape[axis], axis));
      }
      continue;
    }
    const std::size_t axis = out.axes.size();
    if (const auto* index = std::get_if<std::int64_t>(&selector)) {
      out.axes.push_back(normalize_integer(*index, shape[axis], axis));
    } else {
      out.axes.push_back(normalize_slice(std::get<Slice>(selector), shape[axis], axis));
    }
  }
  while (out.axes.size() < ndim) {  // missing trailing axes mean ":"
    const std::size_t axis = out.axes.size();
    out.axes.push_back(normalize_slice(Slice::all(), shape[axis], axis));
  }

  out.region_shape.reserve(ndim);
  for (const auto& a : out.axes) {
    out.region_shape.push_back(a.count);
    if (!a.drops_axis) out.output_shape.push_back(a.count);
  }
  return out;
}

AxisSplit::AxisSplit(const AxisSelection& axis, std::uint64_t extent, std::uint64_t chunk_size)
    : axis_(axis), extent_(extent), chunk_size_(chunk_size) {
  if (chunk_size == 0) fail_invalid("chunk size must be positive");
  if (axis.count == 0) return;
  // Every selected index is below `extent`, which fits in uint64: nothing below overflows.
  const std::uint64_t last_index = axis.start + (axis.count - 1) * axis.step;
  first_chunk_ = axis.start / chunk_size;
  // A step of at least the chunk size puts each index in a chunk of its own; a smaller one
  // cannot jump over a chunk, so every chunk from the first to the last is touched.
  one_index_per_chunk_ = axis.step >= chunk_size;
  num_parts_ = one_index_per_chunk_ ? axis.count : last_index / chunk_size - first_chunk_ + 1;
}

AxisChunkPart AxisSplit::part(std::uint64_t k) const {
  const std::uint64_t chunk =
      one_index_per_chunk_ ? (axis_.start + k * axis_.step) / chunk_size_ : first_chunk_ + k;
  const std::uint64_t chunk_begin = chunk * chunk_size_;
  const std::uint64_t chunk_end = chunk_begin + std::min(chunk_size_, extent_ - chunk_begin);
  // Positions in the selection (= output indices) of the first and last index in the chunk.
  const std::uint64_t first =
      chunk_begin <= axis_.start ? 0 : (chunk_begin - axis_.start - 1) / axis_.step + 1;
  const std::uint64_t last = std::min(axis_.count - 1, (chunk_end - 1 - axis_.start) / axis_.step);
  const std::uint64_t n = last - first + 1;

  AxisChunkPart out;
  out.chunk_index = chunk;
  out.in_chunk.start = axis_.start + first * axis_.step - chunk_begin;
  out.in_chunk.step = axis_.step;
  out.in_chunk.count = n;
  out.in_chunk.stop = out.in_chunk.start + (n - 1) * axis_.step + 1;
  out.out = {first, n};
  out.full_extent = chunk_end - chunk_begin == chunk_size_;
  // n == the chunk's in-bounds length from index 0 implies step 1 (or a single index).
  out.covers_chunk = out.in_chunk.start == 0 && n == chunk_end - chunk_begin;
  return out;
}

std::vector<AxisChunkPart> split_axis(const AxisSelection& axis, std::uint64_t extent,
                                      std::uint64_t chunk_size) {
  const AxisSplit split(axis, extent, chunk_size);
  std::vector<AxisChunkPart> parts;
  for (std::uint64_t k = 0; k < split.num_parts(); ++k) parts.push_back(split.part(k));
  return parts;
}

ChunkPlan::ChunkPlan(const Shape& shape, const Shape& chunk_shape, const Selection& selection)
    : selection_(normalize_selection(selection, shape)) {
  if (chunk_shape.size() != shape.size()) {
    fail_invalid("chunk shape [{}] does not match array shape [{}]", fmt::join(chunk_shape, ", "),
                 fmt::join(shape, ", "));
  }
  splits_.reserve(shape.size());
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    if (chunk_shape[axis] == 0) fail_invalid("chunk shape has a zero on axis {}", axis);
    splits_.emplace_back(selection_.axes[axis], shape[axis], chunk_shape[axis]);
  }
  const bool selects_nothing =
      std::any_of(splits_.begin(), splits_.end(), [](const AxisSplit& s) { return s.num_parts() == 0; });
  num_tasks_ = selects_nothing ? 0 : 1;
  for (const AxisSplit& split : splits_) {
    if (!selects_nothing) num_tasks_ = checked_mul(num_tasks_, split.num_parts(), "number of chunks in a selection");
  }
}

void ChunkPlan::task(std::uint64_t index, ChunkTask& out) const {
  if (index >= num_tasks_) {
    throw InternalError(fmt::format("chunk task {} of {} requested", index, num_tasks_));
  }
  const std::size_t ndim = splits_.size();
  out.chunk_coords.resize(ndim);
  out.chunk_selection.resize(ndim);
  out.output_selection.resize(ndim);
  out.covers_whole_chunk = true;
  out.is_entire_chunk = true;
  // Mixed-radix decomposition, last axis fastest (C order).
  for (std::size_t axis = ndim; axis-- > 0;) {
    const AxisSplit& split = splits_[axis];
    const AxisChunkPart part = split.part(index % split.num_parts());
    index /= split.num_parts();
    out.chunk_coords[axis] = part.chunk_index;
    out.chunk_selection[axis] = part.in_chunk;
    out.output_selection[axis] = part.out;
    out.covers_whole_chunk = out.covers_whole_chunk && part.covers_chunk;
    out.is_entire_chunk = out.is_entire_chunk && part.covers_chunk && part.full_extent;
  }
}

ChunkTask ChunkPlan::task(std::uint64_t index) const {
  ChunkTask t;
  task(index, t);
  return t;
}

std::vector<ChunkTask> ChunkPlan::tasks() const {
  std::vector<ChunkTask> all(to_size(num_tasks_, "number of chunk tasks"));
  for (std::size_t i = 0; i < all.size(); ++i) task(i, all[i]);
  return all;
}

NDView expand_to_region(const NDView& view, const NormalizedSelection& selection) {
  if (view.shape != selection.output_shape) {
    fail_invalid("the array has shape [{}], the selection has shape [{}]", fmt::join(view.shape, ", "),
                 fmt::join(selection.output_shape, ", "));
  }
  if (view.byte_strides.size() != view.shape.size()) {
    fail_invalid("a view has {} strides for {} axes", view.byte_strides.size(), view.shape.size());
  }
  NDView region = view;
  region.shape = selection.region_shape;
  region.byte_strides.assign(selection.axes.size(), 0);
  std::size_t k = 0;
  for (std::size_t axis = 0; axis < selection.axes.size(); ++axis) {
    if (!selection.axes[axis].drops_axis) region.byte_strides[axis] = view.byte_strides[k++];
  }
  return region;
}

NDView broadcast_to_region(const NDView& data, const NormalizedSelection& selection) {
  const Shape& target = selection.output_shape;
  if (data.byte_strides.size() != data.shape.size()) {
    fail_invalid("a view has {} strides for {} axes", data.byte_strides.size(), data.shape.size());
  }
  auto incompatible = [&]() {
    fail_invalid("could not broadcast input of shape [{}] into a selection of shape [{}]",
                 fmt::join(data.shape, ", "), fmt::join(target, ", "));
  };
  if (data.shape.size() > target.size()) {
    // Extra leading axes of size 1 are harmless (NumPy allows them for assignment).
    const std::size_t extra = data.shape.size() - target.size();
    for (std::size_t i = 0; i < extra; ++i) {
      if (data.shape[i] != 1) incompatible();
    }
    NDView trimmed = data;
    trimmed.shape.erase(trimmed.shape.begin(), trimmed.shape.begin() + static_cast<std::ptrdiff_t>(extra));
    trimmed.byte_strides.erase(trimmed.byte_strides.begin(),
                               trimmed.byte_strides.begin() + static_cast<std::ptrdiff_t>(extra));
    return broadcast_to_region(trimmed, selection);
  }
  NDView out = data;
  out.shape = target;
  out.byte_strides.assign(target.size(), 0);
  const std::size_t offset = target.size() - data.shape.size();
  for (std::size_t i = 0; i < data.shape.size(); ++i) {
    const std::uint64_t have = data.shape[i];
    const std::uint64_t want = target[offset + i];
    if (have == want) {
      out.byte_strides[offset + i] = data.byte_strides[i];
    } else if (have != 1) {
      incompatible();
    }
  }
  return expand_to_region(out, selection);
}

}  // namespace zarrkit
