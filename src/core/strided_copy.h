// Copying and filling strided regions of host memory: the hot path of every read and write
// (decoded chunk -> output, input -> chunk).
//
// Both routines first simplify the layout: axes of extent 1 are dropped and neighbouring
// axes that are contiguous in both source and destination are merged, so a C-contiguous
// region becomes one memcpy and a chunk row becomes one memcpy per row. What remains is
// walked with an odometer over the outer axes and a tight loop (specialised for the
// common element sizes) over the innermost one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "zarrkit/buffer.h"

namespace zarrkit {

// The most axes a strided copy accepts (the metadata limit on ndim is the same).
inline constexpr std::size_t kMaxCopyDims = 64;

// Copies the elements of `shape` (itemsize bytes each) from `src` to `dst`. Strides are in
// bytes and may be 0 (broadcast) or negative. The regions must not overlap.
void copy_strided(std::span<const std::uint64_t> shape, std::byte* dst,
                  std::span<const std::int64_t> dst_strides, const std::byte* src,
                  std::span<const std::int64_t> src_strides, std::size_t itemsize);

// Sets every element of the region to `element` (one element's bytes).
void fill_strided(std::span<const std::uint64_t> shape, std::byte* dst,
                  std::span<const std::int64_t> dst_strides, ByteView element);

}  // namespace zarrkit
