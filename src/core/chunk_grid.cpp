#include "zarrkit/chunk_grid.h"

#include <algorithm>
#include <limits>

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "zarrkit/error.h"

namespace zarrkit {

AxisGrid AxisGrid::regular(std::uint64_t size) {
  if (size == 0) fail_invalid("a chunk size must be positive");
  AxisGrid g;
  g.size_ = size;
  return g;
}

AxisGrid AxisGrid::explicit_runs(std::span<const ChunkRun> runs) {
  if (runs.empty()) fail_invalid("an axis of a rectilinear chunk grid lists no chunks");
  auto merged = std::make_shared<std::vector<Run>>();
  std::uint64_t chunks = 0;
  std::uint64_t covered = 0;
  for (const ChunkRun& r : runs) {
    if (r.size == 0) fail_invalid("a chunk size must be positive, got 0");
    if (r.count == 0) fail_invalid("a run of chunk sizes must repeat at least once, got a count of 0");
    const auto length = try_mul(r.size, r.count);
    const auto end = length ? try_add(covered, *length) : std::nullopt;
    if (!end) {
      fail_invalid("the chunk sizes of an axis sum past 64 bits (a run of {} chunks of {})", r.count, r.size);
    }
    if (!merged->empty() && merged->back().size == r.size) {
      merged->back().count += r.count;  // cannot overflow: count <= covered, which fitted
    } else {
      merged->push_back({r.size, r.count, chunks, covered});
    }
    chunks += r.count;  // chunks <= covered: no overflow
    covered = *end;
  }
  AxisGrid g;
  g.size_ = 0;
  auto plain = std::make_shared<std::vector<ChunkRun>>();
  plain->reserve(merged->size());
  for (const Run& r : *merged) plain->push_back({r.size, r.count});
  g.plain_runs_ = std::move(plain);
  g.runs_ = std::move(merged);
  return g;
}

std::span<const ChunkRun> AxisGrid::runs() const {
  return plain_runs_ ? std::span<const ChunkRun>(*plain_runs_) : std::span<const ChunkRun>();
}

std::uint64_t AxisGrid::covered() const {
  if (is_regular()) return std::numeric_limits<std::uint64_t>::max();
  const Run& last = runs_->back();
  return last.origin + last.size * last.count;
}

std::uint64_t AxisGrid::listed_chunks() const {
  if (is_regular()) return std::numeric_limits<std::uint64_t>::max();
  const Run& last = runs_->back();
  return last.first_chunk + last.count;
}

std::uint64_t AxisGrid::largest() const {
  if (is_regular()) return size_;
  std::uint64_t m = 0;
  for (const Run& r : *runs_) m = std::max(m, r.size);
  return m;
}

std::uint64_t AxisGrid::smallest() const {
  if (is_regular()) return size_;
  std::uint64_t m = std::numeric_limits<std::uint64_t>::max();
  for (const Run& r : *runs_) m = std::min(m, r.size);
  return m;
}

const AxisGrid::Run& AxisGrid::run_of_chunk(std::uint64_t chunk) const {
  if (chunk >= listed_chunks()) {
    throw InternalError(fmt::format("chunk {} of an axis that lists {} chunks", chunk, listed_chunks()));
  }
  // The last run whose first chunk is <= chunk.
  auto it = std::upper_bound(runs_->begin(), runs_->end(), chunk,
                             [](std::uint64_t c, const Run& r) { return c < r.first_chunk; });
  return *(it - 1);
}

std::uint64_t AxisGrid::chunk_of(std::uint64_t coord) const {
  if (is_regular()) return coord / size_;
  if (coord >= covered()) {
    throw InternalError(fmt::format("position {} past the {} positions an axis's chunks cover", coord, covered()));
  }
  auto it = std::upper_bound(runs_->begin(), runs_->end(), coord,
                             [](std::uint64_t c, const Run& r) { return c < r.origin; });
  const Run& r = *(it - 1);
  return r.first_chunk + (coord - r.origin) / r.size;
}

std::uint64_t AxisGrid::origin(std::uint64_t chunk) const {
  if (is_regular()) return chunk * size_;
  const Run& r = run_of_chunk(chunk);
  return r.origin + (chunk - r.first_chunk) * r.size;
}

std::uint64_t AxisGrid::size(std::uint64_t chunk) const {
  if (is_regular()) return size_;
  return run_of_chunk(chunk).size;
}

std::uint64_t AxisGrid::num_chunks(std::uint64_t extent) const {
  if (is_regular()) return ceil_div(extent, size_);
  return extent == 0 ? 0 : chunk_of(extent - 1) + 1;
}

AxisGrid AxisGrid::covering(std::uint64_t extent) const {
  if (is_regular() || extent <= covered()) return *this;
  std::vector<ChunkRun> grown(runs().begin(), runs().end());
  grown.push_back({extent - covered(), 1});
  return explicit_runs(grown);
}

bool AxisGrid::operator==(const AxisGrid& other) const {
  if (is_regular() != other.is_regular()) return false;
  return is_regular() ? size_ == other.size_ : std::equal(runs().begin(), runs().end(), other.runs().begin(), other.runs().end());
}

ChunkGrid ChunkGrid::regular(const Shape& chunk_shape) {
  std::vector<AxisGrid> axes;
  axes.reserve(chunk_shape.size());
  for (const std::uint64_t size : chunk_shape) axes.push_back(AxisGrid::regular(size));
  return ChunkGrid(std::move(axes));
}

bool ChunkGrid::is_regular() const {
  return std::all_of(axes_.begin(), axes_.end(), [](const AxisGrid& a) { return a.is_regular(); });
}

Shape ChunkGrid::grid_shape(const Shape& shape) const {
  check_covers(shape);
  Shape grid(shape.size());
  for (std::size_t a = 0; a < shape.size(); ++a) grid[a] = axes_[a].num_chunks(shape[a]);
  return grid;
}

Shape ChunkGrid::chunk_shape(std::span<const std::uint64_t> chunk) const {
  if (chunk.size() != axes_.size()) fail_invalid("chunk index has {} dimensions but the grid has {}", chunk.size(), axes_.size());
  Shape out(chunk.size());
  for (std::size_t a = 0; a < chunk.size(); ++a) out[a] = axes_[a].size(chunk[a]);
  return out;
}

Shape ChunkGrid::chunk_origin(std::span<const std::uint64_t> chunk) const {
  if (chunk.size() != axes_.size()) fail_invalid("chunk index has {} dimensions but the grid has {}", chunk.size(), axes_.size());
  Shape out(chunk.size());
  for (std::size_t a = 0; a < chunk.size(); ++a) out[a] = axes_[a].origin(chunk[a]);
  return out;
}

Shape ChunkGrid::largest_chunk() const {
  Shape out(axes_.size());
  for (std::size_t a = 0; a < axes_.size(); ++a) out[a] = axes_[a].largest();
  return out;
}

void ChunkGrid::check_covers(const Shape& shape) const {
  if (shape.size() != axes_.size()) {
    fail_invalid("the chunk grid has {} dimensions but the shape [{}] has {}", axes_.size(), fmt::join(shape, ", "),
                 shape.size());
  }
  for (std::size_t a = 0; a < shape.size(); ++a) {
    if (axes_[a].covered() < shape[a]) {
      fail_invalid("the chunk sizes of axis {} sum to {}, less than the array's extent {}", a, axes_[a].covered(),
                   shape[a]);
    }
  }
}

}  // namespace zarrkit
