// Reading a shard: in part, the index first, then only the inner chunks a task needs, as
// coalesced byte ranges; whole, through one reader of the value, raw inner chunks straight
// into the output and the others a window at a time (see sharding_level.h). locate: the
// index, and where the inner chunks a task touches are stored, for callers that fetch and
// decode them themselves.
#include <algorithm>
#include <limits>

#include <fmt/ranges.h>

#include "codecs/sharding_level.h"
#include "core/block_runs.h"
#include "core/checked_math.h"
#include "stores/byte_range_coalescer.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {

struct ReadContext {
  Store& store;
  const std::string& key;
  const NDView& region;
  ByteView fill;
  std::uint64_t coalesce_gap;
  std::uint64_t read_window;  // encoded bytes read at a time through a reader
};

// The work for one stored inner chunk.
struct InnerRead {
  const InnerChunkRef* chunk = nullptr;
  ShardIndexEntry entry;
  bool nested = false;      // read in part, one level down
  ByteView bytes;           // its encoded bytes, once fetched (owned by the caller of the decode)
};

void fill_all(const BlockRuns& runs, const ReadContext& ctx) {
  fill_region(runs, ctx.region.data, ctx.region.byte_strides, ctx.fill);
}

// Reads bytes [offset, offset + dest.size()) of the shard through its reader.
// DataLossError when the value ends first (it shrank after its size was taken).
void read_exactly(const ShardSource& source, std::uint64_t offset, MutableByteView dest) {
  const std::uint64_t begin = source.base + offset;
  const std::size_t got = source.reader->read(begin, dest);
  if (got != dest.size()) {
    fail_data_loss("bytes [{}, {}) of the shard cannot be read: it ends at byte {} now (it shrank while read)", begin,
                   begin + dest.size(), begin + got);
  }
}

// The byte ranges of `reads`' encoded inner chunks, `base` bytes into the store value.
// Offsets and sizes were checked against the shard's size: no overflow.
std::vector<ByteRange> inner_ranges(std::span<InnerRead* const> reads, std::uint64_t base) {
  std::vector<ByteRange> ranges;
  ranges.reserve(reads.size());
  for (const InnerRead* read : reads) {
    ranges.push_back(ByteRange::range(base + read->entry.offset, base + read->entry.offset + read->entry.nbytes));
  }
  return ranges;
}

void read_level(const ShardLevel& level, const ShardSource& source, const BlockRuns& runs, const Shape& valid,
                const ReadContext& ctx);

// Where an inner chunk selected whole by `runs` starts in the region, when the region holds
// it in the inner chunk's own C layout (one run per axis, in order); null otherwise.
std::byte* block_in_region(const BlockRuns& runs, const ShardLevel& level, const NDView& region) {
  const Shape& inner = level.layout.inner_spec.shape;
  const std::span<const std::int64_t> inner_strides = level.inner->strides();
  std::int64_t offset = 0;
  for (std::size_t a = 0; a < runs.size(); ++a) {
    if (runs[a].size() != 1) return nullptr;
    const AxisRun& run = runs[a][0];
    if (run.chunk_start != 0 || run.count != inner[a]) return nullptr;
    if (run.count != 1 && (run.chunk_step != 1 || region.byte_strides[a] * run.out_step != inner_strides[a])) {
      return nullptr;
    }
    offset += region.byte_strides[a] * static_cast<std::int64_t>(run.out_start);
  }
  return region.data + offset;
}

