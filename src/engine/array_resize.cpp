// Array::resize and Array::append.
//
// Resizing keeps the box both shapes share (`kept`, the smaller extent per axis) and makes
// everything outside it read as the fill value: stored chunks wholly outside are erased,
// and stored chunks that straddle the box's edge get the fill value beyond it. The second
// part matters for growing too: an old edge chunk's padding, or a chunk a foreign writer
// left outside the old shape, must not resurface as data. The chunks are found by listing
// the store, so the cost follows what is stored, not the size of the grid. Only then is the
// metadata rewritten (one atomic key), so an interrupted resize leaves the old shape with
// its data inside `kept` intact.
//
// A rectilinear grid keeps its chunk sizes when the array shrinks (chunks may reach past the
// extent) and gains one chunk of the difference on an axis that grows past the sizes it
// lists, as zarr-python does; the chunks it already had keep their places.
#include <algorithm>
#include <cstring>

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "core/metadata_util.h"
#include "core/strided_copy.h"
#include "engine/chunk_io.h"
#include "engine/fetched_reads.h"
#include "engine/node_io.h"
#include "zarrkit/array.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {

// Makes everything of `m`'s chunks outside the box both shapes share read as the fill
// value: erases the stored chunks wholly outside it and fills the part beyond it of those
// that straddle its edge on an axis whose extent changes. (On an axis that keeps its
// extent, an edge chunk's padding stays out of sight, so it is left alone.)
void clear_outside(const std::shared_ptr<Store>& shared_store, const std::string& path, const ArrayMetadata& m,
                   const ChunkGrid& chunk_grid, const Shape& new_shape) {
  Store& store = *shared_store;
  if (!store.capabilities().listable) {
    fail_unsupported("resizing needs a store that can list its keys, and {} cannot", store.describe());
  }
  const std::size_t ndim = m.ndim();
  Shape kept(ndim), grid(ndim);
  std::vector<bool> changes(ndim);
  for (std::size_t a = 0; a < ndim; ++a) {
    kept[a] = std::min(m.shape[a], new_shape[a]);
    changes[a] = m.shape[a] != new_shape[a];
    // Chunk keys are looked at up to the larger grid: a chunk left beyond the old shape
    // (by another writer) must not show through when the array grows over it.
    grid[a] = chunk_grid.axis(a).num_chunks(std::max(m.shape[a], new_shape[a]));
  }
  // Chunk begins are below the larger extent, so begin + chunk cannot wrap when compared
  // as kept - begin.
  auto outside = [&](const std::vector<std::uint64_t>& c) {
    for (std::size_t a = 0; a < ndim; ++a) {
      if (chunk_grid.axis(a).origin(c[a]) >= kept[a]) return true;
    }
    return false;
  };
  auto straddles = [&](const std::vector<std::uint64_t>& c, std::size_t a) {
    return changes[a] && kept[a] - chunk_grid.axis(a).origin(c[a]) < chunk_grid.axis(a).size(c[a]);
  };
  std::vector<std::pair<std::string, std::vector<std::uint64_t>>> chunks;
  for (ListedChunk& listed : list_chunks(store, path, m, grid)) {
    bool touched = outside(listed.coords);
    for (std::size_t a = 0; a < ndim && !touched; ++a) touched = straddles(listed.coords, a);
    if (touched) chunks.emplace_back(std::move(listed.key), std::move(listed.coords));
  }
  const bool write_empty_chunks = current_config().write_empty_chunks;
  // `source` serves the chunk's stored bytes (the fetched ones on a store that batches gets);
  // erasing and storing go to the store either way.
  auto run = [&](Store& source, std::size_t i) {
    const auto& [key, coords] = chunks[i];
    try {
      if (outside(coords)) {
        source.erase(key);
        return;
      }
      const auto encoded = source.get(key, BufferPrototype::host());
      if (!encoded) return;  // nothing stored: nothing to clear
      NDBuffer chunk = decode_chunk(m, coords, encoded->view());
      const Shape chunk_shape = chunk_grid.chunk_shape(coords);
      const auto chunk_strides = NDView::c_strides(chunk_shape, m.dtype.size());
      const std::vector<std::byte> before(chunk.data(), chunk.data() + chunk.nbytes());
      // For each changing axis that crosses `kept`, the slab of the chunk beyond it.
      for (std::size_t a = 0; a < ndim; ++a) {
        if (!straddles(coords, a)) continue;
        const std::uint64_t first_outside = kept[a] - chunk_grid.axis(a).origin(coords[a]);
        Shape slab = chunk_shape;
        slab[a] = chunk_shape[a] - first_outside;
        fill_strided(slab, chunk.data() + static_cast<std::int64_t>(first_outside) * chunk_strides[a], chunk_strides,
                     m.fill_value.bytes());
      }
      if (std::memcmp(before.data(), chunk.data(), before.size()) == 0) return;  // already the fill value
      store_chunk(source, key, m, coords, chunk, write_empty_chunks);
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("chunk '{}'", key));
    }
  };
  if (store.capabilities().batched_gets) {
    // The chunks to rewrite are fetched in batches (fetched_reads.h); those to erase need
    // no fetch and are erased as tasks of their own.
    auto key_of = [&](std::size_t i) { return outside(chunks[i].second) ? std::string() : chunks[i].first; };
    return run_fetched_as_they_arrive(shared_store, checked_nbytes(m.chunk_shape, m.dtype), chunks.size(),
                                      "fetching the chunks to rewrite", key_of, run);
  }
  shared_thread_pool().parallel_for(chunks.size(), [&](std::size_t i) { run(store, i); });
}

