#include "zarrkit/convert.h"

#include <algorithm>
#include <numeric>

#include "codecs/sharding.h"
#include "zarrkit/app.h"
#include "zarrkit/codec_options.h"
#include "zarrkit/error.h"
#include "zarrkit/npy_header.h"

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

// The v3 entry for a bytes->bytes codec. numcodecs.blosc (how v2 blosc reads) becomes the
// v3 core blosc codec, which every v3 reader knows.
json v3_entry(const BytesToBytesCodec& codec, const DataType& dtype) {
  if (codec.name() != "numcodecs.blosc") return codec.to_json();
  const json v2 = codec.to_v2_json().value_or(json::object());
  const int shuffle = v2.value("shuffle", 1);
  const char* names[] = {"noshuffle", "shuffle", "bitshuffle"};
  const char* shuffle_name = shuffle == -1 ? (dtype.size() == 1 ? "bitshuffle" : "shuffle")  // numcodecs AUTOSHUFFLE
                             : shuffle >= 0 && shuffle <= 2 ? names[shuffle]
                                                             : "shuffle";
  return {{"name", "blosc"},
          {"configuration",
           {{"typesize", v2.value("typesize", std::max<std::size_t>(dtype.size(), 1))},
            {"cname", v2.value("cname", "lz4")},
            {"clevel", v2.value("clevel", 5)},
            {"shuffle", shuffle_name},
            {"blocksize", v2.value("blocksize", 0)}}}};
}

json concat(json a, const json& b) {
  for (const auto& x : b) a.push_back(x);
  return a;
}

// Common to import and cp: chunks, fill value, separator, dimension names.
void apply_layout_options(ArraySpec& spec, const WriteOptions& o) {
  if (!o.chunks.empty()) spec.chunks = parse_chunks_option(o.chunks, spec.shape.size());
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
// bytes->bytes ones (inside the shards when the source is sharded).
json v3_codecs_for_copy(const ArrayMetadata& source, const WriteOptions& o) {
  const CodecChain& chain = *source.codecs;
  json aa = json::array(), bb = json::array();
  for (const auto& c : chain.array_to_array()) aa.push_back(c->to_json());
  json ab = chain.array_to_bytes()->to_json();
  for (const auto& c : chain.bytes_to_bytes()) bb.push_back(v3_entry(*c, source.dtype));
  if (!o.order.empty()) aa = order_codecs(o.order, source.ndim());
  if (!o.codecs.empty()) {
    json new_bb = bytes_codecs_option(o, source.dtype);
    if (ab.value("name", "") == "sharding_indexed") {
      json inner = json::array();
      for (const auto& c : ab["configuration"]["codecs"]) {
        inner.push_back(c);
        const std::string name = c.is_string() ? c.get<std::string>() : c.value("name", "");
        if (name == "bytes" || name == "sharding_indexed") break;
      }
      ab["configuration"]["codecs"] = concat(inner, new_bb);
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
  const auto* sharding = dynamic_cast<const ShardingCodec*>(outer->array_to_bytes().get());
  const bool unshard = sharding != nullptr && outer->array_to_array().empty() && outer->bytes_to_bytes().empty();
  if (unshard) spec.chunks = sharding->chunk_shape();
  const CodecChain& chain = unshard ? sharding->inner_codecs() : *outer;
  const std::size_t ndim = source.ndim();
  char order = 'C';
  if (chain.array_to_array().size() > 1) fail_unsupported("zarr v2 cannot express {} array->array codecs", chain.array_to_array().size());
  for (const auto& c : chain.array_to_array()) {
    const json j = c->to_json();
    const json perm = j.contains("configuration") ? j["configuration"].value("order", json()) : json();
    if (c->name() != "transpose") fail_unsupported("codec '{}' has no zarr v2 equivalent", c->name());
    std::vector<std::uint64_t> identity(ndim);
    std::iota(identity.begin(), identity.end(), 0);
    if (perm == json(reversed_axes(ndim))) {
      order = 'F';
    } else if (perm != json(identity)) {
      fail_unsupported("transpose order {} has no zarr v2 equivalent (only C or F order)", perm.dump());
    }
  }
  const auto& ab = chain.array_to_bytes();
  // Strings and bytes: v2 names their vlen codec as the first filter (make_array_metadata adds it).
  const bool object_codec = source.dtype.is_variable_length() && (ab->name() == "vlen-utf8" || ab->name() == "vlen-bytes");
  if (ab->name() != "bytes" && !object_codec) fail_unsupported("codec '{}' has no zarr v2 equivalent", ab->name());
  const json ab_json = ab->to_json();
  Endian endian = Endian::kLittle;
  if (ab_json.contains("configuration") && ab_json["configuration"].value("endian", "little") == "big") {
    endian = Endian::kBig;
  }
  spec.dtype = source.dtype.swap_unit() > 1 ? source.dtype.with_storage_endian(endian) : source.dtype;
  spec.v2_order = order;
  if (!o.codecs.empty()) return;  // the compressor comes from --codec
  // crc32c guards stored bytes and has no v2 form; the copy is verified as it is read, and
  // v2 readers would not know the codec. The last remaining codec becomes the compressor and
  // the ones before it filters, which v2 applies to the bytes in the same order.
  json v2_codecs = json::array();
  for (const auto& codec : chain.bytes_to_bytes()) {
    if (codec->name() == "crc32c") continue;
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

bool is_sharding(const json& codec) {
  return codec.is_object() ? codec.value("name", "") == "sharding_indexed" : codec == "sharding_indexed";
}

// --shards: the array's chunks become shards of the shard shape, each a grid of inner chunks
// of the chunk shape (--chunks; for cp by default the source's chunks, or inner chunks when
// the source is sharded). The codecs the array would otherwise have go inside the shards;
// the index is stored as zarr-python stores it: at the end, bytes + crc32c.
void apply_shards_option(ArraySpec& spec, const WriteOptions& o, const DataType& dtype, bool chunks_defaulted) {
  if (o.shards.empty()) return;
  if (spec.zarr_format != 3) throw UsageError("--shards: zarr v2 has no sharding; write zarr v3 (--zarr-format 3)");
  const Shape shards = parse_shards_option(o.shards, spec.shape.size());
  json inner_codecs = spec.codecs ? *spec.codecs : default_codecs(dtype);
  Shape inner_chunks = spec.chunks;
  // An already sharded chain (cp from a sharded array): its inside becomes the new inside.
  if (std::any_of(inner_codecs.begin(), inner_codecs.end(), is_sharding)) {
    if (inner_codecs.size() != 1) {
      throw UsageError("--shards: the source has codecs around sharding_indexed; re-shard it in two steps");
    }
    const json& config = inner_codecs[0].at("configuration");
    if (chunks_defaulted) inner_chunks = config.at("chunk_shape").get<Shape>();
    inner_codecs = json(config.at("codecs"));
  }
  if (inner_chunks.empty()) throw UsageError("--shards needs --chunks, the shape of the chunks inside each shard");
  for (std::size_t axis = 0; axis < shards.size(); ++axis) {
    if (shards[axis] % inner_chunks[axis] != 0) {
      throw UsageError(fmt::format("--shards {}: not a multiple of the chunk shape {} (axis {})", o.shards,
                                   json(inner_chunks).dump(), axis));
    }
  }
  json index_codecs = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}, {{"name", "crc32c"}}});
  spec.chunks = shards;
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
