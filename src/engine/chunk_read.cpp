#include "engine/chunk_read.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "core/strided_copy.h"
#include "engine/task_copy.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/error.h"
#include "zarrkit/config.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {

// What one more read call costs, in bytes that could have been read in its place (a pread
// of page-cached data: a few microseconds against ~5 GB/s of copying).
constexpr std::uint64_t kBytesPerCall = 16 << 10;

// Faults in the pages of the output the task writes (the whole span from its lowest to its
// highest element), for the paths that write without saying where first.
void fault_task_span(const ChunkReadRequest& r, const ChunkTask& task) {
  if (r.faults == nullptr || !r.faults->active()) return;
  const auto [begin, end] = OutputFaults::task_span(task, r.region);
  r.faults->before_write(begin, end);
}

void fill_task(const ChunkReadRequest& r, const ChunkTask& task) {
  fault_task_span(r, task);
  fill_task_region(task, r.region.data, r.region.byte_strides, r.fill);
}

[[noreturn]] void fail_raw_size(const ChunkReadRequest& r, std::uint64_t stored) {
  fail_data_loss("bytes codec: chunk of {} elements of {} must be {} bytes, got {}",
                 checked_num_elements(r.spec.shape), r.metadata.dtype.name(), r.chunk_bytes, stored);
}

// The decoded chunk (any codecs): fetch, decode, copy the selected elements.
void decode_and_copy(const ChunkReadRequest& r, ByteView encoded, const ChunkTask& task) {
  const NDBuffer chunk = r.chain.decode(encoded, BufferPrototype::host());
  if (chunk.nbytes() != r.chunk_bytes || chunk.shape() != r.spec.shape) {
    fail_data_loss("the codec chain decoded {} bytes of shape [{}], the chunk needs {} bytes of shape [{}]",
                   chunk.nbytes(), fmt::join(chunk.shape(), ", "), r.chunk_bytes,
                   fmt::join(r.spec.shape, ", "));
  }
  fault_task_span(r, task);
  copy_chunk_to_region(task, chunk.data(), r.chunk_strides, r.region.data, r.region.byte_strides,
                       r.metadata.dtype.size());
}

// The chunk decoded whole into one (reused) buffer, then what the task selects copied.
void decode_whole(const ChunkReadRequest& r, ByteView encoded, const ChunkTask& task) {
  if (!r.chain.decodes_into()) return decode_and_copy(r, encoded, task);
  Buffer chunk = Buffer::allocate(to_size(r.chunk_bytes));
  if (!r.chain.decode_into(encoded, chunk.mutable_view())) return decode_and_copy(r, encoded, task);
  fault_task_span(r, task);
  copy_chunk_to_region(task, chunk.data(), r.chunk_strides, r.region.data, r.region.byte_strides,
                       r.metadata.dtype.size());
}

// An uncompressed chunk read in part: only the slabs the task's box needs.
void read_raw_part(const ChunkReadRequest& r, const std::string& key, const ChunkTask& task) {
  const std::size_t ndim = task.axes.size();
  const std::size_t itemsize = r.metadata.dtype.size();
  const SlabPlan plan = plan_slabs(task, r.chunk_strides, itemsize);
  const std::size_t slab = to_size(plan.slab_bytes);
  const std::size_t count = to_size(plan.num_slabs);
  Buffer bytes = Buffer::allocate(to_size(checked_mul(plan.slab_bytes, plan.num_slabs, "slab bytes")));

  // Slab k starts at the chunk offset of the box's origin moved, on the outer axes, to the
  // k-th point of the box (C order).
  std::vector<ByteRange> ranges(count);
  std::vector<MutableByteView> dests(count);
  std::vector<std::uint64_t> outer(plan.outer_axes, 0);
  std::uint64_t inner_origin = 0;
  for (std::size_t a = plan.outer_axes; a < ndim; ++a) {
    inner_origin += plan.box_begin[a] * static_cast<std::uint64_t>(r.chunk_strides[a]);
  }
  for (std::size_t k = 0; k < count; ++k) {
    std::uint64_t offset = inner_origin;
    for (std::size_t a = 0; a < plan.outer_axes; ++a) {
      offset += (plan.box_begin[a] + outer[a]) * static_cast<std::uint64_t>(r.chunk_strides[a]);
    }
    ranges[k] = ByteRange::range(offset, offset + plan.slab_bytes);
    dests[k] = MutableByteView(bytes.data() + k * slab, slab);
    for (std::size_t a = plan.outer_axes; a-- > 0;) {
      if (++outer[a] < plan.box_extent[a]) break;
      outer[a] = 0;
    }
  }
  const std::optional<std::uint64_t> stored = r.store.read_into(key, ranges, dests);
  if (!stored) return fill_task(r, task);
  if (*stored != r.chunk_bytes) fail_raw_size(r, *stored);

  // The slabs as a chunk: outer axes step from slab to slab, inner axes keep the chunk's
  // strides. Offsets are relative to the box's origin, which sits at the buffer's start.
  std::vector<std::int64_t> strides(ndim);
  std::int64_t step = static_cast<std::int64_t>(slab);
  for (std::size_t a = plan.outer_axes; a-- > 0;) {
    strides[a] = step;
    step *= static_cast<std::int64_t>(plan.box_extent[a]);
  }
  std::int64_t origin = 0;
  for (std::size_t a = 0; a < ndim; ++a) {
    if (a >= plan.outer_axes) strides[a] = r.chunk_strides[a];
    origin += strides[a] * static_cast<std::int64_t>(plan.box_begin[a]);
  }
  // copy_chunk_to_region adds each selected element's offset (from the chunk's origin) to
  // the pointer it is given; the box's origin is `origin` bytes past the chunk's origin.
  const std::byte* chunk_origin = bytes.data() - origin;
  fault_task_span(r, task);
  copy_chunk_to_region(task, chunk_origin, strides, r.region.data, r.region.byte_strides, itemsize);
}