// Decodes (or, nested, reads in part) one inner chunk and copies its selected elements.
void finish_inner_read(const ShardLevel& level, const InnerRead& read, const ShardSource& source,
                       const ReadContext& ctx) {
  const BlockRuns runs = read.chunk->runs();
  try {
    if (read.nested) {
      ShardSource inner;
      inner.base = source.base + read.entry.offset;
      inner.size = read.entry.nbytes;
      inner.reader = source.reader;
      if (source.bytes) inner.bytes = source.bytes->subspan(to_size(read.entry.offset), to_size(read.entry.nbytes));
      read_level(*level.nested, inner, runs, read.chunk->valid(), ctx);
      return;
    }
    if (read.chunk->covered && read.chunk->inside) {
      // The inner chunk fills a block of the output laid out like itself: decode straight
      // into it.
      if (std::byte* block = block_in_region(runs, level, ctx.region)) {
        const MutableByteView out(block, to_size(level.inner->chunk_bytes()));
        if (level.inner->decode_into(read.bytes, out)) return;
      }
    }
    // Otherwise decode into one buffer (no intermediate ones) and copy what is selected.
    Buffer decoded = Buffer::allocate(to_size(level.inner->chunk_bytes()));
    if (level.inner->decode_into(read.bytes, decoded.mutable_view())) {
      copy_block_to_region(runs, decoded.data(), level.inner->strides(), ctx.region.data, ctx.region.byte_strides,
                           level.layout.inner_spec.dtype.size());
      return;
    }
    const NDBuffer chunk = level.decode_inner(read.bytes);
    copy_block_to_region(runs, chunk.data(), level.inner->strides(), ctx.region.data, ctx.region.byte_strides,
                         level.layout.inner_spec.dtype.size());
  } catch (const Error& e) {
    rethrow_with_context(e, read.chunk->describe());
  }
}

// Raw inner chunks smaller than this go through a window rather than a read call of their
// own: a pread of page-cached data costs a few microseconds, about as much as copying
// 16 KiB out of a window (chunk_read.cpp's kBytesPerCall).
constexpr std::uint64_t kMinDirectInnerBytes = 16 << 10;

[[noreturn]] void fail_raw_inner_size(const ShardLevel& level, std::uint64_t stored) {
  const ChunkSpec& inner = level.layout.inner_spec;
  fail_data_loss("bytes codec: chunk of {} elements of {} must be {} bytes, got {}", checked_num_elements(inner.shape),
                 inner.dtype.name(), level.inner->chunk_bytes(), stored);
}

// The inner chunks of `reads` (all of them stored) through the shard's reader: those stored
// raw (of kMinDirectInnerBytes or more) that fill a block of the output laid out like
// themselves straight into that block;
// the others (by offset) a window of at most ctx.read_window encoded bytes at a time (an
// inner chunk larger than that is a window of its own), each window's inner chunks decoded
// in parallel before the next window is read.
void read_through_reader(const ShardLevel& level, const ShardSource& source, std::vector<InnerRead>& reads,
                         const ReadContext& ctx) {
  std::vector<InnerRead*> own;  // read one level down, or straight into the output
  std::vector<std::byte*> blocks;  // for own[i], its block of the output; null: nested
  std::vector<InnerRead*> windowed;
  for (InnerRead& read : reads) {
    std::byte* block = nullptr;
    if (!read.nested && level.inner->stores_raw_bytes() && level.inner->chunk_bytes() >= kMinDirectInnerBytes &&
        read.chunk->covered &&
        read.chunk->inside) {
      block = block_in_region(read.chunk->runs(), level, ctx.region);
    }
    if (read.nested || block != nullptr) {
      own.push_back(&read);
      blocks.push_back(block);
    } else {
      windowed.push_back(&read);
    }
  }
  shared_thread_pool().parallel_for(own.size(), [&](std::size_t i) {
    const InnerRead& read = *own[i];
    if (blocks[i] == nullptr) return finish_inner_read(level, read, source, ctx);
    try {
      if (read.entry.nbytes != level.inner->chunk_bytes()) fail_raw_inner_size(level, read.entry.nbytes);
      read_exactly(source, read.entry.offset, MutableByteView(blocks[i], to_size(level.inner->chunk_bytes())));
    } catch (const Error& e) {
      rethrow_with_context(e, read.chunk->describe());
    }
  });

  // Windows are coalesced reads that may span any gap, but no more than the window.
  const CoalescedRanges windows = coalesce_byte_ranges(
      inner_ranges(windowed, 0), {.max_gap = std::numeric_limits<std::uint64_t>::max(), .max_span = ctx.read_window});
  Buffer window;
  for (std::size_t w = 0; w < windows.requests.size(); ++w) {
    const std::uint64_t begin = windows.requests[w].start;
    const std::size_t span = to_size(windows.requests[w].end - begin);
    if (window.size() < span) {
      window = Buffer();  // the old window goes before the larger one comes
      window = Buffer::allocate(span);
    }
    read_exactly(source, begin, MutableByteView(window.data(), span));
    const std::span<const std::size_t> members = windows.members(w);
    for (const std::size_t k : members) {
      windowed[k]->bytes = ByteView(window.data() + windows.parts[k].offset, to_size(windows.parts[k].length));
    }
    shared_thread_pool().parallel_for(members.size(), [&](std::size_t i) {
      finish_inner_read(level, *windowed[members[i]], source, ctx);
    });
  }
}

