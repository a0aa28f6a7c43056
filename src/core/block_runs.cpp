#include "core/block_runs.h"

#include <algorithm>
#include <map>

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "core/strided_copy.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

// True when the positions [0, valid) are all selected by `runs`. Only runs of step 1 (or a
// single position) are counted, so a pattern such as two interleaved stride-2 runs reads as
// "not covered": the writer then merges with the old values, which is slower but correct.
bool runs_cover(const std::vector<AxisRun>& runs, std::uint64_t valid) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
  for (const AxisRun& r : runs) {
    if (r.chunk_step == 1 || r.count == 1) spans.emplace_back(r.chunk_start, r.chunk_start + r.count);
  }
  std::sort(spans.begin(), spans.end());
  std::uint64_t reached = 0;
  for (const auto& [begin, end] : spans) {
    if (begin > reached) break;
    reached = std::max(reached, end);
  }
  return reached >= valid;
}

// Which axis copy goes where: one combination of runs, one per axis.
struct Box {
  std::vector<std::uint64_t> counts;
  std::vector<std::int64_t> region_strides;
  std::vector<std::int64_t> block_strides;
  std::int64_t region_offset = 0;
  std::int64_t block_offset = 0;
};

// Calls fn(box) for every combination of runs (C order over the runs of each axis).
template <typename Fn>
void for_each_box(const BlockRuns& runs, std::span<const std::int64_t> block_strides,
                  std::span<const std::int64_t> region_strides, Fn&& fn) {
  const std::size_t ndim = runs.size();
  if (block_strides.size() != ndim || region_strides.size() != ndim) {
    throw InternalError("block copy: the runs, block and region have different numbers of axes");
  }
  for (const auto& axis : runs) {
    if (axis.empty()) return;
  }
  Box box;
  box.counts.resize(ndim);
  box.region_strides.resize(ndim);
  box.block_strides.resize(ndim);
  std::vector<std::size_t> pick(ndim, 0);
  for (;;) {
    box.region_offset = 0;
    box.block_offset = 0;
    for (std::size_t a = 0; a < ndim; ++a) {
      const AxisRun& r = runs[a][pick[a]];
      box.counts[a] = r.count;
      box.block_strides[a] = block_strides[a] * static_cast<std::int64_t>(r.chunk_step);
      box.region_strides[a] = region_strides[a] * r.out_step;
      box.block_offset += block_strides[a] * static_cast<std::int64_t>(r.chunk_start);
      box.region_offset += region_strides[a] * static_cast<std::int64_t>(r.out_start);
    }
    fn(static_cast<const Box&>(box));
    std::size_t a = ndim;
    while (a > 0 && ++pick[a - 1] == runs[a - 1].size()) pick[--a] = 0;
    if (a == 0) return;
  }
}

}  // namespace

std::vector<InnerAxisPart> split_runs(std::span<const AxisRun> runs, std::uint64_t inner_size, std::uint64_t valid) {
  if (inner_size == 0) throw InternalError("split_runs: inner chunk size 0");
  std::map<std::uint64_t, InnerAxisPart> parts;
  for (const AxisRun& run : runs) {
    if (run.chunk_step == 0 || run.count == 0) throw InternalError("split_runs: an empty or zero-step run");
    std::uint64_t k = 0;
    while (k < run.count) {
      const std::uint64_t position = run.chunk_start + k * run.chunk_step;
      const std::uint64_t j = position / inner_size;
      const std::uint64_t limit = (j + 1) * inner_size;  // first position of the next inner chunk
      const std::uint64_t k_end = std::min(run.count, (limit - run.chunk_start + run.chunk_step - 1) / run.chunk_step);
      InnerAxisPart& part = parts[j];
      part.index = j;
      const auto out = static_cast<std::int64_t>(run.out_start) + static_cast<std::int64_t>(k) * run.out_step;
      part.runs.push_back(AxisRun{position - j * inner_size, run.chunk_step, k_end - k,
                                  static_cast<std::uint64_t>(out), run.out_step});
      k = k_end;
    }
  }
  std::vector<InnerAxisPart> out;
  out.reserve(parts.size());
  for (auto& [j, part] : parts) {
    const std::uint64_t begin = j * inner_size;
    part.valid = valid > begin ? std::min(inner_size, valid - begin) : 0;
    part.covers = runs_cover(part.runs, part.valid);
    out.push_back(std::move(part));
  }
  return out;
}

