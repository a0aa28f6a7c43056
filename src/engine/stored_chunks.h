// Reads over huge grids of mostly absent chunks. Asking the store for each chunk of a grid
// costs a lookup per chunk (a failed open, a 404) even where almost nothing is stored, so a
// read of a sparse array would cost in proportion to its grid. Where the store can list
// keys, a large read instead lists the array's stored chunks once, fills its output with the
// fill value, and reads only the chunks that exist: it costs in proportion to what is stored.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "engine/indexer.h"
#include "zarrkit/metadata.h"
#include "zarrkit/store.h"

namespace zarrkit {

// The index of the task of `plan` that reads the chunk at `coords`; nullopt when the plan's
// selection does not touch that chunk.
std::optional<std::uint64_t> task_of_chunk(const ChunkPlan& plan, std::span<const std::uint64_t> coords);

// The indices of the tasks of `plan` whose chunks the store lists under `path`, in
// increasing order: one listing of the array's keys, whatever the size of its grid.
std::vector<std::uint64_t> list_stored_tasks(Store& store, std::string_view path, const ArrayMetadata& metadata,
                                             const ChunkPlan& plan);

// Requests touching fewer chunks than this ask the store about each: a listing would not pay.
inline constexpr std::uint64_t kMinTasksToList = 4096;

// For a read of `plan` over the array at `path`: the indices of the tasks whose chunks are
// stored, in increasing order, when listing is expected to cost less than asking for every
// chunk (the store lists keys; the read touches at least kMinTasksToList chunks and at least
// an eighth of the grid, since a listing walks the whole array; and, unless every lookup is
// a network request, a sample of the chunks shows that most are absent). nullopt when the
// read should ask for every chunk. The caller fills the output with the fill value first.
// A chunk written while the read runs may be missed (read as the fill value), as if the
// read had come first.
// For a write of `plan` that may erase chunks holding only the fill value: the tasks whose
// chunks are stored, where the request is large enough for a listing to pay (the same rule as
// reads, without sampling: a listing of a new array is empty and costs nothing), so that
// absent chunks need no erase. nullopt: erase every such chunk.
std::optional<std::vector<std::uint64_t>> stored_tasks_for_erase(Store& store, std::string_view path,
                                                                 const ArrayMetadata& metadata, const ChunkPlan& plan);

std::optional<std::vector<std::uint64_t>> stored_tasks_if_sparse(Store& store, std::string_view path,
                                                                 const ArrayMetadata& metadata, const ChunkPlan& plan);

}  // namespace zarrkit