// `m` over `new_shape`: a rectilinear grid grown to cover it.
std::shared_ptr<ArrayMetadata> resized_metadata(const ArrayMetadata& m, const Shape& new_shape) {
  auto updated = std::make_shared<ArrayMetadata>(m);
  updated->shape = new_shape;
  if (m.rectilinear_grid) {
    std::vector<AxisGrid> axes;
    for (std::size_t a = 0; a < m.ndim(); ++a) axes.push_back(m.rectilinear_grid->axis(a).covering(new_shape[a]));
    updated->rectilinear_grid = ChunkGrid(std::move(axes));
    updated->chunk_shape = updated->rectilinear_grid->largest_chunk();
  }
  metadata_detail::check_array_sizes(new_shape, updated->chunk_shape, m.dtype, MetadataLimits{});
  return updated;
}

}  // namespace

void Array::resize(const Shape& new_shape) {
  const ArrayMetadata& m = *metadata_;
  const std::string context = fmt::format("resizing array '{}' in {} from [{}] to [{}]", display_path(path_),
                                          store_->describe(), fmt::join(m.shape, ", "), fmt::join(new_shape, ", "));
  try {
    if (new_shape.size() != m.ndim()) {
      fail_invalid("the new shape has {} axes, the array has {}", new_shape.size(), m.ndim());
    }
    require_fill_of_itemsize(m, display_path(path_));
    auto updated = resized_metadata(m, new_shape);
    if (!store_->capabilities().writable) fail_invalid("the store is read-only");
    clear_outside(store_, path_, m, updated->chunk_grid(), new_shape);
    Array resized(store_, path_, updated);
    resized.write_metadata();
    metadata_ = std::move(updated);
  } catch (const Error& e) {
    rethrow_with_context(e, context);
  }
}

Shape Array::append(const NDView& data, std::size_t axis) {
  const ArrayMetadata& m = *metadata_;
  const std::string context = fmt::format("appending [{}] to array '{}' in {} along axis {}",
                                          fmt::join(data.shape, ", "), display_path(path_), store_->describe(), axis);
  try {
    if (axis >= m.ndim()) fail_invalid("axis {} is out of range for an array of {} axes", axis, m.ndim());
    if (data.shape.size() != m.ndim()) {
      fail_invalid("the data has {} axes, the array has {}", data.shape.size(), m.ndim());
    }
    for (std::size_t a = 0; a < m.ndim(); ++a) {
      if (a != axis && data.shape[a] != m.shape[a]) {
        fail_invalid("the data has shape [{}], which differs from the array's [{}] on axis {}",
                     fmt::join(data.shape, ", "), fmt::join(m.shape, ", "), a);
      }
    }
    Shape new_shape = m.shape;
    new_shape[axis] = checked_add(m.shape[axis], data.shape[axis], "appended extent");
    if (new_shape[axis] > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail_invalid("the appended extent {} does not fit a signed 64-bit index", new_shape[axis]);
    }
    require_fill_of_itemsize(m, display_path(path_));
    auto updated = resized_metadata(m, new_shape);
    if (!store_->capabilities().writable) fail_invalid("the store is read-only");
    // Nothing outside the old shape may show through the new region: clear it first.
    clear_outside(store_, path_, m, updated->chunk_grid(), new_shape);
    Array grown(store_, path_, updated);
    Selection region(m.ndim(), Slice::all());
    region[axis] = Slice{static_cast<std::int64_t>(m.shape[axis]), static_cast<std::int64_t>(new_shape[axis]), 1};
    grown.write(region, data);
    grown.write_metadata();
    metadata_ = std::move(updated);
    return new_shape;
  } catch (const Error& e) {
    rethrow_with_context(e, context);
  }
}

}  // namespace zarrkit
