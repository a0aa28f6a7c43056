// Selections inside a shard: which inner chunks a task touches, and which of their elements.
//
// A chunk task of a sharded array selects, per axis, runs of positions in the shard (AxisRun
// from indexer.h: progressions in the shard whose output positions are progressions too).
// split_runs() cuts those runs at inner chunk boundaries, giving per axis the inner chunks
// touched and the runs inside each, in inner chunk coordinates; output positions stay in
// the caller's region coordinates. The inner chunks a task touches are the cartesian product
// of the per-axis parts. The same split applies again one level down for nested sharding.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/indexer.h"
#include "zarrkit/buffer.h"

namespace zarrkit {

// Per axis, the runs a block (a shard or an inner chunk) is selected by.
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
