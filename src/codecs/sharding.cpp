// The v3 "sharding_indexed" codec. See sharding.h for the layout and what the engine uses.
//
// Every size comes from the validated shard spec (layout()); the bytes of a shard are only
// trusted after their index passed decode_index(), which checks each entry against the
// shard's size before anything is read or allocated from it.
#include "codecs/sharding.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <utility>

#include <fmt/ranges.h>

#include "codecs/register.h"
#include "codecs/sharding_level.h"
#include "core/checked_math.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

// No shard index may be bigger than the largest chunk we would decode.
constexpr std::uint64_t kMaxIndexBytes = MetadataLimits{}.max_chunk_bytes;

std::string_view location_name(ShardIndexLocation location) {
  return location == ShardIndexLocation::kStart ? "start" : "end";
}

// C-order coordinates of cell `ordinal` of `grid`.
Shape coords_of(std::uint64_t ordinal, const Shape& grid) {
  Shape coords(grid.size());
  for (std::size_t d = grid.size(); d-- > 0;) {
    coords[d] = ordinal % grid[d];
    ordinal /= grid[d];
  }
  return coords;
}

// Copies between a C-contiguous inner chunk and its block of a C-contiguous shard, one
// contiguous run at a time. Trailing dimensions where the chunk spans the whole shard are
// merged into the run, so a chunk covering whole rows is one memcpy.
class BlockCopier {
 public:
  BlockCopier(const Shape& shard_shape, const Shape& chunk_shape, std::size_t itemsize)
      : chunk_shape_(chunk_shape), shard_strides_(shard_shape.size()) {
    const std::size_t ndim = shard_shape.size();
    std::uint64_t stride = itemsize;
    for (std::size_t d = ndim; d-- > 0;) {
      shard_strides_[d] = stride;
      stride *= shard_shape[d];  // cannot overflow: the shard's size was checked
    }
    // Dimensions [outer_dims_, ndim) form one run.
    outer_dims_ = ndim;
    run_bytes_ = itemsize;
    while (outer_dims_ > 0) {
      const std::size_t d = outer_dims_ - 1;
      run_bytes_ *= chunk_shape[d];
      outer_dims_ = d;
      if (chunk_shape[d] != shard_shape[d]) break;
    }
  }

  // Writes a whole inner chunk into its block of the shard, at `origin` (in elements).
  void scatter(std::byte* shard, const std::byte* chunk, const Shape& origin) const {
    for_each_run(origin, [&](std::uint64_t shard_offset, std::uint64_t chunk_offset) {
      std::memcpy(shard + shard_offset, chunk + chunk_offset, run_bytes_);
    });
  }
  // Reads the block at `origin` of the shard into a whole inner chunk.
  void gather(std::byte* chunk, const std::byte* shard, const Shape& origin) const {
    for_each_run(origin, [&](std::uint64_t shard_offset, std::uint64_t chunk_offset) {
      std::memcpy(chunk + chunk_offset, shard + shard_offset, run_bytes_);
    });
  }

 private:
  template <typename Fn>
  void for_each_run(const Shape& origin, Fn&& fn) const {
    std::uint64_t base = 0;
    for (std::size_t d = 0; d < origin.size(); ++d) base += origin[d] * shard_strides_[d];
    Shape index(outer_dims_, 0);
    std::uint64_t chunk_offset = 0;
    for (;;) {
      std::uint64_t shard_offset = base;
      for (std::size_t d = 0; d < outer_dims_; ++d) shard_offset += index[d] * shard_strides_[d];
      fn(shard_offset, chunk_offset);
      chunk_offset += run_bytes_;
      std::size_t d = outer_dims_;  // odometer over the outer dimensions, last fastest
      while (d > 0 && ++index[d - 1] == chunk_shape_[d - 1]) index[--d] = 0;
      if (d == 0) return;
    }
  }

  Shape chunk_shape_;
  std::vector<std::uint64_t> shard_strides_;
  std::size_t outer_dims_ = 0;
  std::size_t run_bytes_ = 0;
};

Shape block_origin(std::uint64_t ordinal, const ShardLayout& layout) {
  Shape origin = coords_of(ordinal, layout.chunks_per_shard);
  for (std::size_t d = 0; d < origin.size(); ++d) origin[d] *= layout.inner_spec.shape[d];
  return origin;
}

