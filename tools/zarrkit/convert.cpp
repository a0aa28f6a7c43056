#include "zarrkit/convert.h"

#include <numeric>

#include "zarrkit/app.h"
#include "zarrkit/codec_options.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/npy_header.h"
#include "zarrkit/vlen.h"

namespace zarrkit::cli {
namespace {

using nlohmann::json;

json bytes_codec(Endian endian) {
  return {{"name", "bytes"}, {"configuration", {{"endian", endian == Endian::kBig ? "big" : "little"}}}};
}

std::vector<std::uint64_t> reversed_axes(std::size_t ndim) {
  std::vector<std::uint64_t> order(ndim);
  std::iota(order.rbegin(), order.rend(), 0);
  return order;
}

json order_codecs(const std::string& order, std::size_t ndim) {
  json aa = json::array();
  if (order == "F" && ndim > 1) aa.push_back({{"name", "transpose"}, {"configuration", {{"order", reversed_axes(ndim)}}}});
  return aa;
}

json bytes_codecs_option(const WriteOptions& o, const DataType& dtype) {
  json bb;
  as_usage_error("--codec", [&] { bb = v3_bytes_codecs(o.codecs, dtype); });
  return bb;
}

json v2_compressor_option(const WriteOptions& o, const DataType& dtype) {
  json compressor;
  as_usage_error("--codec", [&] { compressor = v2_compressor(o.codecs, dtype); });
  return compressor;
}

json concat(json a, const json& b) {
  for (const auto& x : b) a.push_back(x);
  return a;
}

// Builds the codec chain of a v3 "codecs" list the tool made, for an array of `dtype`.
CodecChain parse_codecs(const json& codecs, const DataType& dtype) {
  try {
    return CodecChain::from_v3_json(codecs, dtype, CodecRegistry::builtin());
  } catch (const Error& e) {
    rethrow_with_context(e, "codecs");
  }
}

// Common to import and cp: chunks, fill value, separator, dimension names.
void apply_layout_options(ArraySpec& spec, const WriteOptions& o) {
  if (!o.chunks.empty()) {
    ChunkGrid grid = parse_chunk_grid_option("--chunks", o.chunks, spec.shape.size());
    spec.rectilinear_chunks.reset();
    spec.chunks.clear();
    if (!grid.is_regular()) {
      if (spec.zarr_format != 3) throw UsageError("--chunks: chunks of varying sizes (a rectilinear grid) need zarr v3");
      if (!o.shards.empty()) {
        throw UsageError("--chunks: the chunks inside shards are all of one shape; give varying sizes to --shards");
      }
      try {
        grid.check_covers(spec.shape);
      } catch (const Error& e) {
        throw UsageError(fmt::format("--chunks {}: {}", o.chunks, e.what()));
      }
      spec.rectilinear_chunks = std::move(grid);
    } else {
      spec.chunks = grid.largest_chunk();
    }
  }
  if (!o.fill_value.empty()) spec.fill_value = parse_fill_value_option(o.fill_value, spec.dtype, spec.zarr_format);
  if (!o.separator.empty()) {
    spec.chunk_key_encoding = ChunkKeyEncoding{
        spec.zarr_format == 3 ? ChunkKeyEncoding::Kind::kDefault : ChunkKeyEncoding::Kind::kV2, o.separator[0]};
  }
  if (!o.dimension_names.empty()) {
    spec.dimension_names = parse_dimension_names_option(o.dimension_names, spec.shape.size());
  }
  // v2 has no dimension names: keep them where xarray looks for them.
  if (spec.zarr_format == 2 && spec.dimension_names) {
    json names = json::array();
    for (const auto& n : *spec.dimension_names) {
      if (!n) return void(spec.dimension_names.reset());  // unnamed axes: nothing to record
      names.push_back(*n);
    }
    spec.attributes[kV2DimensionsAttribute] = names;
    spec.dimension_names.reset();
  }
}

// v3 copy: the source chain with --order replacing the array->array codecs and --codec the
// bytes->bytes ones (inside the shards when the source is sharded: its array->bytes codec
// has inner chunks).
json v3_codecs_for_copy(const ArrayMetadata& source, const WriteOptions& o) {
  const CodecChain& chain = *source.codecs;
  const ArrayToBytesCodec& source_ab = *chain.array_to_bytes();
  json aa = json::array(), bb = json::array();
  for (const auto& c : chain.array_to_array()) aa.push_back(c->to_json());
  json ab = source_ab.to_json();
  for (const auto& c : chain.bytes_to_bytes()) bb.push_back(c->to_v3_core_json(source.dtype));
  if (!o.order.empty()) aa = order_codecs(o.order, source.ndim());
  if (!o.codecs.empty()) {
    json new_bb = bytes_codecs_option(o, source.dtype);
    if (const CodecChain* inner = source_ab.inner_chain()) {
      json inside = json::array();
      for (const auto& c : inner->array_to_array()) inside.push_back(c->to_json());
      inside.push_back(inner->array_to_bytes()->to_json());
      ab = source_ab.with_inner_chain(parse_codecs(concat(inside, new_bb), source.dtype))->to_json();
    } else {
      bb = new_bb;
    }
  }
  aa.push_back(ab);
  return concat(aa, bb);
}

// v3 -> v2: what the chain says about order, byte order and compression, or why it cannot.
void v2_settings_from_v3(const ArrayMetadata& source, const WriteOptions& o, ArraySpec& spec) {
  // A sharded source: v2 has no shards, so its inner chunks become the v2 chunks (--chunks
  // still wins) and their codecs the v2 compressor.
  const CodecChain* outer = source.codecs.get();
  const ArrayToBytesCodec& outer_ab = *outer->array_to_bytes();
  const bool unshard =
      outer_ab.inner_chain() != nullptr && outer->array_to_array().empty() && outer->bytes_to_bytes().empty();
  if (unshard) {
    spec.chunks = *outer_ab.inner_chunk_shape();
    spec.rectilinear_chunks.reset();  // the shards' grid goes with them
  }
  const CodecChain& chain = unshard ? *outer_ab.inner_chain() : *outer;
  const std::size_t ndim = source.ndim();
  char order = 'C';
  if (chain.array_to_array().size() > 1) fail_unsupported("zarr v2 cannot express {} array->array codecs", chain.array_to_array().size());
  for (const auto& c : chain.array_to_array()) {
    // Only a permutation of the axes (transpose) has a v2 form, and only C or F order.
    const std::optional<std::vector<std::size_t>> axes = c->axis_order(ndim);
    if (!axes) fail_unsupported("codec '{}' has no zarr v2 equivalent", c->name());
    std::vector<std::uint64_t> identity(ndim);
    std::iota(identity.begin(), identity.end(), 0);
    const json perm = *axes;
    if (perm == json(reversed_axes(ndim))) {
      order = 'F';
    } else if (perm != json(identity)) {
      fail_unsupported("transpose order {} has no zarr v2 equivalent (only C or F order)", perm.dump());
    }
  }
  const auto& ab = chain.array_to_bytes();
  // Strings and bytes: v2 names their vlen codec as the first filter (make_array_metadata adds it).
  const bool object_codec =
      source.dtype.is_variable_length() && dynamic_cast<const VarLengthCodec*>(ab.get()) != nullptr;
  // Otherwise only elements stored as they are (bytes), in either byte order.
  const std::optional<Endian> byte_order = ab->element_byte_order();
  if (!byte_order && !object_codec) fail_unsupported("codec '{}' has no zarr v2 equivalent", ab->name());
  const Endian endian = byte_order.value_or(Endian::kLittle);
  spec.dtype = source.dtype.swap_unit() > 1 ? source.dtype.with_storage_endian(endian) : source.dtype;
  spec.v2_order = order;
  if (!o.codecs.empty()) return;  // the compressor comes from --codec
  // A checksum without a v2 form (crc32c) guards stored bytes; the copy is verified as it is
  // read, and v2 readers would not know the codec: it is left out. The last remaining codec
  // becomes the compressor and the ones before it filters, which v2 applies to the bytes in
  // the same order.
  json v2_codecs = json::array();
  for (const auto& codec : chain.bytes_to_bytes()) {
    if (codec->decodes_to_view() && !codec->to_v2_json()) continue;
    auto v2 = codec->to_v2_json();
    if (!v2) fail_unsupported("codec '{}' has no zarr v2 equivalent", codec->name());
    v2_codecs.push_back(*v2);
  }
  spec.v2_compressor = json(nullptr);
  if (!v2_codecs.empty()) {
    spec.v2_compressor = v2_codecs.back();
    v2_codecs.erase(v2_codecs.end() - 1);
  }
  if (!v2_codecs.empty()) spec.v2_filters = v2_codecs;
}

// zarr-python's default v3 codecs (make_array_metadata's), for the inside of a shard.
json default_codecs(const DataType& dtype) {
  json bytes = {{"name", "bytes"}};
  if (dtype.swap_unit() > 1) bytes["configuration"] = {{"endian", "little"}};
  return json::array({bytes, {{"name", "zstd"}, {"configuration", {{"level", 0}, {"checksum", false}}}}});
}

// --shards: the array's chunks become shards of the shard shape, each a grid of inner chunks
// of the chunk shape (--chunks; for cp by default the source's chunks, or inner chunks when
// the source is sharded). The codecs the array would otherwise have go inside the shards;
// the index is stored as zarr-python stores it: at the end, bytes + crc32c.
void apply_shards_option(ArraySpec& spec, const WriteOptions& o, const DataType& dtype, bool chunks_defaulted) {
  if (o.shards.empty()) return;
  if (spec.zarr_format != 3) throw UsageError("--shards: zarr v2 has no sharding; write zarr v3 (--zarr-format 3)");
  ChunkGrid shards = parse_chunk_grid_option("--shards", o.shards, spec.shape.size());
  json inner_codecs = spec.codecs ? *spec.codecs : default_codecs(dtype);
  Shape inner_chunks = spec.chunks;
  // An already sharded chain (cp from a sharded array: its array->bytes codec has inner
  // chunks): its inside becomes the new inside.
  if (spec.codecs) {
    const CodecChain chain = parse_codecs(inner_codecs, dtype);
    const ArrayToBytesCodec& ab = *chain.array_to_bytes();
    if (const CodecChain* inside = ab.inner_chain()) {
      if (!chain.array_to_array().empty() || !chain.bytes_to_bytes().empty()) {
        throw UsageError(fmt::format("--shards: the source has codecs around {}; re-shard it in two steps", ab.name()));
      }
      if (chunks_defaulted) inner_chunks = *ab.inner_chunk_shape();
      inner_codecs = inside->to_json();
    }
  }
  if (inner_chunks.empty()) throw UsageError("--shards needs --chunks, the shape of the chunks inside each shard");
  for (std::size_t axis = 0; axis < shards.ndim(); ++axis) {
    const AxisGrid& sizes = shards.axis(axis);
    const ChunkRun regular{sizes.is_regular() ? sizes.regular_size() : 0, 1};
    for (const ChunkRun& run : sizes.is_regular() ? std::span<const ChunkRun>(&regular, 1) : sizes.runs()) {
      if (run.size % inner_chunks[axis] != 0) {
        throw UsageError(fmt::format("--shards {}: {} is not a multiple of the chunk shape {} (axis {})", o.shards,
                                     run.size, json(inner_chunks).dump(), axis));
      }
    }
  }
  json index_codecs = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}, {{"name", "crc32c"}}});
  spec.chunks.clear();
  spec.rectilinear_chunks.reset();
  if (shards.is_regular()) {
    spec.chunks = shards.largest_chunk();
  } else {
    try {
      shards.check_covers(spec.shape);
    } catch (const Error& e) {
      throw UsageError(fmt::format("--shards {}: {}", o.shards, e.what()));
    }
    spec.rectilinear_chunks = std::move(shards);
  }
  spec.codecs = json::array({{{"name", "sharding_indexed"},
                              {"configuration",
                               {{"chunk_shape", inner_chunks},
                                {"codecs", inner_codecs},
                                {"index_codecs", index_codecs},
                                {"index_location", "end"}}}}});
}

}  // namespace

