// Array: coordinate and mask selections (point selections), and block selections.
//
// Points are grouped by chunk (PointPlan); each chunk task runs on the shared thread pool,
// decodes its chunk once, and moves its points one element at a time. A write reads the
// chunk (or starts from the fill value), applies its points in increasing order, so a
// repeated point keeps its last value, and stores it, erasing it when only fill remains.
// On stores that batch gets the chunks are fetched in batches, as plain reads fetch them
// (fetched_reads.h). Reads of a sharded array (a chain with a partial codec) read each
// shard's index and then only the inner chunks that hold points, as byte ranges, and decode
// those alone.
#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <unordered_map>

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "core/partial_chunk_codec.h"
#include "engine/cached_reads.h"
#include "engine/chunk_io.h"
#include "engine/fetched_reads.h"
#include "engine/indexer.h"
#include "engine/node_io.h"
#include "engine/point_indexer.h"
#include "zarrkit/array.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {

// Block lists are expanded into element lists: refuse lists longer than this many entries
// (8 bytes each) rather than allocate without bound.
constexpr std::uint64_t kMaxBlockListElements = std::uint64_t{1} << 27;

std::string describe_array(const Array& array) {
  return fmt::format("array '{}' in {}", display_path(array.path()), array.store()->describe());
}

// Runs `body(store, task, key)` for every task of the plan on the pool, adding the array
// and chunk key to any error. On stores that batch gets (S3, HTTP) the chunks are fetched in
// batches and each task runs as its chunk arrives, with a store that serves the fetched
// bytes (fetched_reads.h); elsewhere each task reads its chunk from the array's store.
template <typename Body>
void run_point_tasks(const Array& array, const PointPlan& plan, Body&& body, bool reads_in_part = false,
                     const ChunkCacheView* cache = nullptr) {
  const ArrayMetadata& m = array.metadata();
  auto run = [&](Store& store, std::size_t index) {
    PointTask task;
    plan.task(index, task);
    const std::string key = m.chunk_key(task.chunk_coords);
    try {
      body(store, task, join_key(array.path(), key));
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("{}, chunk '{}'", describe_array(array), key));
    } catch (const std::bad_alloc&) {
      fail_resource("{}, chunk '{}': out of memory", describe_array(array), key);
    }
  };
  const std::shared_ptr<Store>& store = array.store();
  const std::size_t num_tasks = to_size(plan.num_tasks());
  if (store->capabilities().batched_gets) {
    // Tasks that read in part make their own ranged requests (no key to fetch for them).
    auto key_of = [&](std::size_t index) {
      if (reads_in_part) return std::string();
      PointTask task;
      plan.task(index, task);
      std::string key = join_key(array.path(), m.chunk_key(task.chunk_coords));
      // A chunk the cache holds is not fetched: its task takes it from there.
      if (cache != nullptr && *cache && cache->cache->find(cache->key(key))) return std::string();
      return key;
    };
    return run_fetched_as_they_arrive(store, checked_nbytes(m.chunk_shape, m.dtype), num_tasks,
                                      describe_array(array), key_of, run);
  }
  shared_thread_pool().parallel_for(num_tasks, [&](std::size_t index) { run(*store, index); });
}

