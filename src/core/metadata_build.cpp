// Metadata for new arrays (make_array_metadata) and the chunk-grid helpers of ArrayMetadata.
//
// make_array_metadata writes the JSON document a store would hold and parses it with the
// same parser that reads stores, so a created array is validated exactly as an opened one.
// Defaults follow zarr-python 3: fill value zero/false (recorded explicitly), v3 codecs
// bytes(little) + zstd(level 0), v2 compressor zstd(level 0); string and bytes arrays
// vlen-utf8 / vlen-bytes instead of bytes (v2: as the first filter).
//
// Default chunking (when ArraySpec::chunks is empty), zarrkit's own rule: start from the
// whole shape (zero-length axes count as 1) and halve the largest axis (rounding up; the
// first one on ties) until a chunk holds at most 1 MiB or every axis is 1. Chunks of
// arrays larger than 1 MiB therefore land between 512 KiB and 1 MiB and stay close to
// cubic, which suits both row and column reads.
#include <algorithm>

#include "core/checked_math.h"
#include "core/metadata_util.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

constexpr std::uint64_t kDefaultChunkBytes = std::uint64_t{1} << 20;

// Saturating product, enough to compare a chunk with the 1 MiB target.
std::uint64_t saturating_bytes(const Shape& chunk, std::uint64_t itemsize) {
  std::uint64_t bytes = itemsize;
  for (auto n : chunk) bytes = try_mul(bytes, n).value_or(UINT64_MAX);
  return bytes;
}

Shape default_chunks(const Shape& shape, const DataType& dtype) {
  Shape chunk = shape;
  for (auto& n : chunk) n = std::max<std::uint64_t>(n, 1);
  // Variable-length elements: count a short string and its 4-byte length.
  const std::uint64_t itemsize = dtype.is_variable_length() ? 16 : std::max<std::uint64_t>(dtype.size(), 1);
  while (saturating_bytes(chunk, itemsize) > kDefaultChunkBytes) {
    auto largest = std::max_element(chunk.begin(), chunk.end());
    if (largest == chunk.end() || *largest == 1) break;
    *largest = ceil_div(*largest, 2);
  }
  return chunk;
}

// The codec that serialises variable-length elements, as zarr-python names it.
const char* vlen_codec_name(const DataType& dtype) {
  return dtype.kind() == DataTypeKind::kString ? "vlen-utf8" : "vlen-bytes";
}

// v2 object arrays need their object codec as the first filter.
json v2_filters_for(const ArraySpec& spec) {
  if (!spec.dtype.is_variable_length()) return spec.v2_filters ? *spec.v2_filters : json(nullptr);
  const json object_codec = {{"id", vlen_codec_name(spec.dtype)}};
  json filters = spec.v2_filters && spec.v2_filters->is_array() ? *spec.v2_filters : json::array();
  if (filters.empty() || filters[0] != object_codec) filters.insert(filters.begin(), object_codec);
  return filters;
}

json default_v3_codecs(const DataType& dtype) {
  if (dtype.is_variable_length()) {
    return json::array({{{"name", vlen_codec_name(dtype)}, {"configuration", json::object()}},
                        {{"name", "zstd"}, {"configuration", {{"level", 0}, {"checksum", false}}}}});
  }
  json bytes = {{"name", "bytes"}};
  if (dtype.swap_unit() > 1) bytes["configuration"] = {{"endian", "little"}};
  return json::array({bytes, {{"name", "zstd"}, {"configuration", {{"level", 0}, {"checksum", false}}}}});
}

}  // namespace