// Rows shorter than this go through a buffer: one call per row costs more than the copy.
constexpr std::uint64_t kMinDirectRowBytes = 512;

// An uncompressed chunk wanted whole that lands in the output as separate rows (its last
// axis contiguous there, the other axes strided: a chunk narrower than the array): the rows
// are read straight into the output's rows, adjacent ones merged, in calls covering many
// rows each (LocalStore: preadv), instead of into a buffer and copied from there. Returns
// false where this does not apply.
bool read_raw_rows(const ChunkReadRequest& r, const std::string& key, const ChunkTask& task) {
  const std::size_t ndim = task.axes.size();
  const std::size_t itemsize = r.metadata.dtype.size();
  if (ndim < 2 || r.region.byte_strides[ndim - 1] != static_cast<std::int64_t>(itemsize)) return false;
  const std::uint64_t row_bytes = r.spec.shape[ndim - 1] * itemsize;
  if (row_bytes < kMinDirectRowBytes) return false;
  const std::uint64_t rows = r.chunk_bytes / row_bytes;
  std::byte* const base = r.region.data + task_region_offset(task, r.region.byte_strides);
  // Reused by this thread's next chunk: a chunk has thousands of rows.
  thread_local std::vector<ByteRange> ranges;
  thread_local std::vector<MutableByteView> dests;
  ranges.clear();
  dests.clear();
  std::vector<std::uint64_t> index(ndim - 1, 0);
  for (std::uint64_t k = 0; k < rows; ++k) {
    std::int64_t offset = 0;
    for (std::size_t a = 0; a + 1 < ndim; ++a) offset += static_cast<std::int64_t>(index[a]) * r.region.byte_strides[a];
    std::byte* const dest = base + offset;
    if (!dests.empty() && dests.back().data() + dests.back().size() == dest) {
      dests.back() = MutableByteView(dests.back().data(), dests.back().size() + to_size(row_bytes));
      ranges.back().end += row_bytes;
    } else {
      ranges.push_back(ByteRange::range(k * row_bytes, (k + 1) * row_bytes));
      dests.emplace_back(dest, to_size(row_bytes));
    }
    for (std::size_t a = ndim - 1; a-- > 0;) {
      if (++index[a] < r.spec.shape[a]) break;
      index[a] = 0;
    }
  }
  if (r.faults != nullptr) r.faults->before_write(dests);
  const std::optional<std::uint64_t> stored = r.store.read_into(key, ranges, dests);
  if (!stored) {
    fill_task(r, task);
  } else if (*stored != r.chunk_bytes) {
    fail_raw_size(r, *stored);
  }
  return true;
}

// Compressed chunks at least this large whose elements land in the output as scattered
// pieces (a chunk narrower than the array) are decoded piece by piece, through a buffer of
// about kPieceBytes, where the codecs allow (CodecChain::decode_pieces): the buffer stays in
// cache while its rows are copied out, and each thread holds a piece instead of a decoded
// chunk (16 threads x 32 MiB chunks made a whole read peak at 1.36x the output). Smaller
// chunks are decoded whole into a reused buffer, which stays in cache anyway.
constexpr std::uint64_t kPieceBytes = 256 << 10;
constexpr std::uint64_t kMinPiecedChunkBytes = 4 * kPieceBytes;

// Whether the chunk may be decoded in pieces for the task: large enough, and the task
// selects one box of it (one run per axis, walking the chunk one index at a time: whole
// chunks, edge chunks, plain slices).
bool may_decode_in_pieces(const ChunkReadRequest& r, const ChunkTask& task) {
  if (r.chunk_bytes < kMinPiecedChunkBytes) return false;
  for (const AxisChunkPart& part : task.axes) {
    if (part.runs().size() != 1 || part.runs()[0].chunk_step != 1) return false;
  }
  return true;
}

