#include "zarrkit/blocks.h"

#include <algorithm>

#include "core/checked_math.h"

namespace zarrkit::cli {
namespace {

std::uint64_t round_up(std::uint64_t value, std::uint64_t multiple) {
  return ceil_div(value, multiple) * multiple;
}

// Bytes of a block, saturating instead of overflowing (only compared against a budget).
std::uint64_t block_bytes(const Shape& block, std::size_t itemsize) {
  std::uint64_t n = std::max<std::size_t>(itemsize, 1);
  for (auto d : block) n = try_mul(n, d).value_or(UINT64_MAX);
  return n;
}

}  // namespace

Shape copy_block_shape(const Shape& shape, const Shape& dest_chunks, const Shape& source_chunks,
                       std::size_t itemsize, std::uint64_t budget_bytes) {
  const std::size_t ndim = shape.size();
  Shape block(ndim), limit(ndim);
  for (std::size_t i = 0; i < ndim; ++i) {
    limit[i] = round_up(std::max<std::uint64_t>(shape[i], 1), dest_chunks[i]);
    const std::uint64_t src = i < source_chunks.size() ? source_chunks[i] : dest_chunks[i];
    block[i] = std::min(round_up(src, dest_chunks[i]), limit[i]);
  }
  // Too big to cover whole source chunks: fall back to single destination chunks, outer
  // axes first (a source chunk is then decoded more than once).
  for (std::size_t i = 0; i < ndim && block_bytes(block, itemsize) > budget_bytes; ++i) {
    block[i] = std::min(dest_chunks[i], limit[i]);
  }
  // Small blocks: grow inner axes first, in whole multiples, so each write covers many chunks.
  for (std::size_t i = ndim; i-- > 0;) {
    const std::uint64_t factor = budget_bytes / block_bytes(block, itemsize);
    if (factor < 2) break;
    block[i] = std::min(limit[i], try_mul(block[i], factor).value_or(limit[i]));
  }
  return block;
}

void for_each_block(const Shape& shape, const Shape& block_shape, const std::function<void(const Block&)>& visit) {
  const std::size_t ndim = shape.size();
  if (std::any_of(shape.begin(), shape.end(), [](std::uint64_t d) { return d == 0; })) return;
  Block block;
  block.origin.assign(ndim, 0);
  while (true) {
    block.selection.clear();
    block.extent.resize(ndim);
    for (std::size_t i = 0; i < ndim; ++i) {
      const std::uint64_t end = std::min(shape[i], block.origin[i] + block_shape[i]);
      block.extent[i] = end - block.origin[i];
      block.selection.push_back(Slice{static_cast<std::int64_t>(block.origin[i]), static_cast<std::int64_t>(end), 1});
    }
    visit(block);
    std::size_t axis = ndim;
    while (axis-- > 0) {
      block.origin[axis] += block_shape[axis];
      if (block.origin[axis] < shape[axis]) break;
      block.origin[axis] = 0;
    }
    if (axis == static_cast<std::size_t>(-1)) return;  // every axis wrapped: done (also 0-d)
  }
}

std::uint64_t chunks_in_region(const Shape& extent, const Shape& chunks) {
  std::uint64_t n = 1;
  for (std::size_t i = 0; i < extent.size(); ++i) n *= ceil_div(extent[i], chunks[i]);
  return n;
}

}  // namespace zarrkit::cli