ArrayMetadata make_array_metadata(const ArraySpec& spec, const CodecRegistry& registry) {
  if (spec.zarr_format != 2 && spec.zarr_format != 3) fail_invalid("zarr_format must be 2 or 3, got {}", spec.zarr_format);
  if (spec.rectilinear_chunks && !spec.chunks.empty()) fail_invalid("give chunks or rectilinear_chunks, not both");
  const Shape chunks = spec.chunks.empty() ? default_chunks(spec.shape, spec.dtype) : spec.chunks;

  if (spec.zarr_format == 3) {
    if (spec.v2_compressor || spec.v2_filters || spec.v2_order != 'C') {
      fail_invalid("v2_compressor, v2_filters and v2_order apply to Zarr v2 arrays only; use codecs for v3");
    }
    json doc = {
        {"zarr_format", 3},
        {"node_type", "array"},
        {"shape", spec.shape},
        {"data_type", dtype_to_v3_json(spec.dtype)},
        {"chunk_grid", spec.rectilinear_chunks
                           ? chunk_grid_to_v3_json(*spec.rectilinear_chunks)
                           : json{{"name", "regular"}, {"configuration", {{"chunk_shape", chunks}}}}},
        {"chunk_key_encoding", spec.chunk_key_encoding.value_or(ChunkKeyEncoding{}).to_json()},
        {"fill_value", spec.fill_value ? *spec.fill_value : fill_value_to_v3_json(FillValue::zero(spec.dtype), spec.dtype)},
        {"codecs", spec.codecs ? *spec.codecs : default_v3_codecs(spec.dtype)},
        {"attributes", spec.attributes},
        {"storage_transformers", json::array()},
    };
    if (spec.dimension_names) {
      json names = json::array();
      for (const auto& n : *spec.dimension_names) names.push_back(n ? json(*n) : json(nullptr));
      doc["dimension_names"] = std::move(names);
    }
    return parse_array_metadata_v3(doc, registry);
  }

  if (spec.codecs) fail_invalid("codecs apply to Zarr v3 arrays only; use v2_compressor and v2_filters for v2");
  if (spec.rectilinear_chunks) fail_invalid("rectilinear chunk grids are a Zarr v3 feature");
  if (spec.dimension_names) fail_invalid("dimension_names are a Zarr v3 feature");
  char separator = '.';
  if (spec.chunk_key_encoding) {
    if (spec.chunk_key_encoding->kind != ChunkKeyEncoding::Kind::kV2) {
      fail_invalid("Zarr v2 arrays use the v2 chunk key encoding");
    }
    separator = spec.chunk_key_encoding->separator;
  }
  json doc = {
      {"zarr_format", 2},
      {"shape", spec.shape},
      {"chunks", chunks},
      {"dtype", dtype_to_v2_json(spec.dtype)},
      {"compressor", spec.v2_compressor ? *spec.v2_compressor : json{{"id", "zstd"}, {"level", 0}}},
      {"fill_value", spec.fill_value ? *spec.fill_value : fill_value_to_v2_json(FillValue::zero(spec.dtype), spec.dtype)},
      {"order", std::string(1, spec.v2_order)},
      {"filters", v2_filters_for(spec)},
      {"dimension_separator", std::string(1, separator)},
  };
  return parse_array_metadata_v2(doc, spec.attributes, registry);
}

Shape ArrayMetadata::chunk_grid_shape() const {
  if (rectilinear_grid) return rectilinear_grid->grid_shape(shape);
  if (chunk_shape.size() != shape.size()) fail_invalid("chunk shape and array shape differ in length");
  Shape grid(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (chunk_shape[d] == 0) fail_invalid("chunk shape has a zero dimension");
    grid[d] = ceil_div(shape[d], chunk_shape[d]);
  }
  return grid;
}

std::uint64_t ArrayMetadata::num_chunks() const {
  std::uint64_t n = 1;
  for (auto g : chunk_grid_shape()) n = checked_mul(n, g, "number of chunks");
  return n;
}

std::string ArrayMetadata::chunk_key(std::span<const std::uint64_t> chunk_index) const {
  if (chunk_index.size() != shape.size()) {
    fail_invalid("chunk index has {} dimensions but the array has {}", chunk_index.size(), shape.size());
  }
  return chunk_key_encoding.encode(chunk_index);
}

PreparedChainSlot& PreparedChainSlot::operator=(const PreparedChainSlot&) noexcept {
  const std::lock_guard lock(mutex_);
  owned_.reset();
  ready_.store(nullptr, std::memory_order_release);
  return *this;
}

PreparedChainsByShape& PreparedChainsByShape::operator=(const PreparedChainsByShape&) noexcept {
  const std::lock_guard lock(mutex_);
  chains_.clear();
  return *this;
}

ChunkSpec ArrayMetadata::chunk_spec(std::span<const std::uint64_t> chunk) const {
  if (!rectilinear_grid) return chunk_spec();
  return {rectilinear_grid->chunk_shape(chunk), dtype, fill_value};
}

const PreparedChain& ArrayMetadata::prepared_chain(std::span<const std::uint64_t> chunk) const {
  if (!rectilinear_grid) return prepared_chain();
  return prepared_by_shape_.get(rectilinear_grid->chunk_shape(chunk), [this](const Shape& chunk_shape) {
    if (!codecs) fail_invalid("the array metadata has no codec chain");
    return codecs->prepare(ChunkSpec{chunk_shape, dtype, fill_value});
  });
}

const PreparedChain& ArrayMetadata::prepared_chain() const {
  const PreparedChain& prepared = prepared_.get([this] {
    if (!codecs) fail_invalid("the array metadata has no codec chain");
    return codecs->prepare(chunk_spec());
  });
  // A field changed after the chain was prepared would leave it describing other chunks.
  if (prepared.spec().shape != chunk_shape || !(prepared.spec().dtype == dtype) ||
      !(prepared.spec().fill_value == fill_value) ||
      prepared.chain().array_to_bytes() != (codecs ? codecs->array_to_bytes() : nullptr)) {
    throw InternalError("ArrayMetadata changed after its codec chain was prepared");
  }
  return prepared;
}

}  // namespace zarrkit