std::string describe_inner(std::uint64_t ordinal, const ShardLayout& layout) {
  return fmt::format("inner chunk ({}) of the shard", fmt::join(coords_of(ordinal, layout.chunks_per_shard), ","));
}

// ---- The nesting limit ------------------------------------------------------------------------

// Sharding's factory builds its inner chain, which may build sharding again: count the
// levels on this thread while that recursion runs.
thread_local int tl_sharding_depth = 0;

class NestingGuard {
 public:
  NestingGuard() {
    if (tl_sharding_depth >= kMaxShardingDepth) {
      fail_resource("sharding_indexed is nested more than {} levels deep", kMaxShardingDepth);
    }
    ++tl_sharding_depth;
  }
  ~NestingGuard() { --tl_sharding_depth; }
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;
};

}  // namespace

// ---- Free helpers -----------------------------------------------------------------------------

std::uint64_t inner_chunk_ordinal(std::span<const std::uint64_t> coords, const ShardLayout& layout) {
  const Shape& grid = layout.chunks_per_shard;
  if (coords.size() != grid.size()) {
    fail_invalid("inner chunk coordinates have {} dimensions, the shard has {}", coords.size(), grid.size());
  }
  std::uint64_t ordinal = 0;
  for (std::size_t d = 0; d < grid.size(); ++d) {
    if (coords[d] >= grid[d]) {
      fail_invalid("inner chunk coordinate {} of dimension {} is outside the shard's {} inner chunks", coords[d], d,
                   grid[d]);
    }
    ordinal = ordinal * grid[d] + coords[d];  // < num_inner_chunks, which fits
  }
  return ordinal;
}

bool index_is_empty(std::span<const ShardIndexEntry> entries) {
  return std::all_of(entries.begin(), entries.end(), [](const ShardIndexEntry& e) { return e.is_empty(); });
}

std::vector<std::uint64_t> morton_order(const Shape& grid) {
  const std::uint64_t count = checked_num_elements(grid);
  std::vector<unsigned> bits(grid.size());
  unsigned total_bits = 0;
  for (std::size_t d = 0; d < grid.size(); ++d) {
    bits[d] = grid[d] <= 1 ? 0u : static_cast<unsigned>(64 - __builtin_clzll(grid[d] - 1));
    total_bits += bits[d];
  }
  std::vector<std::uint64_t> order(to_size(count, "number of inner chunks"));
  std::iota(order.begin(), order.end(), std::uint64_t{0});
  // Codes that do not fit 64 bits would need a grid of over 2^32 inner chunks in practice;
  // such a grid keeps C order (still valid: readers follow the index, not the order).
  if (total_bits > 64 || grid.empty()) return order;
  const unsigned max_bits = *std::max_element(bits.begin(), bits.end());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> keyed(order.size());
  Shape coords(grid.size(), 0);
  for (std::uint64_t ordinal = 0; ordinal < count; ++ordinal) {
    std::uint64_t code = 0;
    unsigned out_bit = 0;
    for (unsigned level = 0; level < max_bits; ++level) {
      for (std::size_t d = 0; d < grid.size(); ++d) {
        if (level < bits[d]) code |= ((coords[d] >> level) & 1u) << out_bit++;
      }
    }
    keyed[ordinal] = {code, ordinal};
    for (std::size_t d = grid.size(); d-- > 0;) {  // next C-order cell
      if (++coords[d] < grid[d]) break;
      coords[d] = 0;
    }
  }
  std::sort(keyed.begin(), keyed.end());
  for (std::size_t i = 0; i < keyed.size(); ++i) order[i] = keyed[i].second;
  return order;
}

// ---- The codec --------------------------------------------------------------------------------

ShardingCodec::ShardingCodec(Shape chunk_shape, CodecChain inner_codecs, CodecChain index_codecs,
                             ShardIndexLocation location)
    : chunk_shape_(std::move(chunk_shape)),
      inner_(std::move(inner_codecs)),
      index_(std::move(index_codecs)),
      location_(location) {}

nlohmann::json ShardingCodec::to_json() const {
  return codec_json(name(), {{"chunk_shape", chunk_shape_},
                             {"codecs", inner_.to_json()},
                             {"index_codecs", index_.to_json()},
                             {"index_location", location_name(location_)}});
}

