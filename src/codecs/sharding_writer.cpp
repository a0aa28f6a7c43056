// Writing a shard: encode what the task covers, merge the rest, keep untouched inner chunks'
// bytes as they are (see sharding_level.h).
#include <cstring>

#include <fmt/ranges.h>

#include "codecs/sharding_level.h"
#include "core/block_runs.h"
#include "core/checked_math.h"
#include "core/key_locks.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {

struct WriteContext {
  const NDView& input;  // region coordinates
  const FillValue& fill;
  bool write_empty_chunks;
};

// The new bytes of one inner chunk: absent (empty entry) or encoded.
using InnerBytes = std::optional<Buffer>;

// An inner chunk of the level built from `base` (its old decoded values, or null for all fill
// value) with the task's elements written over it; nullopt if it then holds only the fill
// value (and empty chunks are not kept).
InnerBytes encode_inner(const ShardLevel& level, const InnerChunkRef& chunk, NDBuffer values, const WriteContext& ctx) {
  const ChunkSpec& spec = level.layout.inner_spec;
  copy_region_to_block(chunk.runs(), ctx.input.data, ctx.input.byte_strides, values.data(), level.inner->strides(),
                       spec.dtype.size());
  if (!ctx.write_empty_chunks && all_equal_fill(values.buffer().view(), spec.dtype, spec.fill_value)) {
    return std::nullopt;
  }
  return level.inner->encode(values);
}

// An inner chunk the task covers completely: its old values do not matter.
InnerBytes encode_covered(const ShardLevel& level, const InnerChunkRef& chunk, const WriteContext& ctx) {
  const ChunkSpec& spec = level.layout.inner_spec;
  // Past the array's edge an inner chunk holds the fill value, as zarr-python pads it.
  NDBuffer values = chunk.inside ? NDBuffer::allocate(spec.shape, spec.dtype)
                                 : NDBuffer::filled(spec.shape, spec.dtype, spec.fill_value);
  return encode_inner(level, chunk, std::move(values), ctx);
}

// Encodes the index of `entries` with the level's index codecs.
Buffer encode_index(const ShardLevel& level, const std::vector<ShardIndexEntry>& entries) {
  const ChunkSpec& spec = level.layout.index_spec;
  NDBuffer index = NDBuffer::allocate(spec.shape, spec.dtype);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::memcpy(index.data() + 16 * i, &entries[i].offset, 8);  // native order: the bytes codec swaps
    std::memcpy(index.data() + 16 * i + 8, &entries[i].nbytes, 8);
  }
  Buffer encoded = level.codec->index_codecs().encode(index, spec);
  if (encoded.size() != level.layout.index_size) {
    throw InternalError(fmt::format("shard index encoded to {} bytes, expected {}", encoded.size(),
                                    level.layout.index_size));
  }
  return encoded;
}

// The old shard's bytes and its validated index.
struct OldShard {
  ByteView bytes;
  std::vector<ShardIndexEntry> entries;  // empty when there is no old shard

  ByteView entry_bytes(std::uint64_t ordinal) const {
    if (entries.empty() || entries[to_size(ordinal)].is_empty()) return {};
    const ShardIndexEntry& e = entries[to_size(ordinal)];
    return bytes.subspan(to_size(e.offset), to_size(e.nbytes));  // checked by decode_index
  }
  bool has(std::uint64_t ordinal) const { return !entries.empty() && !entries[to_size(ordinal)].is_empty(); }
};

OldShard parse_old(const ShardLevel& level, std::optional<ByteView> bytes) {
  OldShard old;
  if (!bytes) return old;
  const std::uint64_t index_size = level.layout.index_size;
  if (bytes->size() < index_size) {
    fail_data_loss("the stored shard of {} bytes is shorter than its {}-byte index", bytes->size(), index_size);
  }
  const ByteView index = level.codec->index_location() == ShardIndexLocation::kStart
                             ? bytes->first(to_size(index_size))
                             : bytes->last(to_size(index_size));
  old.bytes = *bytes;
  try {
    old.entries = level.codec->decode_index(index, level.layout, bytes->size());
  } catch (const Error& e) {
    rethrow_with_context(e, "the stored shard cannot be updated");
  }
  return old;
}

// Lays out a shard: pieces (by ordinal) in the level's write order, then the index at its
// place. nullopt when no inner chunk is stored.
std::optional<Buffer> assemble(const ShardLevel& level, const std::vector<std::optional<ByteView>>& pieces) {
  const bool at_start = level.codec->index_location() == ShardIndexLocation::kStart;
  const std::uint64_t index_size = level.layout.index_size;
  std::vector<ShardIndexEntry> entries(pieces.size());
  std::uint64_t cursor = at_start ? index_size : 0;
  bool any = false;
  const std::vector<std::uint64_t>& order = level.write_order();
  for (const std::uint64_t ordinal : order) {
    const auto& piece = pieces[to_size(ordinal)];
    if (!piece) continue;
    any = true;
    entries[to_size(ordinal)] = ShardIndexEntry{cursor, piece->size()};
    cursor = checked_add(cursor, piece->size(), "shard size");
  }
  if (!any) return std::nullopt;
  const Buffer index = encode_index(level, entries);
  Buffer out = Buffer::allocate(to_size(checked_add(cursor, at_start ? 0 : index_size, "shard size")));
  std::byte* dst = out.data();
  if (at_start) dst = std::copy_n(index.data(), index.size(), dst);
  for (const std::uint64_t ordinal : order) {
    const auto& piece = pieces[to_size(ordinal)];
    if (piece && !piece->empty()) dst = std::copy_n(piece->data(), piece->size(), dst);
  }
  if (!at_start) std::copy_n(index.data(), index.size(), dst);
  return out;
}