void read_level(const ShardLevel& level, const ShardSource& source, const BlockRuns& runs, const Shape& valid,
                const ReadContext& ctx) {
  const InnerChunkSelection sel = level.select(runs, valid);
  std::optional<Buffer> index_storage;
  const std::optional<ByteView> index = fetch_shard_index(level, source, &ctx.store, ctx.key, index_storage);
  if (!index) return fill_all(runs, ctx);  // no shard: all fill value
  const std::vector<ShardIndexEntry> entries = level.codec->decode_index(*index, level.layout, source.size);

  std::vector<InnerRead> reads;
  reads.reserve(sel.chunks.size());
  for (const InnerChunkRef& chunk : sel.chunks) {
    const ShardIndexEntry& entry = entries[to_size(chunk.ordinal)];
    if (entry.is_empty()) {
      fill_all(chunk.runs(), ctx);
      continue;
    }
    InnerRead read;
    read.chunk = &chunk;
    read.entry = entry;
    // A nested shard is worth reading in part unless the task wants all of it.
    read.nested = level.nested != nullptr && !chunk.covered;
    reads.push_back(std::move(read));
  }
  if (source.reader) return read_through_reader(level, source, reads, ctx);

  // Fetch what is not at hand: every inner chunk read whole, in as few ranges as the gap
  // setting allows, through one get_ranges call.
  std::vector<InnerRead*> to_fetch;
  for (InnerRead& read : reads) {
    if (read.nested) continue;
    if (source.bytes) {
      read.bytes = source.bytes->subspan(to_size(read.entry.offset), to_size(read.entry.nbytes));
    } else {
      to_fetch.push_back(&read);
    }
  }
  std::optional<std::vector<Buffer>> got;  // holds the fetched bytes until they are decoded
  if (!to_fetch.empty()) {
    const CoalescedRanges fetches =
        coalesce_byte_ranges(inner_ranges(to_fetch, source.base), {.max_gap = ctx.coalesce_gap});
    const std::vector<ByteRange>& ranges = fetches.requests;
    got = ctx.store.get_ranges(ctx.key, ranges, BufferPrototype::host());
    if (!got) return fill_all(runs, ctx);  // deleted since the index was read: now all fill
    if (got->size() != ranges.size()) throw InternalError("get_ranges returned the wrong number of ranges");
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      if ((*got)[i].size() != ranges[i].end - ranges[i].start) {
        fail_data_loss("bytes [{}, {}) of the shard hold inner chunks, but the shard ends at byte {}", ranges[i].start,
                       ranges[i].end, ranges[i].start + (*got)[i].size());
      }
    }
    for (std::size_t k = 0; k < to_fetch.size(); ++k) {
      const CoalescedRanges::Part& part = fetches.parts[k];
      to_fetch[k]->bytes = (*got)[part.request].view().subspan(to_size(part.offset), to_size(part.length));
    }
  }

  // Decoding is the expensive part: spread it over the pool (inline when this task already
  // runs on the pool).
  shared_thread_pool().parallel_for(reads.size(), [&](std::size_t i) { finish_inner_read(level, reads[i], source, ctx); });
}

}  // namespace