ShardLayout ShardingCodec::layout(const ChunkSpec& shard_spec) const {
  const Shape& shard_shape = shard_spec.shape;
  if (shard_shape.size() != chunk_shape_.size()) {
    fail_invalid("sharding_indexed: chunk_shape [{}] has {} dimensions but the shard [{}] has {}",
                 fmt::join(chunk_shape_, ","), chunk_shape_.size(), fmt::join(shard_shape, ","), shard_shape.size());
  }
  ShardLayout layout;
  layout.shard_spec = shard_spec;
  layout.chunks_per_shard.resize(shard_shape.size());
  for (std::size_t d = 0; d < shard_shape.size(); ++d) {
    if (shard_shape[d] == 0 || shard_shape[d] % chunk_shape_[d] != 0) {
      fail_invalid("sharding_indexed: chunk_shape [{}] does not divide the shard shape [{}] evenly (dimension {})",
                   fmt::join(chunk_shape_, ","), fmt::join(shard_shape, ","), d);
    }
    layout.chunks_per_shard[d] = shard_shape[d] / chunk_shape_[d];
  }
  layout.num_inner_chunks = checked_num_elements(layout.chunks_per_shard);
  // Strings and bytes have no size per element; their inner codec (vlen-*) checks the data.
  if (!shard_spec.dtype.is_variable_length()) (void)checked_nbytes(shard_shape, shard_spec.dtype);

  layout.inner_spec = ChunkSpec{chunk_shape_, shard_spec.dtype, shard_spec.fill_value};
  inner_.validate(layout.inner_spec);

  Shape index_shape = layout.chunks_per_shard;
  index_shape.push_back(2);
  const DataType u64 = DataType::uint_(64);
  layout.index_spec = ChunkSpec{std::move(index_shape), u64, FillValue::of(kShardEntryEmpty)};
  const auto raw_index_bytes = try_mul(layout.num_inner_chunks, 16);
  if (!raw_index_bytes || *raw_index_bytes > kMaxIndexBytes) {
    fail_resource("sharding_indexed: a shard of {} inner chunks needs an index larger than the limit of {} bytes",
                  layout.num_inner_chunks, kMaxIndexBytes);
  }
  index_.validate(layout.index_spec);
  const auto index_size = index_.encoded_size(layout.index_spec);
  if (!index_size) {
    fail_invalid("sharding_indexed: index_codecs {} do not have a fixed encoded size (no compression is allowed)",
                 index_.to_json().dump());
  }
  layout.index_size = *index_size;
  return layout;
}

void ShardingCodec::validate(const ChunkSpec& shard_spec) const { (void)layout(shard_spec); }

std::shared_ptr<const PartialChunkCodec> ShardingCodec::prepare_partial(const ChunkSpec& shard_spec) const {
  return std::make_shared<const ShardLevel>(*this, shard_spec);
}

std::shared_ptr<const ArrayToBytesCodec> ShardingCodec::with_inner_chain(const CodecChain& inner) const {
  return std::make_shared<const ShardingCodec>(chunk_shape_, inner, index_, location_);
}

ByteRange ShardingCodec::index_byte_range(const ShardLayout& layout) const {
  return location_ == ShardIndexLocation::kStart ? ByteRange::range(0, layout.index_size)
                                                 : ByteRange::last(layout.index_size);
}