// The points of one shard: its index, then the inner chunks that hold points (one ranged
// request for all of them), each decoded once; points in inner chunks that are not stored
// read as the fill value.
void read_shard_points(const PartialChunkCodec& partial, const ArrayMetadata& m, const PointPlan& plan, Store& store,
                       const PointTask& task, const std::string& key,
                       const std::function<std::byte*(std::uint64_t)>& out_at) {
  const std::size_t ndim = m.ndim();
  const std::size_t itemsize = m.dtype.size();
  const Shape& inner = partial.inner_chain()->spec().shape;
  const Shape& shard = partial.chunk_shape();
  const ChunkGrid grid = m.chunk_grid();
  // The whole shard's inner chunks (inside the array), to learn where each is stored.
  Shape valid(ndim);
  std::vector<AxisRun> whole(ndim);
  BlockRuns runs;
  for (std::size_t a = 0; a < ndim; ++a) {
    const std::uint64_t begin = grid.axis(a).origin(task.chunk_coords[a]);
    valid[a] = std::min(shard[a], m.shape[a] - begin);
    whole[a] = AxisRun{0, 1, valid[a], 0, 1};
  }
  for (std::size_t a = 0; a < ndim; ++a) runs.emplace_back(&whole[a], 1);
  const LocatedChunks located = partial.locate(ChunkSource{&store, key, 0, std::nullopt, std::nullopt}, runs, valid);
  const ByteView fill = m.fill_value.bytes();
  if (!located.stored) {
    for (const std::uint64_t p : task.points) std::memcpy(out_at(p), fill.data(), itemsize);
    return;
  }
  std::unordered_map<std::uint64_t, std::size_t> index_of;  // ordinal -> entry of `located`
  for (std::size_t i = 0; i < located.selection.chunks.size(); ++i) index_of[located.selection.chunks[i].ordinal] = i;
  // Points by the inner chunk that holds them (its ordinal), with their offsets in it.
  std::map<std::uint64_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> by_inner;
  for (const std::uint64_t p : task.points) {
    std::uint64_t rest = plan.offset_in_chunk(p);
    std::uint64_t ordinal = 0, offset = 0, grid_stride = 1, inner_stride = 1;
    for (std::size_t a = ndim; a-- > 0;) {
      const std::uint64_t coord = rest % shard[a];
      rest /= shard[a];
      ordinal += coord / inner[a] * grid_stride;
      offset += coord % inner[a] * inner_stride;
      grid_stride *= shard[a] / inner[a];
      inner_stride *= inner[a];
    }
    by_inner[ordinal].emplace_back(p, offset);
  }
  std::vector<ByteRange> ranges;
  std::vector<std::uint64_t> wanted;
  for (const auto& [ordinal, points] : by_inner) {
    const InnerChunkBytes& b = located.bytes.at(index_of.at(ordinal));
    if (b.stored) {
      ranges.push_back(ByteRange::range(b.offset, b.offset + b.nbytes));
      wanted.push_back(ordinal);
    } else {
      for (const auto& [p, offset] : points) std::memcpy(out_at(p), fill.data(), itemsize);
    }
  }
  if (ranges.empty()) return;
  const auto parts = store.get_ranges(key, ranges, BufferPrototype::host());
  for (std::size_t r = 0; r < wanted.size(); ++r) {
    const auto& points = by_inner.at(wanted[r]);
    if (!parts) {  // deleted since the index was read: the fill value
      for (const auto& [p, offset] : points) std::memcpy(out_at(p), fill.data(), itemsize);
      continue;
    }
    const InnerChunkBytes& b = located.bytes.at(index_of.at(wanted[r]));
    const Buffer& bytes = (*parts)[r];
    const std::string inner_chunk = located.selection.chunks[index_of.at(wanted[r])].describe();
    if (bytes.size() != b.nbytes) {
      fail_data_loss("{}: bytes [{}, {}) of the shard hold it, but the shard ends at byte {}", inner_chunk, b.offset,
                     b.offset + b.nbytes, b.offset + bytes.size());
    }
    NDBuffer decoded;
    try {
      decoded = located.inner->decode(bytes.view(), BufferPrototype::host());
    } catch (const Error& e) {
      rethrow_with_context(e, inner_chunk);
    }
    if (decoded.nbytes() != located.inner->chunk_bytes()) {
      fail_data_loss("{}: the codec chain decoded {} bytes, the inner chunk needs {}", inner_chunk, decoded.nbytes(),
                     located.inner->chunk_bytes());
    }
    for (const auto& [p, offset] : points) std::memcpy(out_at(p), decoded.data() + offset * itemsize, itemsize);
  }
}

