// Zarr v2 .zarray / .zgroup / .zattrs: parsing (untrusted) and serialising. A v2 array is
// mapped onto the same codec chain a v3 array uses:
//   order "F" -> transpose [n-1, ..., 0]; filters (array->array ones, then bytes->bytes
//   ones, list order kept); bytes with the dtype's byte order; the compressor.
#include <string>

#include "core/metadata_util.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;
using namespace metadata_detail;

void check_zarr_format_2(const json& doc, std::string_view file) {
  if (!doc.is_object()) fail_invalid("{} must be a JSON object, got {}", file, describe(doc));
  const json& format = require_member(doc, "zarr_format", file);
  if (as_uint(format) != std::optional<std::uint64_t>{2}) {
    fail_invalid("{}: zarr_format must be the integer 2, got {}", file, describe(format));
  }
}

json parse_zattrs(const std::optional<json>& zattrs) {
  if (!zattrs) return json::object();
  if (!zattrs->is_object()) fail_invalid(".zattrs must be a JSON object, got {}", describe(*zattrs));
  return *zattrs;
}

const std::string& numcodecs_id(const json& entry, std::string_view what) {
  const json* id = find_member(entry, "id");
  if (!entry.is_object() || id == nullptr || !id->is_string()) {
    fail_invalid(".zarray: {} must be an object with a string \"id\", got {}", what, describe(entry));
  }
  return id->get_ref<const std::string&>();
}

std::shared_ptr<const Codec> make_numcodec(const json& entry, std::string_view what, const CodecRegistry& registry,
                                           const CodecContext& context) {
  const std::string& id = numcodecs_id(entry, what);
  if (!registry.has_v2(id)) fail_unsupported(".zarray: {}: unsupported codec '{}'", what, id);
  try {
    auto codec = registry.make_v2(entry, context);
    if (!codec) fail_unsupported(".zarray: {}: unsupported codec '{}'", what, id);
    return codec;
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format(".zarray: {} '{}'", what, id));
  }
}

// The "bytes" codec configuration for the element type reaching it.
json bytes_codec_json(const DataType& encoded, const DataType& original) {
  json entry = {{"name", "bytes"}};
  std::optional<Endian> endian = encoded.storage_endian();
  if (!endian) endian = original.storage_endian();
  if (!endian && encoded.swap_unit() > 1) endian = Endian::kLittle;
  if (endian) entry["configuration"] = {{"endian", *endian == Endian::kBig ? "big" : "little"}};
  return entry;
}

// "|O" (object) arrays: what the elements are is said by the object codec, the first filter.
// zarrkit reads the variable-length strings and bytes zarr-python writes; other object
// codecs (json2, msgpack2, vlen-array, pickle) hold Python objects it does not model.
bool is_object_dtype(const json& dtype) { return dtype.is_string() && (dtype == "|O" || dtype == "|O8"); }

DataType object_dtype(const json& filters) {
  if (!filters.is_array() || filters.empty()) {
    fail_invalid(".zarray: dtype \"|O\" (object) needs an object codec such as vlen-utf8 as its first filter");
  }
  const std::string& id = numcodecs_id(filters[0], "filter");
  if (id == "vlen-utf8") return DataType::string();
  if (id == "vlen-bytes") return DataType::var_bytes();
  fail_unsupported(".zarray: dtype \"|O\" (object) with the object codec '{}' is not supported: zarrkit reads "
                   "object arrays of vlen-utf8 strings and vlen-bytes bytes",
                   id);
}

std::shared_ptr<const CodecChain> build_v2_chain(const ArrayMetadata& m, const json& compressor, const json& filters,
                                                 const CodecRegistry& registry) {
  const CodecContext v2_context{m.dtype, 2};
  const CodecContext v3_context{m.dtype, 3};
  std::vector<std::shared_ptr<const Codec>> codecs;
  ChunkSpec spec = m.chunk_spec();

  if (m.v2_order == 'F' && m.ndim() > 1) {
    json order = json::array();
    for (std::size_t i = m.ndim(); i-- > 0;) order.push_back(i);
    auto transpose = registry.make_v3({{"name", "transpose"}, {"configuration", {{"order", order}}}}, v3_context);
    auto as_array_codec = std::dynamic_pointer_cast<const ArrayToArrayCodec>(transpose);
    if (!as_array_codec) fail_unsupported(".zarray: order \"F\" needs the transpose codec, which is not registered");
    spec = as_array_codec->encoded_spec(spec);
    codecs.push_back(std::move(transpose));
  }

  std::vector<std::shared_ptr<const Codec>> bytes_filters;
  std::shared_ptr<const Codec> object_codec;  // "|O" arrays: serialises the elements
  if (filters.is_array()) {
    for (const auto& entry : filters) {
      auto codec = make_numcodec(entry, "filter", registry, v2_context);
      switch (codec->kind()) {
        case CodecKind::kArrayToArray:
          if (!bytes_filters.empty() || object_codec) {
            fail_unsupported(".zarray: filter '{}' works on arrays but follows a filter that works on bytes",
                             codec->name());
          }
          spec = std::static_pointer_cast<const ArrayToArrayCodec>(codec)->encoded_spec(spec);
          codecs.push_back(std::move(codec));
          break;
        case CodecKind::kBytesToBytes: bytes_filters.push_back(std::move(codec)); break;
        case CodecKind::kArrayToBytes:
          if (!m.dtype.is_variable_length() || object_codec || !bytes_filters.empty()) {
            fail_unsupported(".zarray: filter '{}' serialises arrays; only the first filter of an object (\"|O\") "
                             "array may",
                             codec->name());
          }
          object_codec = std::move(codec);
          break;
      }
    }
  }

  codecs.push_back(object_codec ? object_codec : registry.make_v3(bytes_codec_json(spec.dtype, m.dtype), v3_context));
  for (auto& codec : bytes_filters) codecs.push_back(std::move(codec));
  if (!compressor.is_null()) {
    auto codec = make_numcodec(compressor, "compressor", registry, v2_context);
    if (codec->kind() != CodecKind::kBytesToBytes) {
      fail_unsupported(".zarray: compressor '{}' is not a bytes-to-bytes codec", codec->name());
    }
    codecs.push_back(std::move(codec));
  }
  auto chain = CodecChain::from_codecs(std::move(codecs));
  chain.validate(m.chunk_spec());
  return std::make_shared<const CodecChain>(std::move(chain));
}

}  // namespace