std::vector<ShardIndexEntry> ShardingCodec::decode_index(ByteView index_bytes, const ShardLayout& layout,
                                                         std::optional<std::uint64_t> shard_size) const {
  if (index_bytes.size() != layout.index_size) {
    fail_data_loss("shard index must be {} bytes, got {}", layout.index_size, index_bytes.size());
  }
  NDBuffer decoded;
  try {
    decoded = index_.decode(index_bytes, layout.index_spec);
  } catch (const Error& e) {
    rethrow_with_context(e, "shard index");
  }
  if (decoded.shape() != layout.index_spec.shape || !(decoded.dtype() == layout.index_spec.dtype)) {
    throw InternalError("shard index decoded to the wrong shape or type");
  }
  // Where inner chunk data may lie: between the index and the end of the shard ("start"),
  // or before the index ("end").
  const std::uint64_t data_begin = location_ == ShardIndexLocation::kStart ? layout.index_size : 0;
  std::optional<std::uint64_t> data_end;
  if (shard_size) {
    if (*shard_size < layout.index_size) {
      fail_data_loss("shard of {} bytes is shorter than its {}-byte index", *shard_size, layout.index_size);
    }
    data_end = location_ == ShardIndexLocation::kStart ? *shard_size : *shard_size - layout.index_size;
  }

  std::vector<ShardIndexEntry> entries(to_size(layout.num_inner_chunks));
  const std::byte* raw = decoded.data();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    ShardIndexEntry& entry = entries[i];
    std::memcpy(&entry.offset, raw + 16 * i, 8);  // native order: the bytes codec swapped it
    std::memcpy(&entry.nbytes, raw + 16 * i + 8, 8);
    if (entry.is_empty()) continue;
    if (entry.offset == kShardEntryEmpty || entry.nbytes == kShardEntryEmpty) {
      fail_data_loss("shard index entry of {} is (offset {}, nbytes {}): only one field is the empty marker 2^64-1",
                     describe_inner(i, layout), entry.offset, entry.nbytes);
    }
    const auto end = try_add(entry.offset, entry.nbytes);
    if (!end) {
      fail_data_loss("shard index entry of {}: offset {} + nbytes {} overflows", describe_inner(i, layout),
                     entry.offset, entry.nbytes);
    }
    if (entry.offset < data_begin) {
      fail_data_loss("shard index entry of {}: bytes [{}, {}) overlap the index, which takes the first {} bytes",
                     describe_inner(i, layout), entry.offset, *end, layout.index_size);
    }
    if (data_end && *end > *data_end) {
      if (location_ == ShardIndexLocation::kEnd && *end <= *shard_size) {
        fail_data_loss("shard index entry of {}: bytes [{}, {}) overlap the index, which takes the last {} bytes",
                       describe_inner(i, layout), entry.offset, *end, layout.index_size);
      }
      fail_data_loss("shard index entry of {}: bytes [{}, {}) reach past the end of the {}-byte shard",
                     describe_inner(i, layout), entry.offset, *end, *shard_size);
    }
  }
  return entries;
}

NDBuffer ShardingCodec::decode_inner_chunk(ByteView chunk_bytes, const ShardLayout& layout,
                                           const BufferPrototype& prototype) const {
  NDBuffer chunk = inner_.decode(chunk_bytes, layout.inner_spec, prototype);
  if (chunk.shape() != layout.inner_spec.shape || !(chunk.dtype() == layout.inner_spec.dtype)) {
    throw InternalError(fmt::format("sharding_indexed: the inner codecs decoded an array of shape [{}], expected [{}]",
                                    fmt::join(chunk.shape(), ","), fmt::join(layout.inner_spec.shape, ",")));
  }
  return chunk;
}

bool ShardingCodec::decode_inner_chunk_into(ByteView chunk_bytes, const ShardLayout& layout,
                                            MutableByteView out) const {
  return inner_.decode_into(chunk_bytes, layout.inner_spec, out);
}

NDBuffer ShardingCodec::decode(ByteView shard, const ChunkSpec& shard_spec, const BufferPrototype& prototype) const {
  const ShardLayout lay = layout(shard_spec);
  if (!is_host_accessible(prototype.kind())) {
    fail_unsupported("sharding_indexed cannot decode into {} memory", memory_kind_name(prototype.kind()));
  }
  if (shard.size() < lay.index_size) {
    fail_data_loss("shard of {} bytes is shorter than its {}-byte index", shard.size(), lay.index_size);
  }
  const ByteView index_bytes = location_ == ShardIndexLocation::kStart
                                   ? shard.first(to_size(lay.index_size))
                                   : shard.last(to_size(lay.index_size));
  const std::vector<ShardIndexEntry> entries = decode_index(index_bytes, lay, shard.size());

  const bool any_empty = !std::all_of(entries.begin(), entries.end(), [](const auto& e) { return !e.is_empty(); });
  NDBuffer out = any_empty ? NDBuffer::filled(shard_spec.shape, shard_spec.dtype, shard_spec.fill_value, prototype)
                           : NDBuffer::allocate(shard_spec.shape, shard_spec.dtype, prototype);
  if (index_is_empty(entries)) return out;

  const bool single_chunk = lay.num_inner_chunks == 1;
  const BlockCopier copier(shard_spec.shape, lay.inner_spec.shape, shard_spec.dtype.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const ShardIndexEntry& entry = entries[i];
    if (entry.is_empty()) continue;
    const ByteView bytes = shard.subspan(to_size(entry.offset), to_size(entry.nbytes));  // checked above
    NDBuffer chunk;
    try {
      chunk = decode_inner_chunk(bytes, lay, single_chunk ? prototype : BufferPrototype::host());
    } catch (const Error& e) {
      rethrow_with_context(e, describe_inner(i, lay));
    }
    if (single_chunk) return chunk;  // the inner chunk is the shard: no copy
    copier.scatter(out.data(), chunk.data(), block_origin(i, lay));
  }
  return out;
}