BlockRuns InnerChunkRef::runs() const {
  BlockRuns out;
  out.reserve(parts.size());
  for (const InnerAxisPart* p : parts) out.emplace_back(p->runs);
  return out;
}

Shape InnerChunkRef::valid() const {
  Shape out;
  out.reserve(parts.size());
  for (const InnerAxisPart* p : parts) out.push_back(p->valid);
  return out;
}

std::string InnerChunkRef::describe() const {
  std::vector<std::uint64_t> coords;
  for (const InnerAxisPart* p : parts) coords.push_back(p->index);
  return fmt::format("inner chunk ({})", fmt::join(coords, ","));
}

InnerChunkSelection select_inner_chunks(const Shape& inner_shape, const Shape& grid, const BlockRuns& runs,
                                        const Shape& valid) {
  const std::size_t ndim = inner_shape.size();
  if (runs.size() != ndim || valid.size() != ndim || grid.size() != ndim) {
    throw InternalError("inner chunk selection: the runs do not match the chunk's number of axes");
  }
  InnerChunkSelection sel;
  sel.axis_parts.resize(ndim);
  sel.chunks_inside_array = 1;
  for (std::size_t a = 0; a < ndim; ++a) {
    sel.axis_parts[a] = split_runs(runs[a], inner_shape[a], valid[a]);
    sel.chunks_inside_array *= ceil_div(valid[a], inner_shape[a]);  // <= the number of inner chunks
    for (const InnerAxisPart& part : sel.axis_parts[a]) {
      if (part.index >= grid[a]) throw InternalError("inner chunk selection: a run reaches past the chunk");
    }
  }
  for_each_inner_chunk(sel.axis_parts, [&](const std::vector<std::size_t>& pick) {
    InnerChunkRef ref;
    ref.parts.reserve(ndim);
    ref.covered = true;
    for (std::size_t a = 0; a < ndim; ++a) {
      const InnerAxisPart& part = sel.axis_parts[a][pick[a]];
      ref.parts.push_back(&part);
      ref.ordinal = ref.ordinal * grid[a] + part.index;
      ref.covered = ref.covered && part.covers;
      ref.inside = ref.inside && part.valid == inner_shape[a];
    }
    sel.chunks.push_back(std::move(ref));
  });
  return sel;
}

void copy_block_to_region(const BlockRuns& runs, const std::byte* block, std::span<const std::int64_t> block_strides,
                          std::byte* region, std::span<const std::int64_t> region_strides, std::size_t itemsize) {
  for_each_box(runs, block_strides, region_strides, [&](const Box& box) {
    copy_strided(box.counts, region + box.region_offset, box.region_strides, block + box.block_offset,
                 box.block_strides, itemsize);
  });
}

void copy_region_to_block(const BlockRuns& runs, const std::byte* region, std::span<const std::int64_t> region_strides,
                          std::byte* block, std::span<const std::int64_t> block_strides, std::size_t itemsize) {
  for_each_box(runs, block_strides, region_strides, [&](const Box& box) {
    copy_strided(box.counts, block + box.block_offset, box.block_strides, region + box.region_offset,
                 box.region_strides, itemsize);
  });
}

void fill_region(const BlockRuns& runs, std::byte* region, std::span<const std::int64_t> region_strides,
                 ByteView element) {
  const std::vector<std::int64_t> no_block(runs.size(), 0);
  for_each_box(runs, no_block, region_strides, [&](const Box& box) {
    fill_strided(box.counts, region + box.region_offset, box.region_strides, element);
  });
}

}  // namespace zarrkit
