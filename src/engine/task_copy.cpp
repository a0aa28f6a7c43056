#include "engine/task_copy.h"

#include <vector>

#include "core/strided_copy.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

// One strided box of a task: element counts, and offsets and strides on both sides.
struct Box {
  std::vector<std::uint64_t> counts;
  std::vector<std::int64_t> chunk_strides;
  std::vector<std::int64_t> region_strides;
  std::int64_t chunk_offset = 0;
  std::int64_t region_offset = 0;
};

// Calls visit(box) for every combination of the task's runs, in C order of the runs.
template <typename Visit>
void for_each_box(const ChunkTask& task, std::span<const std::int64_t> chunk_strides,
                  std::span<const std::int64_t> region_strides, Visit&& visit) {
  const std::size_t ndim = task.axes.size();
  if (chunk_strides.size() != ndim || region_strides.size() != ndim) {
    throw InternalError(fmt::format("task copy: {} axes but {} chunk and {} region strides", ndim,
                                    chunk_strides.size(), region_strides.size()));
  }
  Box box;
  box.counts.resize(ndim);
  box.chunk_strides.resize(ndim);
  box.region_strides.resize(ndim);
  std::vector<std::size_t> which(ndim, 0);  // the current run of each axis
  // Offsets contributed by the current run of each axis, summed into the box's offsets.
  std::vector<std::int64_t> chunk_part(ndim, 0), region_part(ndim, 0);
  auto select_run = [&](std::size_t a) {
    const AxisRun& r = task.axes[a].runs()[which[a]];
    box.counts[a] = r.count;
    box.chunk_strides[a] = chunk_strides[a] * static_cast<std::int64_t>(r.chunk_step);
    box.region_strides[a] = region_strides[a] * r.out_step;
    box.chunk_offset += chunk_strides[a] * static_cast<std::int64_t>(r.chunk_start) - chunk_part[a];
    box.region_offset += region_strides[a] * static_cast<std::int64_t>(r.out_start) - region_part[a];
    chunk_part[a] = chunk_strides[a] * static_cast<std::int64_t>(r.chunk_start);
    region_part[a] = region_strides[a] * static_cast<std::int64_t>(r.out_start);
  };
  for (std::size_t a = 0; a < ndim; ++a) select_run(a);
  for (;;) {
    visit(box);
    // Advance the odometer: the last axis with more runs first.
    std::size_t a = ndim;
    while (a-- > 0) {
      if (++which[a] < task.axes[a].runs().size()) {
        select_run(a);
        break;
      }
      which[a] = 0;
      select_run(a);
    }
    if (a == static_cast<std::size_t>(-1)) return;
  }
}

}  // namespace

void copy_chunk_to_region(const ChunkTask& task, const std::byte* chunk, std::span<const std::int64_t> chunk_strides,
                          std::byte* region, std::span<const std::int64_t> region_strides, std::size_t itemsize) {
  for_each_box(task, chunk_strides, region_strides, [&](const Box& b) {
    copy_strided(b.counts, region + b.region_offset, b.region_strides, chunk + b.chunk_offset, b.chunk_strides,
                 itemsize);
  });
}

void copy_region_to_chunk(const ChunkTask& task, const std::byte* region, std::span<const std::int64_t> region_strides,
                          std::byte* chunk, std::span<const std::int64_t> chunk_strides, std::size_t itemsize) {
  for_each_box(task, chunk_strides, region_strides, [&](const Box& b) {
    copy_strided(b.counts, chunk + b.chunk_offset, b.chunk_strides, region + b.region_offset, b.region_strides,
                 itemsize);
  });
}

void fill_task_region(const ChunkTask& task, std::byte* region, std::span<const std::int64_t> region_strides,
                      ByteView element) {
  // The chunk side is not used: any strides of the right length will do.
  const std::vector<std::int64_t> unused(task.axes.size(), 0);
  for_each_box(task, unused, region_strides, [&](const Box& b) {
    fill_strided(b.counts, region + b.region_offset, b.region_strides, element);
  });
}

bool region_matches_chunk_layout(const ChunkTask& task, std::span<const std::int64_t> region_strides,
                                 std::span<const std::int64_t> chunk_strides) {
  for (std::size_t a = 0; a < task.axes.size(); ++a) {
    const auto runs = task.axes[a].runs();
    if (runs.size() != 1) return false;
    if (runs[0].count != 1 && region_strides[a] * runs[0].out_step != chunk_strides[a]) return false;
  }
  return true;
}

std::int64_t task_region_offset(const ChunkTask& task, std::span<const std::int64_t> region_strides) {
  std::int64_t offset = 0;
  for (std::size_t a = 0; a < task.axes.size(); ++a) {
    offset += region_strides[a] * static_cast<std::int64_t>(task.axes[a].runs()[0].out_start);
  }
  return offset;
}

}  // namespace zarrkit