std::optional<Buffer> update_level(const ShardLevel& level, std::optional<ByteView> old_bytes,
                                   const InnerChunkSelection& sel, std::vector<InnerBytes>& encoded,
                                   std::vector<bool>& done, const WriteContext& ctx);

// The new bytes of an inner chunk the task covers only in part: merged with its old value.
InnerBytes merge_inner(const ShardLevel& level, const InnerChunkRef& chunk, const OldShard& old,
                       const WriteContext& ctx) {
  const ChunkSpec& spec = level.layout.inner_spec;
  const bool stored = old.has(chunk.ordinal);
  if (level.nested) {
    // A nested shard: update it the same way, one level down, keeping its untouched chunks.
    const InnerChunkSelection inner = level.nested->select(chunk.runs(), chunk.valid());
    std::vector<InnerBytes> encoded(to_size(level.nested->layout.num_inner_chunks));
    std::vector<bool> done(encoded.size(), false);
    auto bytes = update_level(*level.nested, stored ? std::optional(old.entry_bytes(chunk.ordinal)) : std::nullopt,
                              inner, encoded, done, ctx);
    return bytes;
  }
  NDBuffer values = stored ? level.decode_inner(old.entry_bytes(chunk.ordinal))
                           : NDBuffer::filled(spec.shape, spec.dtype, spec.fill_value);
  return encode_inner(level, chunk, std::move(values), ctx);
}

// The level's new shard. `encoded[ordinal]` holds inner chunks already encoded (where
// `done[ordinal]`); the rest of the touched ones are encoded or merged here.
std::optional<Buffer> update_level(const ShardLevel& level, std::optional<ByteView> old_bytes,
                                   const InnerChunkSelection& sel, std::vector<InnerBytes>& encoded,
                                   std::vector<bool>& done, const WriteContext& ctx) {
  const OldShard old = parse_old(level, old_bytes);
  std::vector<std::optional<ByteView>> pieces(to_size(level.layout.num_inner_chunks));
  // Untouched inner chunks keep their bytes (touched ones are replaced below).
  if (!old.entries.empty()) {
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      if (old.has(i)) pieces[i] = old.entry_bytes(i);
    }
  }
  for (const InnerChunkRef& chunk : sel.chunks) {
    const std::size_t i = to_size(chunk.ordinal);
    if (!done[i]) {
      try {
        encoded[i] = chunk.covered ? encode_covered(level, chunk, ctx) : merge_inner(level, chunk, old, ctx);
      } catch (const Error& e) {
        rethrow_with_context(e, chunk.describe());
      }
      done[i] = true;
    }
    pieces[i] = encoded[i] ? std::optional<ByteView>(encoded[i]->view()) : std::nullopt;
  }
  return assemble(level, pieces);
}

}  // namespace

void ShardLevel::write(const PartialRequest& request, const std::string& key, const ChunkTask& task) const {
  const ShardLevel& level = *this;
  Store& store = request.store;
  const WriteContext ctx{request.region, layout.shard_spec.fill_value, request.settings.write_empty_chunks};
  const InnerChunkSelection sel =
      select(task_runs(task), chunk_valid_extent(task, layout.shard_spec.shape, request.array_shape));

  // Before the lock: encode the inner chunks the task covers completely; they do not depend
  // on what is stored. In parallel when this task runs alone (inline inside a pool task).
  std::vector<InnerBytes> encoded(to_size(level.layout.num_inner_chunks));
  std::vector<bool> done(encoded.size(), false);
  std::vector<const InnerChunkRef*> covered;
  for (const InnerChunkRef& chunk : sel.chunks) {
    if (chunk.covered) covered.push_back(&chunk);
  }
  shared_thread_pool().parallel_for(covered.size(), [&](std::size_t i) {
    try {
      encoded[to_size(covered[i]->ordinal)] = encode_covered(level, *covered[i], ctx);
    } catch (const Error& e) {
      rethrow_with_context(e, covered[i]->describe());
    }
  });
  for (const InnerChunkRef* chunk : covered) done[to_size(chunk->ordinal)] = true;
  // Nothing of the old shard survives when the task covers every inner chunk inside the array.
  const bool keeps_old = covered.size() != sel.chunks_inside_array;

  const std::lock_guard lock(key_write_mutex(store.describe(), key));
  if (!keeps_old) {
    const std::optional<Buffer> shard = update_level(level, std::nullopt, sel, encoded, done, ctx);
    if (shard) {
      store.set(key, shard->view());
    } else {
      store.erase(key);  // no inner chunk left: zarr-python deletes such a shard too
    }
    return;
  }
  // Other processes updating this shard are kept out (a lock) or make this write retry with
  // their shard (a conditional write): Store::update. The inner chunks merged with the old
  // shard are merged again on a retry, so each attempt starts from the ones encoded above.
  store.update(key, [&](std::optional<Buffer> old) {
    std::vector<InnerBytes> attempt_encoded = encoded;
    std::vector<bool> attempt_done = done;
    return update_level(level, old ? std::optional(old->view()) : std::nullopt, sel, attempt_encoded, attempt_done,
                        ctx);
  });
}

}  // namespace zarrkit