void read_points(const Array& array, const PointPlan& plan, const NDView& out) {
  const ArrayMetadata& m = array.metadata();
  require_fixed_size_elements(m.dtype);
  require_host_memory(out, "reading into");
  if (!(out.dtype == m.dtype)) {
    fail_invalid("cannot read {} of {} into a buffer of {}", describe_array(array), m.dtype.name(), out.dtype.name());
  }
  if (out.shape != plan.output_shape() || out.byte_strides.size() != out.shape.size()) {
    fail_invalid("the output has shape [{}], the selection has shape [{}]", fmt::join(out.shape, ", "),
                 fmt::join(plan.output_shape(), ", "));
  }
  require_fill_of_itemsize(m, display_path(array.path()));
  const std::size_t itemsize = m.dtype.size();
  const bool contiguous = out.is_c_contiguous();
  auto out_at = [&](std::uint64_t p) {
    return out.data + (contiguous ? static_cast<std::int64_t>(p * itemsize)
                                  : strided_offset(p, out.shape, out.byte_strides));
  };
  const PartialChunkCodec* partial = m.prepared_chain().partial();
  const std::function<std::byte*(std::uint64_t)> out_of = out_at;
  // Chunks of unsharded arrays through the decoded-chunk cache where there is one (points
  // of sharded arrays read their inner chunks past it).
  const ReadCache cache(array);
  run_point_tasks(
      array, plan,
      [&](Store& store, const PointTask& task, const std::string& key) {
        if (partial != nullptr) {
          // The partial codec of this shard's shape (a rectilinear grid's shards differ).
          return read_shard_points(*m.prepared_chain(task.chunk_coords).partial(), m, plan, store, task, key, out_of);
        }
        if (cache) {
          const CachedChunk chunk = read_chunk_cached(store, m, cache.view(), key, m.prepared_chain(task.chunk_coords));
          for (const std::uint64_t p : task.points) {
            const std::byte* from = chunk.stored ? chunk.bytes.data() + plan.offset_in_chunk(p) * itemsize
                                                 : m.fill_value.bytes().data();
            std::memcpy(out_at(p), from, itemsize);
          }
          return;
        }
        const auto encoded = store.get(key, BufferPrototype::host());
        if (!encoded) {
          const ByteView fill = m.fill_value.bytes();
          for (const std::uint64_t p : task.points) std::memcpy(out_at(p), fill.data(), itemsize);
          return;
        }
        const NDBuffer chunk = decode_chunk(m, task.chunk_coords, encoded->view());
        for (const std::uint64_t p : task.points) {
          std::memcpy(out_at(p), chunk.data() + plan.offset_in_chunk(p) * itemsize, itemsize);
        }
      },
      partial != nullptr, &cache.view());
}

NDBuffer read_points(const Array& array, NormalizedPoints points) {
  const ArrayMetadata& m = array.metadata();
  require_fixed_size_elements(m.dtype);
  const PointPlan plan(std::move(points), m.shape, m.chunk_grid());
  require_allocatable(plan.output_shape(), m.dtype, "reading " + describe_array(array));
  NDBuffer out = NDBuffer::allocate(plan.output_shape(), m.dtype.with_storage_endian(std::nullopt),
                                    default_prototype());
  read_points(array, plan, out.view());
  return out;
}

void write_points(const Array& array, NormalizedPoints points, const NDView& data) {
  const ArrayMetadata& m = array.metadata();
  require_fixed_size_elements(m.dtype);
  require_host_memory(data, "writing from");
  if (!(data.dtype == m.dtype)) {
    fail_invalid("cannot write a buffer of {} to {} of {}", data.dtype.name(), describe_array(array), m.dtype.name());
  }
  require_fill_of_itemsize(m, display_path(array.path()));
  const PointPlan plan(std::move(points), m.shape, m.chunk_grid());
  const NDView input = broadcast_to_shape(data, plan.output_shape());
  const std::size_t itemsize = m.dtype.size();
  // Settings are per thread (ScopedConfig): read them here, not inside the pool's workers.
  const bool write_empty_chunks = current_config().write_empty_chunks;
  run_point_tasks(array, plan, [&](Store& store, const PointTask& task, const std::string& key) {
    const auto existing = store.get(key, BufferPrototype::host());
    NDBuffer chunk = existing ? decode_chunk(m, task.chunk_coords, existing->view())
                              : NDBuffer::filled(m.chunk_spec(task.chunk_coords).shape, m.dtype, m.fill_value,
                                                 BufferPrototype::host());
    for (const std::uint64_t p : task.points) {
      std::memcpy(chunk.data() + plan.offset_in_chunk(p) * itemsize,
                  input.data + strided_offset(p, input.shape, input.byte_strides), itemsize);
    }
    store_chunk(store, key, m, task.chunk_coords, chunk, write_empty_chunks);
  });
}

