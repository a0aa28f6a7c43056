// Copying one chunk task's elements between a decoded chunk and the caller's region.
//
// A task selects, on every axis, one or more runs (see AxisRun in indexer.h); the elements
// it moves are the cartesian product of those runs. Each combination of runs is a strided
// box on both sides, moved with one copy_strided call; combinations go in C order of the
// runs, so that when a write selects an element twice the later value lands last.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/indexer.h"
#include "zarrkit/buffer.h"

namespace zarrkit {

// Copies the task's selected elements of `chunk` (strides in bytes, one per array axis) to
// their places in the region whose origin is `region`.
void copy_chunk_to_region(const ChunkTask& task, const std::byte* chunk, std::span<const std::int64_t> chunk_strides,
                          std::byte* region, std::span<const std::int64_t> region_strides, std::size_t itemsize);

// The reverse: the task's elements of the region go to their places in `chunk`.
void copy_region_to_chunk(const ChunkTask& task, const std::byte* region, std::span<const std::int64_t> region_strides,
                          std::byte* chunk, std::span<const std::int64_t> chunk_strides, std::size_t itemsize);

// Sets the task's elements of the region to `element` (a missing chunk reads as the fill value).
void fill_task_region(const ChunkTask& task, std::byte* region, std::span<const std::int64_t> region_strides,
                      ByteView element);

// For a task with is_entire_chunk: true when the region's block is laid out exactly like
// the C-order chunk (strides equal wherever the extent is not 1), so one memcpy moves it.
bool region_matches_chunk_layout(const ChunkTask& task, std::span<const std::int64_t> region_strides,
                                 std::span<const std::int64_t> chunk_strides);
// Byte offset of the task's first element in the region.
std::int64_t task_region_offset(const ChunkTask& task, std::span<const std::int64_t> region_strides);

}  // namespace zarrkit