ArraySpec import_spec(const DataType& dtype, const Shape& shape, const WriteOptions& o) {
  ArraySpec spec;
  spec.zarr_format = o.zarr_format != 0 ? o.zarr_format : 3;
  spec.shape = shape;
  spec.dtype = native_dtype(dtype);
  if (spec.zarr_format == 3) {
    if (!o.codecs.empty() || o.order == "F") {
      json bb = o.codecs.empty() ? json::array({codec_option_to_v3(parse_codec_option("zstd"), dtype)})
                                 : bytes_codecs_option(o, dtype);
      json aa = order_codecs(o.order, shape.size());
      aa.push_back(bytes_codec(native_endian()));
      spec.codecs = concat(aa, bb);
    }
  } else {
    if (!o.codecs.empty()) spec.v2_compressor = v2_compressor_option(o, dtype);
    spec.v2_order = o.order == "F" ? 'F' : 'C';
  }
  apply_layout_options(spec, o);
  apply_shards_option(spec, o, spec.dtype, o.chunks.empty());
  return spec;
}

ArraySpec copy_spec(const ArrayMetadata& source, const WriteOptions& o) {
  ArraySpec spec;
  spec.zarr_format = o.zarr_format != 0 ? o.zarr_format : source.zarr_format;
  spec.shape = source.shape;
  spec.chunks = source.chunk_shape;
  if (source.rectilinear_grid) {  // kept (v2 has none: the copy then needs --chunks)
    spec.chunks.clear();
    spec.rectilinear_chunks = source.rectilinear_grid;
  }
  spec.dtype = source.dtype;
  spec.attributes = source.attributes;
  if (spec.zarr_format == source.zarr_format) spec.chunk_key_encoding = source.chunk_key_encoding;

  // Dimension names: v3 field, or the v2 attribute (moved into the field for v3).
  spec.dimension_names = source.dimension_names;
  if (source.zarr_format == 2 && spec.zarr_format == 3 && spec.attributes.contains(kV2DimensionsAttribute)) {
    const json& names = spec.attributes[kV2DimensionsAttribute];
    if (names.is_array() && names.size() == source.ndim()) {
      std::vector<std::optional<std::string>> list;
      for (const auto& n : names) list.emplace_back(n.is_string() ? std::optional(n.get<std::string>()) : std::nullopt);
      spec.dimension_names = list;
      spec.attributes.erase(kV2DimensionsAttribute);
    }
  }

  if (source.fill_value.is_null() && spec.zarr_format == 2) {
    spec.fill_value = json(nullptr);
  } else {  // v3 has no null: a v2 null becomes the value it reads as (zero, or NaT for times)
    spec.fill_value = spec.zarr_format == 3 ? fill_value_to_v3_json(source.fill_value, source.dtype)
                                            : fill_value_to_v2_json(source.fill_value, source.dtype);
  }

  if (spec.zarr_format == 3) {
    spec.dtype = native_dtype(source.dtype);
    spec.codecs = v3_codecs_for_copy(source, o);
  } else if (source.zarr_format == 2) {
    spec.v2_compressor = o.codecs.empty() ? source.v2_compressor.value_or(json(nullptr))
                                          : v2_compressor_option(o, source.dtype);
    spec.v2_filters = source.v2_filters;
    spec.v2_order = source.v2_order;
  } else {
    v2_settings_from_v3(source, o, spec);
  }
  if (spec.zarr_format == 2 && !o.codecs.empty() && source.zarr_format == 3) {
    spec.v2_compressor = v2_compressor_option(o, source.dtype);
  }
  if (spec.zarr_format == 2 && !o.order.empty()) spec.v2_order = o.order[0];
  apply_layout_options(spec, o);
  apply_shards_option(spec, o, spec.dtype, o.chunks.empty());
  return spec;
}

}  // namespace zarrkit::cli
