// Copying in blocks aligned to the destination's chunks, so that every destination chunk is
// written once and whole, and memory stays bounded by the block size.
#pragma once

#include <cstdint>
#include <functional>

#include "zarrkit/ndbuffer.h"
#include "zarrkit/selection.h"

namespace zarrkit::cli {

inline constexpr std::uint64_t kDefaultBlockBudget = std::uint64_t{128} << 20;  // bytes

// A block shape for copying an array of `shape`: a multiple of `dest_chunks` on every axis,
// covering a whole source chunk where that fits (so source chunks are decoded once), then
// grown from the last axis to the first up to `budget_bytes`. Never smaller than one
// destination chunk (clipped to the array).
Shape copy_block_shape(const Shape& shape, const Shape& dest_chunks, const Shape& source_chunks,
                       std::size_t itemsize, std::uint64_t budget_bytes = kDefaultBlockBudget);

// One block: its selection (slices) and the shape of the region it covers.
struct Block {
  Selection selection;
  Shape origin;
  Shape extent;
};

// Calls `visit` for every block of `block_shape` tiling `shape`, in C order. A 0-d array is
// one block with an empty selection. Arrays with a zero-length axis have no blocks.
void for_each_block(const Shape& shape, const Shape& block_shape, const std::function<void(const Block&)>& visit);

// The number of chunks of `chunks` that a chunk-aligned region of `extent` touches.
std::uint64_t chunks_in_region(const Shape& extent, const Shape& chunks);

}  // namespace zarrkit::cli
