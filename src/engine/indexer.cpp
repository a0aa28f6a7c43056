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

// NumPy's slice bound rules: negative counts from the end, then clamp to [lo, hi].
Wide clamp_bound(std::int64_t bound, std::uint64_t extent, Wide lo, Wide hi) {
  Wide b = bound;
  if (b < 0) b += static_cast<Wide>(extent);
  return std::clamp(b, lo, hi);
}

AxisSelection normalize_slice(const Slice& slice, std::uint64_t extent, std::size_t axis) {
  if (slice.step == 0) fail_invalid("slice step cannot be zero (axis {})", axis);
  const Wide n = extent;
  const Wide step = slice.step;
  AxisSelection out;
  out.step = slice.step;
  Wide count = 0;
  Wide first = 0;
  if (step > 0) {
    first = slice.start ? clamp_bound(*slice.start, extent, 0, n) : 0;
    const Wide stop = slice.stop ? clamp_bound(*slice.stop, extent, 0, n) : n;
    count = stop > first ? (stop - first - 1) / step + 1 : 0;
  } else {
    // Walking backwards: start defaults to the last index, stop to "before the first"
    // (-1, which no explicit bound can name: -1 means the last index).
    first = slice.start ? clamp_bound(*slice.start, extent, -1, n - 1) : n - 1;
    const Wide stop = slice.stop ? clamp_bound(*slice.stop, extent, -1, n - 1) : -1;
    count = first > stop ? (first - stop - 1) / -step + 1 : 0;
  }
  out.count = static_cast<std::uint64_t>(count);
  out.start = count == 0 ? 0 : static_cast<std::uint64_t>(first);
  if (count == 0) out.step = 1;  // one canonical form for an empty selection
  return out;
}

std::uint64_t normalize_index(std::int64_t index, std::uint64_t extent, std::size_t axis) {
  Wide i = index;
  if (i < 0) i += static_cast<Wide>(extent);
  if (i < 0 || i >= static_cast<Wide>(extent)) {
    fail_invalid("index {} is out of bounds for axis {} with size {}", index, axis, extent);
  }
  return static_cast<std::uint64_t>(i);
}

AxisSelection normalize_integer(std::int64_t index, std::uint64_t extent, std::size_t axis) {
  AxisSelection out;
  out.start = normalize_index(index, extent, axis);
  out.count = 1;
  out.drops_axis = true;
  return out;
}

AxisSelection normalize_index_array(const IndexArray& list, std::uint64_t extent, std::size_t axis) {
  AxisSelection out;
  out.is_list = true;
  out.indices.reserve(list.indices.size());
  for (const std::int64_t i : list.indices) out.indices.push_back(normalize_index(i, extent, axis));
  out.count = out.indices.size();
  return out;
}

AxisSelection normalize_bool_array(const BoolArray& mask, std::uint64_t extent, std::size_t axis) {
  if (mask.mask.size() != extent) {
    fail_invalid("boolean index did not match the array along axis {}: the axis has size {}, the "
                 "boolean list has {} entries", axis, extent, mask.mask.size());
  }
  AxisSelection out;
  out.is_list = true;
  for (std::size_t i = 0; i < mask.mask.size(); ++i) {
    if (mask.mask[i] != 0) out.indices.push_back(i);
  }
  out.count = out.indices.size();
  return out;
}