// Decodes the chunk piece by piece and copies the task's elements out of each piece.
// Returns false where the chain cannot decode this chunk so, or when the reader refuses the
// data: the caller then decodes the chunk whole, which overwrites whatever was copied and
// reports any error in its own words.
bool decode_in_pieces(const ChunkReadRequest& r, std::shared_ptr<ByteSource> encoded, const ChunkTask& task) {
  const std::unique_ptr<PieceReader> reader = r.chain.decode_pieces(std::move(encoded));
  if (!reader) return false;
  const std::uint64_t want = std::max(kPieceBytes, reader->granularity());
  if (2 * want > r.chunk_bytes) return false;

  // A piece is `per_piece` consecutive indices of `axis` (the first axis whose index step is
  // at most `want` bytes) with every index of the axes after it, at fixed indices of the
  // axes before it. All of the chunk is decoded, in order; what the task selects is copied.
  const std::size_t ndim = task.axes.size();
  std::size_t axis = 0;
  while (static_cast<std::uint64_t>(r.chunk_strides[axis]) > want) ++axis;  // the last axis's step is one element
  const auto step = static_cast<std::uint64_t>(r.chunk_strides[axis]);
  const std::uint64_t extent = r.spec.shape[axis];
  const std::uint64_t per_piece = std::clamp<std::uint64_t>((want + step / 2) / step, 1, extent);
  Buffer piece = Buffer::allocate(to_size(per_piece * step));

  // The copy of one piece: its box on `axis` and the task's box on the axes after it.
  std::vector<std::uint64_t> counts(ndim - axis);
  std::vector<std::int64_t> src_strides(ndim - axis), dst_strides(ndim - axis);
  std::int64_t inner_src = 0, inner_dst = 0;
  for (std::size_t a = axis; a < ndim; ++a) {
    const AxisRun& run = task.axes[a].runs()[0];
    counts[a - axis] = run.count;
    src_strides[a - axis] = r.chunk_strides[a];
    dst_strides[a - axis] = r.region.byte_strides[a] * run.out_step;
    if (a > axis) {
      inner_src += r.chunk_strides[a] * static_cast<std::int64_t>(run.chunk_start);
      inner_dst += r.region.byte_strides[a] * static_cast<std::int64_t>(run.out_start);
    }
  }
  const AxisRun& axis_run = task.axes[axis].runs()[0];
  std::vector<std::uint64_t> outer(axis, 0);  // the indices of the axes before `axis`
  for (;;) {
    bool selected = true;
    std::int64_t outer_dst = 0;
    for (std::size_t a = 0; a < axis; ++a) {
      const AxisRun& run = task.axes[a].runs()[0];
      if (outer[a] < run.chunk_start || outer[a] >= run.chunk_start + run.count) {
        selected = false;
        break;
      }
      const std::int64_t out = static_cast<std::int64_t>(run.out_start) +
                               static_cast<std::int64_t>(outer[a] - run.chunk_start) * run.out_step;
      outer_dst += r.region.byte_strides[a] * out;
    }
    for (std::uint64_t first = 0; first < extent; first += per_piece) {
      const std::uint64_t n = std::min(per_piece, extent - first);
      if (!reader->read(MutableByteView(piece.data(), to_size(n * step)))) return false;
      const std::uint64_t lo = std::max(first, axis_run.chunk_start);
      const std::uint64_t hi = std::min(first + n, axis_run.chunk_start + axis_run.count);
      if (!selected || lo >= hi) continue;
      counts[0] = hi - lo;
      const std::int64_t out = static_cast<std::int64_t>(axis_run.out_start) +
                               static_cast<std::int64_t>(lo - axis_run.chunk_start) * axis_run.out_step;
      std::byte* const dst = r.region.data + outer_dst + r.region.byte_strides[axis] * out + inner_dst;
      if (r.faults != nullptr) {
        std::int64_t below = 0, above = 0;  // the span this copy writes, around dst
        for (std::size_t a = 0; a < counts.size(); ++a) {
          const std::int64_t reach = dst_strides[a] * static_cast<std::int64_t>(counts[a] - 1);
          (reach < 0 ? below : above) += reach;
        }
        r.faults->before_write(dst + below, dst + above + static_cast<std::int64_t>(r.metadata.dtype.size()));
      }
      copy_strided(counts, dst, dst_strides, piece.data() + (lo - first) * step + inner_src, src_strides,
                   r.metadata.dtype.size());
    }
    std::size_t a = axis;
    while (a-- > 0) {
      if (++outer[a] < r.spec.shape[a]) break;
      outer[a] = 0;
    }
    if (a == static_cast<std::size_t>(-1)) break;
  }
  return reader->finish();
}

}  // namespace

