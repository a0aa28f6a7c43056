#include "engine/stored_chunks.h"

#include <algorithm>

#include "engine/chunk_io.h"
#include "zarrkit/store.h"

namespace zarrkit {
namespace {

// Chunks looked up to judge whether an array is sparse: enough to tell "most absent" from
// "most stored", few enough to cost nothing next to the read.
constexpr std::uint64_t kSampledChunks = 32;

// True when most of a sample of the plan's chunks, spread over the whole request, are absent.
bool sample_looks_sparse(Store& store, std::string_view path, const ArrayMetadata& metadata, const ChunkPlan& plan) {
  const std::uint64_t n = plan.num_tasks();
  const std::uint64_t samples = std::min(n, kSampledChunks);
  std::uint64_t stored = 0;
  ChunkTask task;
  for (std::uint64_t s = 0; s < samples; ++s) {
    plan.task(s * (n / samples), task);
    if (store.exists(join_key(path, metadata.chunk_key(task.chunk_coords)))) ++stored;
  }
  return stored * 4 <= samples;  // at least three quarters absent
}

// The rule of stored_chunks.h: the store lists, and the request touches enough of the grid.
bool listing_may_pay(Store& store, const ArrayMetadata& metadata, const ChunkPlan& plan) {
  const std::uint64_t n = plan.num_tasks();
  return store.capabilities().listable && n >= kMinTasksToList && n >= metadata.num_chunks() / 8;
}

}  // namespace

std::optional<std::uint64_t> task_of_chunk(const ChunkPlan& plan, std::span<const std::uint64_t> coords) {
  std::uint64_t index = 0;
  for (std::size_t axis = 0; axis < coords.size(); ++axis) {
    // An axis's parts come in increasing chunk order: find the one for this chunk.
    const AxisSplit& split = plan.axis_split(axis);
    std::uint64_t low = 0;
    std::uint64_t high = split.num_parts();
    while (low < high) {
      const std::uint64_t mid = low + (high - low) / 2;
      if (split.part(mid).chunk_index < coords[axis]) {
        low = mid + 1;
      } else {
        high = mid;
      }
    }
    if (low == split.num_parts() || split.part(low).chunk_index != coords[axis]) return std::nullopt;
    index = index * split.num_parts() + low;
  }
  return index;
}

std::optional<std::vector<std::uint64_t>> stored_tasks_if_sparse(Store& store, std::string_view path,
                                                                 const ArrayMetadata& metadata, const ChunkPlan& plan) {
  if (!listing_may_pay(store, metadata, plan)) return std::nullopt;
  // A lookup on a remote store is a request; a listing returns a thousand keys per request.
  if (!store.capabilities().batched_gets && !sample_looks_sparse(store, path, metadata, plan)) return std::nullopt;
  return list_stored_tasks(store, path, metadata, plan);
}

std::optional<std::vector<std::uint64_t>> stored_tasks_for_erase(Store& store, std::string_view path,
                                                                 const ArrayMetadata& metadata, const ChunkPlan& plan) {
  if (!listing_may_pay(store, metadata, plan)) return std::nullopt;
  return list_stored_tasks(store, path, metadata, plan);
}

std::vector<std::uint64_t> list_stored_tasks(Store& store, std::string_view path, const ArrayMetadata& metadata,
                                             const ChunkPlan& plan) {
  std::vector<std::uint64_t> tasks;
  for (const ListedChunk& chunk : list_chunks(store, path, metadata)) {
    if (const auto task = task_of_chunk(plan, chunk.coords)) tasks.push_back(*task);
  }
  std::sort(tasks.begin(), tasks.end());
  return tasks;
}

}  // namespace zarrkit