Buffer ShardingCodec::encode_index(const std::vector<ShardIndexEntry>& entries, const ShardLayout& layout) const {
  NDBuffer index = NDBuffer::allocate(layout.index_spec.shape, layout.index_spec.dtype);
  std::byte* raw = index.data();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::memcpy(raw + 16 * i, &entries[i].offset, 8);
    std::memcpy(raw + 16 * i + 8, &entries[i].nbytes, 8);
  }
  Buffer encoded = index_.encode(index, layout.index_spec);
  if (encoded.size() != layout.index_size) {
    throw InternalError(fmt::format("sharding_indexed: the index codecs wrote {} bytes, expected {}", encoded.size(),
                                    layout.index_size));
  }
  return encoded;
}

Buffer ShardingCodec::encode(const NDBuffer& shard, const ChunkSpec& shard_spec) const {
  const ShardLayout lay = layout(shard_spec);
  if (shard.shape() != shard_spec.shape || !(shard.dtype() == shard_spec.dtype)) {
    fail_invalid("sharding_indexed cannot encode an array of shape [{}] {}: the shard spec says [{}] {}",
                 fmt::join(shard.shape(), ","), shard.dtype().name(), fmt::join(shard_spec.shape, ","),
                 shard_spec.dtype.name());
  }
  if (!is_host_accessible(shard.kind())) {
    fail_unsupported("sharding_indexed cannot encode {} memory", memory_kind_name(shard.kind()));
  }

  // Inner chunks are laid out in zarr-python's Morton order; chunks that are entirely the
  // fill value are not stored (their entries stay empty), as zarr-python does.
  const bool single_chunk = lay.num_inner_chunks == 1;
  const BlockCopier copier(shard_spec.shape, lay.inner_spec.shape, shard_spec.dtype.size());
  std::vector<ShardIndexEntry> entries(to_size(lay.num_inner_chunks));
  std::vector<Buffer> pieces;
  std::uint64_t data_size = 0;
  for (const std::uint64_t ordinal : morton_order(lay.chunks_per_shard)) {
    NDBuffer chunk;
    if (single_chunk) {
      chunk = shard;  // shares the memory: the inner chunk is the shard
    } else {
      chunk = NDBuffer::allocate(lay.inner_spec.shape, shard_spec.dtype);
      copier.gather(chunk.data(), shard.data(), block_origin(ordinal, lay));
    }
    if (all_equal_fill(chunk.buffer().view(), shard_spec.dtype, shard_spec.fill_value)) continue;
    Buffer encoded;
    try {
      encoded = inner_.encode(chunk, lay.inner_spec);
    } catch (const Error& e) {
      rethrow_with_context(e, describe_inner(ordinal, lay));
    }
    entries[ordinal] = ShardIndexEntry{data_size, encoded.size()};
    data_size = checked_add(data_size, encoded.size(), "shard size");
    pieces.push_back(std::move(encoded));
  }

  const std::uint64_t index_offset = location_ == ShardIndexLocation::kStart ? lay.index_size : 0;
  if (index_offset != 0) {
    for (auto& entry : entries) {
      if (!entry.is_empty()) entry.offset += index_offset;
    }
  }
  const Buffer index = encode_index(entries, lay);
  Buffer out = Buffer::allocate(to_size(checked_add(data_size, lay.index_size, "shard size")));
  std::byte* cursor = out.data();
  if (location_ == ShardIndexLocation::kStart) cursor = std::copy_n(index.data(), index.size(), cursor);
  for (const Buffer& piece : pieces) cursor = std::copy_n(piece.data(), piece.size(), cursor);
  if (location_ == ShardIndexLocation::kEnd) std::copy_n(index.data(), index.size(), cursor);
  return out;
}

