#include "zarrkit/multi_device.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <optional>
#include <unordered_set>

#include <fmt/format.h>

#include "core/checked_math.h"
#include "core/run_on_threads.h"
#include "engine/indexer.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

// A normalized axis back as a selection entry (strided axes as slices, lists as indices).
AxisSelector entry(const AxisSelection& s) {
  if (s.drops_axis) return static_cast<std::int64_t>(s.start);
  if (s.is_list) return IndexArray{std::vector<std::int64_t>(s.indices.begin(), s.indices.end())};
  if (s.count == 0) return Slice{0, 0, 1};
  const auto start = static_cast<std::int64_t>(s.start);
  const std::int64_t last = start + s.step * static_cast<std::int64_t>(s.count - 1);
  if (s.step > 0) return Slice{start, last + 1, s.step};
  // Walking down to index 0 needs an open stop: -1 would count from the end.
  return Slice{start, last == 0 ? std::nullopt : std::optional<std::int64_t>(last - 1), s.step};
}

// The output positions (after 0) where a strided axis enters another chunk: the first
// output position of every chunk the engine's axis split finds, in output order.
std::vector<std::uint64_t> chunk_starts(const AxisSelection& s, std::uint64_t extent, const AxisGrid& grid) {
  const AxisSplit split(s, extent, grid);
  std::vector<std::uint64_t> starts;
  for (std::uint64_t k = 0; k < split.num_parts(); ++k) {
    const AxisChunkPart part = split.part(k);  // runs() points into it
    const AxisRun& r = part.runs().front();      // strided axes: one run per chunk
    const std::uint64_t first =
        r.out_step > 0 ? r.out_start : r.out_start - (r.count - 1) * static_cast<std::uint64_t>(-r.out_step);
    if (first != 0) starts.push_back(first);
  }
  std::sort(starts.begin(), starts.end());
  return starts;
}

// Runs body(i) for the parts `which` (of `total`) at once (run_on_threads: the parts wait
// on their devices, so not on the pool); the first error, naming its part, is thrown after
// all have finished.
void run_parts(const std::vector<std::size_t>& which, std::size_t total, const std::function<void(std::size_t)>& body) {
  const auto errors = run_on_threads(which.size(), [&](std::size_t i) { body(which[i]); });
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i]) continue;
    try {
      std::rethrow_exception(errors[i]);
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("part {} of {}", which[i], total));
    }
  }
}

}  // namespace

std::vector<Selection> split_selection(const ArrayMetadata& m, const Selection& selection, std::size_t axis,
                                       std::size_t parts) {
  if (parts == 0) fail_invalid("cannot split a selection into 0 parts");
  const NormalizedSelection n = normalize_selection(selection, m.shape);
  if (axis >= n.axes.size()) fail_invalid("cannot split along axis {} of an array with {} axes", axis, n.axes.size());
  const AxisSelection& cut = n.axes[axis];
  if (cut.drops_axis) fail_invalid("cannot split along axis {}: an integer selects it", axis);
  Selection whole;
  for (const auto& a : n.axes) whole.push_back(entry(a));
  if (cut.count == 0) return {whole};

  // Output positions where each unit (a chunk; a list entry) starts.
  std::vector<std::uint64_t> unit_starts{0};
  if (cut.is_list) {
    for (std::uint64_t k = 1; k < cut.count; ++k) unit_starts.push_back(k);
  } else {
    const auto more = chunk_starts(cut, m.shape[axis], m.chunk_grid().axis(axis));
    unit_starts.insert(unit_starts.end(), more.begin(), more.end());
  }
  const std::uint64_t units = unit_starts.size();
  const std::uint64_t pieces = std::min<std::uint64_t>(parts, units);
  std::vector<Selection> out;
  for (std::uint64_t i = 0; i < pieces; ++i) {
    const std::uint64_t u0 = i * units / pieces, u1 = (i + 1) * units / pieces;
    const std::uint64_t k0 = unit_starts[u0], k1 = u1 == units ? cut.count : unit_starts[u1];
    AxisSelection piece = cut;
    piece.count = k1 - k0;
    if (cut.is_list) {
      piece.indices.assign(cut.indices.begin() + static_cast<std::ptrdiff_t>(k0),
                           cut.indices.begin() + static_cast<std::ptrdiff_t>(k1));
    } else {
      piece.start = static_cast<std::uint64_t>(static_cast<std::int64_t>(cut.start) +
                                               cut.step * static_cast<std::int64_t>(k0));
    }
    Selection s = whole;
    s[axis] = entry(piece);
    out.push_back(std::move(s));
  }
  return out;
}

void read_into_devices(const Array& array, std::span<const DevicePart> parts) {
  std::vector<std::size_t> all(parts.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  // One budget of batches in flight for the whole read, shared by its parts: the host's
  // threads and memory serve every part, and N parts each with a whole read's batches in
  // flight crowd the host's decode (bench/results/MULTI-GPU.md).
  const std::size_t depth = current_config().gpu.pipeline_depth;
  const std::size_t per_part = std::max<std::size_t>(1, depth / std::max<std::size_t>(1, parts.size()));
  run_parts(all, parts.size(), [&](std::size_t i) {
    const ScopedConfig shared_budget([&](Config& c) { c.gpu.pipeline_depth = per_part; });
    array.read_into(parts[i].selection, parts[i].view);
  });
}

void write_from_devices(Array& array, std::span<const DevicePart> parts) {
  // Parts in waves: a part joins the first wave none of whose parts touches one of its
  // stored chunks (a shared chunk written by two parts at once would lose one's values).
  const ArrayMetadata& m = array.metadata();
  const Shape grid = m.chunk_grid_shape();
  std::vector<std::vector<std::size_t>> waves;
  std::vector<std::unordered_set<std::uint64_t>> wave_chunks;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const ChunkPlan plan(m.shape, m.chunk_grid(), parts[i].selection);
    std::unordered_set<std::uint64_t> chunks;
    ChunkTask task;
    for (std::uint64_t t = 0; t < plan.num_tasks(); ++t) {
      plan.task(t, task);
      std::uint64_t linear = 0;
      for (std::size_t a = 0; a < grid.size(); ++a) linear = linear * grid[a] + task.chunk_coords[a];
      chunks.insert(linear);
    }
    std::size_t w = 0;
    for (; w < waves.size(); ++w) {
      bool shared = false;
      for (std::uint64_t c : chunks) {
        if (wave_chunks[w].contains(c)) {
          shared = true;
          break;
        }
      }
      if (!shared) break;
    }
    if (w == waves.size()) {
      waves.emplace_back();
      wave_chunks.emplace_back();
    }
    waves[w].push_back(i);
    wave_chunks[w].insert(chunks.begin(), chunks.end());
  }
  for (const auto& wave : waves) {
    run_parts(wave, parts.size(), [&](std::size_t i) { array.write(parts[i].selection, parts[i].view); });
  }
}

}  // namespace zarrkit