ArrayMetadata parse_array_metadata_v2(const json& zarray, const std::optional<json>& zattrs,
                                      const CodecRegistry& registry, const MetadataLimits& limits) {
  check_zarr_format_2(zarray, ".zarray");
  // Other keys SHOULD NOT be present and are ignored (real data carries "node_type").
  ArrayMetadata m;
  m.zarr_format = 2;
  m.shape = get_shape(require_member(zarray, "shape", ".zarray"), ".zarray shape", limits.max_ndim, false);
  m.chunk_shape = get_shape(require_member(zarray, "chunks", ".zarray"), ".zarray chunks", limits.max_ndim, true);
  if (m.chunk_shape.size() != m.shape.size()) {
    fail_invalid(".zarray: chunks has {} dimensions but shape has {}", m.chunk_shape.size(), m.shape.size());
  }
  const json& dtype = require_member(zarray, "dtype", ".zarray");
  m.dtype = is_object_dtype(dtype) ? object_dtype(require_member(zarray, "filters", ".zarray")) : parse_dtype_v2(dtype);
  check_array_sizes(m.shape, m.chunk_shape, m.dtype, limits);
  m.fill_value = parse_fill_value_v2(require_member(zarray, "fill_value", ".zarray"), m.dtype);

  const json& order = require_member(zarray, "order", ".zarray");
  if (order != "C" && order != "F") fail_invalid(".zarray: order must be \"C\" or \"F\", got {}", describe(order));
  m.v2_order = order.get<std::string>()[0];

  const json& compressor = require_member(zarray, "compressor", ".zarray");
  if (!compressor.is_null()) {
    numcodecs_id(compressor, "compressor");
    m.v2_compressor = compressor;
  }
  const json& filters = require_member(zarray, "filters", ".zarray");
  if (!filters.is_null()) {
    if (!filters.is_array()) fail_invalid(".zarray: filters must be a list or null, got {}", describe(filters));
    m.v2_filters = filters;
  }

  m.chunk_key_encoding.kind = ChunkKeyEncoding::Kind::kV2;
  m.chunk_key_encoding.separator = '.';  // the default when the key is absent (rule 25)
  // null is read as absent: harmless, and some writers spell "not given" that way.
  if (const json* sep = find_member(zarray, "dimension_separator"); sep && !sep->is_null()) {
    if (*sep != "." && *sep != "/") {
      fail_invalid(".zarray: dimension_separator must be \".\" or \"/\", got {}", describe(*sep));
    }
    m.chunk_key_encoding.separator = sep->get<std::string>()[0];
  }

  m.codecs = build_v2_chain(m, compressor, filters, registry);
  m.attributes = parse_zattrs(zattrs);
  return m;
}

GroupMetadata parse_group_metadata_v2(const json& zgroup, const std::optional<json>& zattrs) {
  check_zarr_format_2(zgroup, ".zgroup");
  GroupMetadata g;
  g.zarr_format = 2;
  g.attributes = parse_zattrs(zattrs);
  return g;
}

json array_metadata_to_v2_json(const ArrayMetadata& m) {
  if (m.zarr_format != 2) {
    fail_invalid("cannot write .zarray for Zarr v{} metadata: its codecs have no v2 description", m.zarr_format);
  }
  if (m.chunk_key_encoding.kind != ChunkKeyEncoding::Kind::kV2) {
    fail_invalid("cannot write .zarray: v2 arrays use the v2 chunk key encoding");
  }
  if (m.v2_order != 'C' && m.v2_order != 'F') fail_invalid("cannot write .zarray: order '{}'", m.v2_order);
  if (m.rectilinear_grid) fail_invalid("cannot write .zarray: Zarr v2 has no rectilinear chunk grids");
  return {
      {"zarr_format", 2},
      {"shape", m.shape},
      {"chunks", m.chunk_shape},
      {"dtype", dtype_to_v2_json(m.dtype)},
      {"compressor", m.v2_compressor.value_or(json(nullptr))},
      {"fill_value", fill_value_to_v2_json(m.fill_value, m.dtype)},
      {"order", std::string(1, m.v2_order)},
      {"filters", m.v2_filters.value_or(json(nullptr))},
      {"dimension_separator", std::string(1, m.chunk_key_encoding.separator)},
  };
}

}  // namespace zarrkit