// ---- Parsing ----------------------------------------------------------------------------------

namespace {

Shape parse_chunk_shape(const nlohmann::json& value) {
  if (!value.is_array()) fail_invalid("sharding_indexed \"chunk_shape\" must be a list of sizes, got {}", value.dump());
  if (value.size() > MetadataLimits{}.max_ndim) {
    fail_invalid("sharding_indexed \"chunk_shape\" has {} dimensions, more than the limit of {}", value.size(),
                 MetadataLimits{}.max_ndim);
  }
  Shape shape;
  for (const auto& size : value) {
    // Parsed JSON holds non-negative numbers as unsigned; JSON built in code may not.
    const bool positive = size.is_number_unsigned() ? size.get<std::uint64_t>() > 0
                                                    : size.is_number_integer() && size.get<std::int64_t>() > 0;
    if (!positive) fail_invalid("sharding_indexed \"chunk_shape\" {} must hold positive integers", value.dump());
    shape.push_back(size.get<std::uint64_t>());
  }
  return shape;
}

ShardIndexLocation parse_location(const nlohmann::json& value) {
  if (value == "start") return ShardIndexLocation::kStart;
  if (value == "end") return ShardIndexLocation::kEnd;
  fail_invalid("sharding_indexed \"index_location\" must be \"start\" or \"end\", got {}", value.dump());
}

std::shared_ptr<const Codec> make_sharding(const nlohmann::json& configuration, const CodecContext& context,
                                           const CodecRegistry& registry) {
  const NestingGuard nesting;
  for (const auto& [key, value] : configuration.items()) {
    if (key != "chunk_shape" && key != "codecs" && key != "index_codecs" && key != "index_location") {
      fail_invalid("sharding_indexed: unexpected configuration key \"{}\"", key);
    }
  }
  for (const char* required : {"chunk_shape", "codecs", "index_codecs"}) {
    if (!configuration.contains(required)) fail_invalid("sharding_indexed needs \"{}\"", required);
  }
  Shape chunk_shape = parse_chunk_shape(configuration.at("chunk_shape"));
  // Absent means "end" (tensorstore leaves it out then).
  const auto location_it = configuration.find("index_location");
  const ShardIndexLocation location =
      location_it == configuration.end() ? ShardIndexLocation::kEnd : parse_location(*location_it);

  CodecChain inner;
  CodecChain index;
  try {
    inner = CodecChain::from_v3_json(configuration.at("codecs"), context.dtype, registry);
  } catch (const Error& e) {
    rethrow_with_context(e, "sharding_indexed \"codecs\"");
  }
  try {
    index = CodecChain::from_v3_json(configuration.at("index_codecs"), DataType::uint_(64), registry);
  } catch (const Error& e) {
    rethrow_with_context(e, "sharding_indexed \"index_codecs\"");
  }
  // Refuse a compressed index now, while the metadata is read: its size cannot depend on
  // the shard shape, so a one-chunk index shows it.
  Shape probe_shape(chunk_shape.size(), 1);
  probe_shape.push_back(2);
  const ChunkSpec probe{probe_shape, DataType::uint_(64), FillValue::of(kShardEntryEmpty)};
  index.validate(probe);
  if (!index.encoded_size(probe)) {
    fail_invalid("sharding_indexed: index_codecs {} do not have a fixed encoded size (no compression is allowed)",
                 configuration.at("index_codecs").dump());
  }
  return std::make_shared<ShardingCodec>(std::move(chunk_shape), std::move(inner), std::move(index), location);
}

}  // namespace

void register_sharding_codec(CodecRegistry& registry) {
  // The inner chains are built from the same registry, so it must outlive its use (the
  // built-in one is a function-local static).
  const CodecRegistry* self = &registry;
  registry.add_v3("sharding_indexed", [self](const nlohmann::json& configuration, const CodecContext& context) {
    return make_sharding(configuration, context, *self);
  });
}

}  // namespace zarrkit