std::optional<ByteView> fetch_shard_index(const ShardLevel& level, const ShardSource& source, Store* store,
                                          std::string_view key, std::optional<Buffer>& storage) {
  const std::uint64_t index_size = level.layout.index_size;
  const bool at_start = level.codec->index_location() == ShardIndexLocation::kStart;
  if (source.size && *source.size < index_size) {
    fail_data_loss("shard of {} bytes is shorter than its {}-byte index", *source.size, index_size);
  }
  if (source.bytes) {
    return at_start ? source.bytes->first(to_size(index_size)) : source.bytes->last(to_size(index_size));
  }
  if (source.reader) {  // the size is known
    storage = Buffer::allocate(to_size(index_size));
    read_exactly(source, at_start ? 0 : *source.size - index_size, storage->mutable_view());
    return storage->view();
  }
  ByteRange range = ByteRange::last(index_size);
  if (at_start) {
    range = ByteRange::range(source.base, source.base + index_size);
  } else if (source.size) {
    const std::uint64_t end = source.base + *source.size;
    range = ByteRange::range(end - index_size, end);
  }
  if (store == nullptr) throw InternalError("shard index: neither the shard's bytes nor a store to read them from");
  storage = store->get(key, BufferPrototype::host(), range);
  if (!storage) return std::nullopt;
  if (storage->size() != index_size) {
    fail_data_loss("shard of {} bytes is shorter than its {}-byte index", storage->size(), index_size);
  }
  return storage->view();
}

void ShardLevel::read(const PartialRequest& request, const std::string& key, const ChunkTask& task) const {
  if (request.cache) return read_through_cache(request, key, task);
  Store& store = request.store;
  const ReadContext ctx{store, key, request.region, layout.shard_spec.fill_value.bytes(), request.settings.coalesce_gap,
                        std::max<std::uint64_t>(request.settings.read_window, 1)};
  const BlockRuns runs = task_runs(task);
  const StoreCapabilities capabilities = store.capabilities();
  ShardSource source;
  std::optional<Buffer> whole;
  std::unique_ptr<ByteSource> reader;
  if (!capabilities.partial_reads || (task.covers_whole_chunk && capabilities.batched_gets)) {
    // Ranges no cheaper than the whole, or a remote store, where one request for the whole
    // shard hides the latency of many: one get.
    whole = store.get(key, BufferPrototype::host());
    if (!whole) return fill_all(runs, ctx);
    source.bytes = whole->view();
    source.size = whole->size();
  } else if (task.covers_whole_chunk) {
    // Everything wanted: the value opened once (one snapshot, whose size checks the index)
    // and read through the reader, a window at a time, not fetched whole.
    reader = store.open_reader(key);
    if (!reader) return fill_all(runs, ctx);
    source.size = reader->size();
    if (const std::optional<ByteView> bytes = reader->in_memory()) {
      source.bytes = *bytes;  // the store's reader holds the whole value already: no copies
    } else {
      source.reader = reader.get();
    }
  }
  read_level(*this, source, runs, chunk_valid_extent(task, layout.shard_spec.shape, request.array_shape), ctx);
}

LocatedChunks ShardLevel::locate(const ChunkSource& where, const BlockRuns& runs,
                                 std::span<const std::uint64_t> valid) const {
  LocatedChunks located;
  located.inner = inner;
  located.selection = select(runs, valid);
  located.bytes.resize(located.selection.chunks.size());
  ShardSource source;
  source.base = where.base;
  source.bytes = where.bytes;
  source.size = where.bytes ? std::optional<std::uint64_t>(where.bytes->size()) : where.size;
  if (source.base != 0 && !source.size) throw InternalError("locate: a shard inside a value needs its size");
  std::optional<Buffer> index_storage;
  const std::optional<ByteView> index = fetch_shard_index(*this, source, where.store, where.key, index_storage);
  if (!index) return located;  // no shard: every inner chunk reads as the fill value
  located.stored = true;
  const std::vector<ShardIndexEntry> entries = codec->decode_index(*index, layout, source.size);
  for (std::size_t i = 0; i < located.selection.chunks.size(); ++i) {
    const ShardIndexEntry& entry = entries[to_size(located.selection.chunks[i].ordinal)];
    if (entry.is_empty()) continue;
    // Checked against the shard's size where it is known; otherwise the caller's fetch of
    // the range checks that it holds nbytes.
    located.bytes[i] = InnerChunkBytes{true, source.base + entry.offset, entry.nbytes};
  }
  return located;
}

}  // namespace zarrkit