AxisSelection normalize_entry(const AxisSelector& selector, std::uint64_t extent, std::size_t axis) {
  if (const auto* index = std::get_if<std::int64_t>(&selector)) return normalize_integer(*index, extent, axis);
  if (const auto* slice = std::get_if<Slice>(&selector)) return normalize_slice(*slice, extent, axis);
  if (const auto* list = std::get_if<IndexArray>(&selector)) return normalize_index_array(*list, extent, axis);
  return normalize_bool_array(std::get<BoolArray>(selector), extent, axis);
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
    out.axes.push_back(normalize_entry(selector, shape[axis], axis));
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

AxisSplit::AxisSplit(const AxisSelection& axis, std::uint64_t extent, AxisGrid grid)
    : extent_(extent), grid_(std::move(grid)) {
  if (grid_.covered() < extent) fail_invalid("the chunks of an axis cover {} positions of its {}", grid_.covered(), extent);
  if (axis.is_list) {
    is_list_ = true;
    split_list(axis.indices);
    return;
  }
  if (axis.count == 0) return;
  // Every selected index is below `extent`, which fits in uint64: nothing below overflows.
  count_ = axis.count;
  step_ = axis.step > 0 ? static_cast<std::uint64_t>(axis.step)
                        : std::uint64_t{0} - static_cast<std::uint64_t>(axis.step);  // |INT64_MIN| too
  reversed_ = axis.step < 0 && axis.count > 1;
  start_ = reversed_ ? axis.start - (axis.count - 1) * step_ : axis.start;
  const std::uint64_t last_index = start_ + (count_ - 1) * step_;
  first_chunk_ = grid_.chunk_of(start_);
  // A step of at least the largest chunk puts each index in a chunk of its own; one no
  // larger than the smallest chunk cannot jump over a chunk, so every chunk from the first to
  // the last is touched. (On a regular grid one of the two holds.)
  if (count_ == 1 || step_ >= grid_.largest()) {
    one_index_per_chunk_ = true;
    num_parts_ = count_;
  } else if (step_ <= grid_.smallest()) {
    num_parts_ = grid_.chunk_of(last_index) - first_chunk_ + 1;
  } else {
    // Between the two: walk the chunks the progression lands in, one lookup per chunk.
    for (std::uint64_t k = 0; k < count_;) {
      const std::uint64_t chunk = grid_.chunk_of(start_ + k * step_);
      touched_chunks_.push_back(chunk);
      const std::uint64_t end = grid_.origin(chunk) + grid_.size(chunk);
      k = (end - start_ - 1) / step_ + 1;  // the first position at or past the chunk's end
    }
    num_parts_ = touched_chunks_.size();
  }
}

void AxisSplit::split_list(const std::vector<std::uint64_t>& indices) {
  // Output positions ordered by index; among repeats of one index, by output position, so
  // that a write applies the last one last.
  std::vector<std::uint64_t> order(indices.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  if (!std::is_sorted(indices.begin(), indices.end())) {
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint64_t a, std::uint64_t b) { return indices[a] < indices[b]; });
  }
  std::size_t k = 0;
  while (k < order.size()) {
    const std::uint64_t chunk = grid_.chunk_of(indices[order[k]]);
    const std::uint64_t chunk_begin = grid_.origin(chunk);
    const std::uint64_t chunk_size = grid_.size(chunk);
    const std::uint64_t in_bounds = std::min(chunk_size, extent_ - chunk_begin);
    ListPart part{chunk, runs_.size(), 0, false};
    std::uint64_t distinct = 0;
    std::uint64_t previous_index = 0;
    std::uint64_t previous_out = 0;
    for (; k < order.size() && indices[order[k]] - chunk_begin < chunk_size; ++k) {
      const std::uint64_t index = indices[order[k]] - chunk_begin;
      const std::uint64_t out = order[k];
      const bool repeat = part.num_runs > 0 && index == previous_index;
      distinct += !repeat;
      // Output positions are list positions: below 2^63, so their difference fits int64.
      const auto out_step = static_cast<std::int64_t>(out) - static_cast<std::int64_t>(previous_out);
      AxisRun* run = part.num_runs > 0 ? &runs_.back() : nullptr;
      if (run != nullptr && !repeat && run->count == 1) {
        run->chunk_step = index - previous_index;
        run->out_step = out_step;
        run->count = 2;
      } else if (run != nullptr && !repeat && run->chunk_step == index - previous_index &&
                 run->out_step == out_step) {
        ++run->count;
      } else {
        runs_.push_back(AxisRun{index, 1, 1, out, 1});
        ++part.num_runs;
      }
      previous_index = index;
      previous_out = out;
    }
    part.covers_chunk = distinct == in_bounds;
    list_parts_.push_back(part);
  }
  num_parts_ = list_parts_.size();
}

AxisChunkPart AxisSplit::part(std::uint64_t k) const {
  if (!is_list_) return strided_part(k);
  const ListPart& lp = list_parts_[static_cast<std::size_t>(k)];
  AxisChunkPart out;
  out.chunk_index = lp.chunk_index;
  out.covers_chunk = lp.covers_chunk;
  const std::uint64_t chunk_begin = grid_.origin(lp.chunk_index);
  out.chunk_origin = chunk_begin;
  out.full_extent = extent_ - chunk_begin >= grid_.size(lp.chunk_index);
  out.stored_runs_ = runs_.data() + lp.first_run;
  out.num_stored_runs_ = lp.num_runs;
  return out;
}

AxisChunkPart AxisSplit::strided_part(std::uint64_t k) const {
  std::uint64_t chunk;
  if (one_index_per_chunk_) chunk = grid_.chunk_of(start_ + k * step_);
  else if (!touched_chunks_.empty()) chunk = touched_chunks_[static_cast<std::size_t>(k)];
  else chunk = first_chunk_ + k;
  const std::uint64_t chunk_begin = grid_.origin(chunk);
  const std::uint64_t chunk_size = grid_.size(chunk);
  const std::uint64_t chunk_end = chunk_begin + std::min(chunk_size, extent_ - chunk_begin);
  // Positions in the increasing progression of the first and last index in the chunk.
  const std::uint64_t first = chunk_begin <= start_ ? 0 : (chunk_begin - start_ - 1) / step_ + 1;
  const std::uint64_t last = std::min(count_ - 1, (chunk_end - 1 - start_) / step_);
  const std::uint64_t n = last - first + 1;

  AxisChunkPart out;
  out.chunk_index = chunk;
  out.chunk_origin = chunk_begin;
  AxisRun& run = out.single_run_;
  run.chunk_start = start_ + first * step_ - chunk_begin;
  // A lone index keeps step 1: a huge slice step (up to 2^63-1) would overflow the byte
  // strides that copies derive from it, and a step means nothing for one element.
  run.chunk_step = n == 1 ? 1 : step_;
  run.count = n;
  // A reversed axis puts the progression's position p at output position count - 1 - p.
  run.out_start = reversed_ ? count_ - 1 - first : first;
  run.out_step = reversed_ && n > 1 ? -1 : 1;
  out.full_extent = chunk_end - chunk_begin == chunk_size;
  // n == the chunk's in-bounds length from index 0 implies step 1 (or a single index).
  out.covers_chunk = run.chunk_start == 0 && n == chunk_end - chunk_begin;
  return out;
}

