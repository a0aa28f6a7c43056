// Selections inside a chunk made of inner chunks (a shard): which inner chunks a task
// touches, and which of their elements.
//
// A chunk task selects, per axis, runs of positions in the chunk (AxisRun from
// core/chunk_task.h: progressions in the chunk whose output positions are progressions
// too). split_runs() cuts those runs at inner chunk boundaries, giving per axis the inner
// chunks touched and the runs inside each, in inner chunk coordinates; output positions stay
// in the caller's region coordinates. The inner chunks a task touches are the cartesian
// product of the per-axis parts (select_inner_chunks). The same split applies again one
// level down for nested sharding. The sharding codec's partial reads and writes use these,
// and so do executors that place inner chunks themselves (PartialChunkCodec::locate).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/chunk_task.h"
#include "zarrkit/buffer.h"
#include "zarrkit/ndbuffer.h"

namespace zarrkit {

// Per axis, the runs a block (a chunk or an inner chunk) is selected by.
using BlockRuns = std::vector<std::span<const AxisRun>>;

// One inner chunk's piece of one axis of a selection.
struct InnerAxisPart {
  std::uint64_t index = 0;      // the inner chunk's index along the axis, within the shard
  std::vector<AxisRun> runs;    // in inner chunk coordinates, in the order of the input runs
  std::uint64_t valid = 0;      // positions of the inner chunk that lie inside the array
  bool covers = false;          // every one of those positions is selected
};

// Cuts `runs` (positions < `valid`, in block coordinates) at multiples of `inner_size`.
// `valid` is how much of the block lies inside the array (a ragged edge block has less).
// Parts come in increasing index order; each input run's pieces keep the input order.
std::vector<InnerAxisPart> split_runs(std::span<const AxisRun> runs, std::uint64_t inner_size,
                                      std::uint64_t valid);

// Calls fn(parts) for every combination of one part per axis (C order over the parts), where
// parts[a] indexes axis_parts[a]. Once, with no parts, for a 0-d block.
template <typename Fn>
void for_each_inner_chunk(const std::vector<std::vector<InnerAxisPart>>& axis_parts, Fn&& fn) {
  const std::size_t ndim = axis_parts.size();
  for (const auto& parts : axis_parts) {
    if (parts.empty()) return;
  }
  std::vector<std::size_t> pick(ndim, 0);
  for (;;) {
    fn(static_cast<const std::vector<std::size_t>&>(pick));
    std::size_t a = ndim;
    while (a > 0 && ++pick[a - 1] == axis_parts[a - 1].size()) pick[--a] = 0;
    if (a == 0) return;
  }
}

// One inner chunk a task touches: a part per axis.
struct InnerChunkRef {
  std::vector<const InnerAxisPart*> parts;
  std::uint64_t ordinal = 0;  // its position in C order over the inner chunk grid (its index entry)
  bool covered = false;       // every element of it inside the array is selected
  bool inside = true;         // wholly inside the array (no padding past the edge)

  BlockRuns runs() const;
  Shape valid() const;  // per axis, the positions inside the array
  std::string describe() const;  // "inner chunk (1,0)"
};

// The inner chunks of a grid that a task touches (select_inner_chunks). `chunks` point into
// `axis_parts`: a selection may be moved, not copied.
struct InnerChunkSelection {
  InnerChunkSelection() = default;
  InnerChunkSelection(InnerChunkSelection&&) = default;
  InnerChunkSelection& operator=(InnerChunkSelection&&) = default;
  InnerChunkSelection(const InnerChunkSelection&) = delete;
  InnerChunkSelection& operator=(const InnerChunkSelection&) = delete;

  std::vector<std::vector<InnerAxisPart>> axis_parts;
  std::vector<InnerChunkRef> chunks;  // in C order of the inner chunk grid
  // Inner chunks that hold at least one element inside the array, touched or not.
  std::uint64_t chunks_inside_array = 0;
};

// Splits `runs` (chunk coordinates; `valid` per axis as split_runs takes it) by inner chunks
// of `inner_shape`, `grid` of them per axis, and lists the inner chunks touched.
InnerChunkSelection select_inner_chunks(const Shape& inner_shape, const Shape& grid, const BlockRuns& runs,
                                        const Shape& valid);

// Copies the selected elements of a C-order block (strides in bytes) to the region.
void copy_block_to_region(const BlockRuns& runs, const std::byte* block, std::span<const std::int64_t> block_strides,
                          std::byte* region, std::span<const std::int64_t> region_strides, std::size_t itemsize);
// The reverse, for writes. Runs are applied in order, so a repeated position gets the value
// that comes last in the output.
void copy_region_to_block(const BlockRuns& runs, const std::byte* region, std::span<const std::int64_t> region_strides,
                          std::byte* block, std::span<const std::int64_t> block_strides, std::size_t itemsize);
// Sets the selected elements of the region to `element`.
void fill_region(const BlockRuns& runs, std::byte* region, std::span<const std::int64_t> region_strides,
                 ByteView element);

}  // namespace zarrkit