// Element indices of the blocks `axis` selects (in its order), for block selections that
// are not one contiguous range.
IndexArray block_elements(const AxisSelection& axis, const AxisGrid& grid, std::uint64_t extent) {
  const std::uint64_t blocks = axis.is_list ? axis.indices.size() : axis.count;
  auto block_at = [&](std::uint64_t k) {
    if (axis.is_list) return axis.indices[static_cast<std::size_t>(k)];
    return static_cast<std::uint64_t>(static_cast<__int128>(axis.start) + static_cast<__int128>(k) * axis.step);
  };
  // Bound the total before listing.
  std::uint64_t total = 0;
  if (blocks > kMaxBlockListElements) total = blocks;
  for (std::uint64_t k = 0; k < blocks && total <= kMaxBlockListElements; ++k) {
    const std::uint64_t begin = grid.origin(block_at(k));
    total += std::min(grid.size(block_at(k)), extent - begin);
  }
  if (total > kMaxBlockListElements) {
    fail_resource("a block selection of {} blocks of up to {} elements would list more than {} indices; select "
                  "contiguous blocks (step 1) instead", blocks, grid.largest(), kMaxBlockListElements);
  }
  IndexArray out;
  out.indices.reserve(static_cast<std::size_t>(total));
  for (std::uint64_t k = 0; k < blocks; ++k) {
    const std::uint64_t begin = grid.origin(block_at(k));
    const std::uint64_t end = begin + std::min(grid.size(block_at(k)), extent - begin);
    if (end > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail_unsupported("block bounds past 2^63 elements");
    }
    for (std::uint64_t i = begin; i < end; ++i) out.indices.push_back(static_cast<std::int64_t>(i));
  }
  return out;
}

}  // namespace

NDBuffer Array::read_coordinates(const CoordinateSelection& coordinates) const {
  return read_points(*this, normalize_coordinates(coordinates, shape()));
}

void Array::read_coordinates_into(const CoordinateSelection& coordinates, const NDView& out) const {
  const PointPlan plan(normalize_coordinates(coordinates, shape()), shape(), metadata_->chunk_grid());
  read_points(*this, plan, out);
}

void Array::write_coordinates(const CoordinateSelection& coordinates, const NDView& data) {
  write_points(*this, normalize_coordinates(coordinates, shape()), data);
}

NDBuffer Array::read_mask(const MaskSelection& mask) const {
  return read_points(*this, normalize_mask(mask, shape()));
}

void Array::write_mask(const MaskSelection& mask, const NDView& data) {
  write_points(*this, normalize_mask(mask, shape()), data);
}

Selection Array::block_selection(const Selection& blocks) const {
  const ArrayMetadata& m = *metadata_;
  try {
    // Resolve the entries against the chunk grid with the usual rules (negative indices,
    // ellipsis, clamped slices, lists), then map each axis to elements.
    const ChunkGrid chunk_grid = m.chunk_grid();
    const Shape chunks_per_axis = chunk_grid.grid_shape(m.shape);
    const NormalizedSelection grid = normalize_selection(blocks, chunks_per_axis);
    Selection elements;
    for (std::size_t a = 0; a < m.ndim(); ++a) {
      const AxisSelection& axis = grid.axes[a];
      const AxisGrid& chunk = chunk_grid.axis(a);
      const std::uint64_t extent = m.shape[a];
      if (!axis.is_list && (axis.step == 1 || axis.count <= 1)) {
        // Contiguous blocks: one slice (an integer keeps its axis, as in zarr).
        auto element = [&](std::uint64_t block) {
          return block >= chunks_per_axis[a] ? extent : std::min(chunk.origin(block), extent);
        };
        const std::uint64_t begin = axis.count == 0 ? 0 : element(axis.start);
        const std::uint64_t end = axis.count == 0 ? 0 : element(axis.start + axis.count);
        if (end > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          fail_unsupported("block bounds past 2^63 elements on axis {}", a);
        }
        elements.push_back(Slice{static_cast<std::int64_t>(begin), static_cast<std::int64_t>(end), 1});
      } else {
        elements.push_back(block_elements(axis, chunk, extent));
      }
    }
    return elements;
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("block selection of {}", describe_array(*this)));
  }
}

}  // namespace zarrkit