ChunkReadRequest::ChunkReadRequest(Store& store_in, const ArrayMetadata& m, const NDView& region_in)
    : ChunkReadRequest(store_in, m, region_in, m.prepared_chain()) {}

ChunkReadRequest::ChunkReadRequest(Store& store_in, const ArrayMetadata& m, const NDView& region_in,
                                   const PreparedChain& chain_in)
    : store(store_in),
      metadata(m),
      region(region_in),
      chain(chain_in),
      spec(chain.spec()),
      chunk_strides(chain.strides()),
      chunk_bytes(chain.chunk_bytes()),
      fill(m.fill_value.bytes()),
      raw(chain.stores_raw_bytes()) {}

SlabPlan plan_slabs(const ChunkTask& task, std::span<const std::int64_t> chunk_strides, std::size_t itemsize) {
  const std::size_t ndim = task.axes.size();
  SlabPlan plan;
  plan.box_begin.resize(ndim);
  plan.box_extent.resize(ndim);
  for (std::size_t a = 0; a < ndim; ++a) {
    std::uint64_t lo = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t hi = 0;
    for (const AxisRun& run : task.axes[a].runs()) {
      lo = std::min(lo, run.chunk_start);
      hi = std::max(hi, run.chunk_start + (run.count - 1) * run.chunk_step + 1);
    }
    plan.box_begin[a] = lo;
    plan.box_extent[a] = hi - lo;
  }
  // Slabs indexed by the box on the first L axes, each spanning the box on the others:
  // pick the L that reads the fewest bytes, counting each read call as kBytesPerCall.
  std::uint64_t best_cost = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t outer = 0; outer <= ndim; ++outer) {
    std::uint64_t slabs = 1;
    for (std::size_t a = 0; a < outer; ++a) slabs *= plan.box_extent[a];
    std::uint64_t slab = itemsize;
    for (std::size_t a = outer; a < ndim; ++a) {
      slab += (plan.box_extent[a] - 1) * static_cast<std::uint64_t>(chunk_strides[a]);
    }
    const std::uint64_t cost = slabs * (slab + kBytesPerCall);
    if (cost < best_cost) {
      best_cost = cost;
      plan.outer_axes = outer;
      plan.slab_bytes = slab;
      plan.num_slabs = slabs;
    }
  }
  return plan;
}

void read_chunk_task(const ChunkReadRequest& r, const std::string& key, const ChunkTask& task) {
  // Where the chunk lands in the output as one block in its own layout, if it does.
  const bool direct =
      task.is_entire_chunk && region_matches_chunk_layout(task, r.region.byte_strides, r.chunk_strides);
  MutableByteView block;
  if (direct) {
    block = MutableByteView(r.region.data + task_region_offset(task, r.region.byte_strides), to_size(r.chunk_bytes));
    if (r.faults != nullptr) r.faults->before_write(block.data(), block.data() + block.size());
  }
  if (r.raw) {
    if (!direct) {
      if (task.is_entire_chunk && read_raw_rows(r, key, task)) return;
      return read_raw_part(r, key, task);
    }
    const ByteRange whole = ByteRange::range(0, r.chunk_bytes);
    const std::optional<std::uint64_t> stored = r.store.read_into(key, std::span(&whole, 1), std::span(&block, 1));
    if (!stored) return fill_task(r, task);
    if (*stored != r.chunk_bytes) fail_raw_size(r, *stored);
    return;
  }
  if (!direct && may_decode_in_pieces(r, task)) {
    // Read from the store as the pieces are decoded: neither the encoded nor the decoded
    // chunk is held whole where the store and the codecs allow it.
    const std::shared_ptr<ByteSource> source = r.store.open_reader(key);
    if (!source) return fill_task(r, task);
    if (decode_in_pieces(r, source, task)) return;
    // The whole value, from the same source (the value as it was when opened): in pieces
    // from memory where a checksum needs all of it, else decoded whole.
    if (const std::optional<ByteView> bytes = source->in_memory()) return decode_whole(r, *bytes, task);
    Buffer bytes = Buffer::allocate(to_size(source->size()));
    bytes.shrink(source->read(0, bytes.mutable_view()));
    if (decode_in_pieces(r, std::make_shared<MemorySource>(bytes.view()), task)) return;
    return decode_whole(r, bytes.view(), task);
  }
  const std::optional<Buffer> encoded = r.store.get(key, BufferPrototype::host());
  if (!encoded) return fill_task(r, task);
  if (direct && r.chain.decode_into(encoded->view(), block)) return;
  decode_whole(r, encoded->view(), task);
}

}  // namespace zarrkit