std::vector<AxisPartCopy> split_axis(const AxisSelection& axis, std::uint64_t extent,
                                     std::uint64_t chunk_size) {
  if (chunk_size == 0) fail_invalid("chunk size must be positive");
  const AxisSplit split(axis, extent, AxisGrid::regular(chunk_size));
  std::vector<AxisPartCopy> parts;
  for (std::uint64_t k = 0; k < split.num_parts(); ++k) {
    const AxisChunkPart p = split.part(k);
    parts.push_back({p.chunk_index, {p.runs().begin(), p.runs().end()}, p.covers_chunk, p.full_extent});
  }
  return parts;
}

namespace {
ChunkGrid checked_regular_grid(const Shape& shape, const Shape& chunk_shape) {
  if (chunk_shape.size() != shape.size()) {
    fail_invalid("chunk shape [{}] does not match array shape [{}]", fmt::join(chunk_shape, ", "),
                 fmt::join(shape, ", "));
  }
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    if (chunk_shape[axis] == 0) fail_invalid("chunk shape has a zero on axis {}", axis);
  }
  return ChunkGrid::regular(chunk_shape);
}
}  // namespace

ChunkPlan::ChunkPlan(const Shape& shape, const Shape& chunk_shape, const Selection& selection)
    : ChunkPlan(shape, checked_regular_grid(shape, chunk_shape), selection) {}

ChunkPlan::ChunkPlan(const Shape& shape, const ChunkGrid& grid, const Selection& selection)
    : selection_(normalize_selection(selection, shape)) {
  grid.check_covers(shape);
  splits_.reserve(shape.size());
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    splits_.emplace_back(selection_.axes[axis], shape[axis], grid.axis(axis));
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
  out.axes.resize(ndim);
  out.covers_whole_chunk = true;
  out.is_entire_chunk = true;
  // Mixed-radix decomposition, last axis fastest (C order).
  for (std::size_t axis = ndim; axis-- > 0;) {
    const AxisSplit& split = splits_[axis];
    const AxisChunkPart part = split.part(index % split.num_parts());
    index /= split.num_parts();
    out.chunk_coords[axis] = part.chunk_index;
    out.axes[axis] = part;
    const auto runs = part.runs();
    const bool in_order = runs.size() == 1 && runs[0].chunk_start == 0 &&
                          (runs[0].count == 1 || (runs[0].chunk_step == 1 && runs[0].out_step == 1));
    out.covers_whole_chunk = out.covers_whole_chunk && part.covers_chunk;
    out.is_entire_chunk = out.is_entire_chunk && part.covers_chunk && part.full_extent && in_order;
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

NDView broadcast_to_shape(const NDView& data, const Shape& target) {
  if (data.byte_strides.size() != data.shape.size()) {
    fail_invalid("a view has {} strides for {} axes", data.byte_strides.size(), data.shape.size());
  }
  auto incompatible = [&]() {
    fail_invalid("could not broadcast input of shape [{}] into a selection of shape [{}]",
                 fmt::join(data.shape, ", "), fmt::join(target, ", "));
  };
  // Extra leading axes of size 1 are harmless (NumPy allows them for assignment).
  std::size_t extra = 0;
  if (data.shape.size() > target.size()) {
    extra = data.shape.size() - target.size();
    for (std::size_t i = 0; i < extra; ++i) {
      if (data.shape[i] != 1) incompatible();
    }
  }
  const std::size_t kept = data.shape.size() - extra;
  NDView out = data;
  out.shape = target;
  out.byte_strides.assign(target.size(), 0);
  const std::size_t offset = target.size() - kept;
  for (std::size_t i = 0; i < kept; ++i) {
    const std::uint64_t have = data.shape[extra + i];
    const std::uint64_t want = target[offset + i];
    if (have == want) {
      out.byte_strides[offset + i] = data.byte_strides[extra + i];
    } else if (have != 1) {
      incompatible();
    }
  }
  return out;
}

NDView broadcast_to_region(const NDView& data, const NormalizedSelection& selection) {
  return expand_to_region(broadcast_to_shape(data, selection.output_shape), selection);
}

}  // namespace zarrkit
