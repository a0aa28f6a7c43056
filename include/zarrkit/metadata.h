// Array and group metadata, Zarr v3 (zarr.json) and v2 (.zarray/.zgroup/.zattrs) behind
// one type. Parsing validates everything once: shapes and sizes (overflow-checked), the
// data type and fill value, the codec chain and its order, must_understand.
#pragma once

#include <cstdint>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrkit/chunk_grid.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/dtype.h"
#include "zarrkit/ndbuffer.h"

namespace zarrkit {

class CodecRegistry;

struct ChunkKeyEncoding {
  enum class Kind : std::uint8_t { kDefault, kV2 };
  Kind kind = Kind::kDefault;
  char separator = '/';  // '/' or '.'

  // default: "c" + (sep + index)*, 0-d "c". v2: indices joined by sep, 0-d "0".
  std::string encode(std::span<const std::uint64_t> chunk_index) const;
  nlohmann::json to_json() const;
  bool operator==(const ChunkKeyEncoding&) const = default;
};

// Limits applied while parsing untrusted metadata.
struct MetadataLimits {
  std::size_t max_json_bytes = 64u << 20;
  std::size_t max_json_depth = 64;
  std::size_t max_ndim = 64;
  // A single chunk (decoded) may not exceed this many bytes.
  std::uint64_t max_chunk_bytes = std::uint64_t{1} << 36;  // 64 GiB
};

// Holds an ArrayMetadata's prepared chain: made on first use, once, by whichever thread
// asks first. A copy starts empty: the copy's fields may be changed before it is used.
class PreparedChainSlot {
 public:
  PreparedChainSlot() = default;
  PreparedChainSlot(const PreparedChainSlot&) noexcept {}
  PreparedChainSlot& operator=(const PreparedChainSlot&) noexcept;
  ~PreparedChainSlot() = default;

  // The chain `make` returns, made on the first call.
  template <typename Make>
  const PreparedChain& get(Make&& make) const {
    if (const PreparedChain* ready = ready_.load(std::memory_order_acquire)) return *ready;
    const std::lock_guard lock(mutex_);
    if (!owned_) {
      owned_ = make();
      ready_.store(owned_.get(), std::memory_order_release);
    }
    return *owned_;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const PreparedChain> owned_;
  mutable std::atomic<const PreparedChain*> ready_{nullptr};
};

// The chains of a rectilinear grid's chunks, one per distinct chunk shape, made on first use.
// A copy starts empty, as PreparedChainSlot's does.
class PreparedChainsByShape {
 public:
  PreparedChainsByShape() = default;
  PreparedChainsByShape(const PreparedChainsByShape&) noexcept {}
  PreparedChainsByShape& operator=(const PreparedChainsByShape&) noexcept;
  ~PreparedChainsByShape() = default;

  // The chain for `shape`, made by make(shape) on the first call with that shape.
  template <typename Make>
  const PreparedChain& get(const Shape& shape, Make&& make) const {
    const std::lock_guard lock(mutex_);
    auto it = chains_.find(shape);
    if (it == chains_.end()) it = chains_.emplace(shape, make(shape)).first;
    return *it->second;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::map<Shape, std::shared_ptr<const PreparedChain>> chains_;
};

struct ArrayMetadata {
  int zarr_format = 3;
  Shape shape;
  // A regular grid: its chunk shape. A rectilinear grid: its largest chunk per axis (what one
  // chunk's buffer may need).
  Shape chunk_shape;
  // Set for a v3 "rectilinear" chunk grid (chunk sizes listed per axis). chunk_grid() is the
  // one view of either kind that chunk arithmetic goes through.
  std::optional<ChunkGrid> rectilinear_grid;
  DataType dtype;
  FillValue fill_value;
  ChunkKeyEncoding chunk_key_encoding;
  std::shared_ptr<const CodecChain> codecs;
  nlohmann::json attributes = nlohmann::json::object();
  // v3 dimension_names; entries may be null.
  std::optional<std::vector<std::optional<std::string>>> dimension_names;

  // v2 only: the memory order inside chunks ('C' or 'F') and the numcodecs objects as
  // given, so that metadata round-trips. The codec chain already reflects them.
  char v2_order = 'C';
  std::optional<nlohmann::json> v2_compressor;
  std::optional<nlohmann::json> v2_filters;

  std::size_t ndim() const { return shape.size(); }
  bool is_rectilinear() const { return rectilinear_grid.has_value(); }
  ChunkGrid chunk_grid() const { return rectilinear_grid ? *rectilinear_grid : ChunkGrid::regular(chunk_shape); }
  // Chunks per axis: ceil(shape / chunk_shape) for a regular grid.
  Shape chunk_grid_shape() const;
  std::uint64_t num_chunks() const;
  std::string chunk_key(std::span<const std::uint64_t> chunk_index) const;
  // Spec of a whole chunk (edge chunks are stored at the full chunk size). For a rectilinear
  // grid, chunk_spec() is the largest chunk and chunk_spec(chunk) the chunk at that grid index.
  ChunkSpec chunk_spec() const { return {chunk_shape, dtype, fill_value}; }
  ChunkSpec chunk_spec(std::span<const std::uint64_t> chunk) const;
  // The codec chain prepared for chunk_spec(): made on the first call (which throws what
  // CodecChain::prepare throws), then shared by every reader and writer of the array.
  // Thread-safe. The fields it depends on (chunk_shape, dtype, fill_value, codecs) must not
  // change after the first call: change a copy instead, which prepares its own.
  const PreparedChain& prepared_chain() const;
  // The chain prepared for chunk_spec(chunk); for a regular grid, prepared_chain(). Chains of
  // a rectilinear grid are made once per distinct chunk shape and kept. Thread-safe.
  const PreparedChain& prepared_chain(std::span<const std::uint64_t> chunk) const;

 private:
  PreparedChainSlot prepared_;
  PreparedChainsByShape prepared_by_shape_;
};

struct GroupMetadata {
  int zarr_format = 3;
  nlohmann::json attributes = nlohmann::json::object();
  // v3 inline consolidated metadata or v2 .zmetadata contents, when present.
  std::optional<nlohmann::json> consolidated;
};

// ---- Parsing (untrusted input) -------------------------------------------------------

// Parses JSON text with the limits (size, depth, no NaN/Infinity tokens, valid UTF-8).
nlohmann::json parse_json(std::string_view text, const MetadataLimits& limits = {});

ArrayMetadata parse_array_metadata_v3(const nlohmann::json& zarr_json, const CodecRegistry& registry,
                                      const MetadataLimits& limits = {});
GroupMetadata parse_group_metadata_v3(const nlohmann::json& zarr_json);
// `zattrs` is the .zattrs object if present.
ArrayMetadata parse_array_metadata_v2(const nlohmann::json& zarray,
                                      const std::optional<nlohmann::json>& zattrs,
                                      const CodecRegistry& registry,
                                      const MetadataLimits& limits = {});
GroupMetadata parse_group_metadata_v2(const nlohmann::json& zgroup,
                                      const std::optional<nlohmann::json>& zattrs);

// ---- Data types and fill values --------------------------------------------------------

DataType parse_dtype_v3(const nlohmann::json& data_type);
nlohmann::json dtype_to_v3_json(const DataType& dtype);
// NumPy typestr ("<f8", "|S7", ">U13", "<M8[ns]") or a structured list.
DataType parse_dtype_v2(const nlohmann::json& dtype);
nlohmann::json dtype_to_v2_json(const DataType& dtype);

FillValue parse_fill_value_v3(const nlohmann::json& value, const DataType& dtype);
nlohmann::json fill_value_to_v3_json(const FillValue& fill, const DataType& dtype);
FillValue parse_fill_value_v2(const nlohmann::json& value, const DataType& dtype);
nlohmann::json fill_value_to_v2_json(const FillValue& fill, const DataType& dtype);

// ---- Serialising ------------------------------------------------------------------------

// A v3 "rectilinear" chunk_grid object (kind "inline"; runs of one chunk as bare sizes).
nlohmann::json chunk_grid_to_v3_json(const ChunkGrid& grid);
// zarr.json for v3.
nlohmann::json array_metadata_to_v3_json(const ArrayMetadata& metadata);
nlohmann::json group_metadata_to_v3_json(const GroupMetadata& metadata);
// .zarray for v2 (attributes go to .zattrs separately).
nlohmann::json array_metadata_to_v2_json(const ArrayMetadata& metadata);

// Pretty JSON text as zarr-python writes it (indent 2); NaN/Infinity never appear bare.
std::string dump_json(const nlohmann::json& value);

// ---- Building metadata for new arrays ---------------------------------------------------

// What a caller says when creating an array; make_array_metadata fills in the rest the way
// zarr-python does (default fill value 0/false, default codecs).
struct ArraySpec {
  int zarr_format = 3;
  Shape shape;
  Shape chunks;  // empty: a default chunking of about 1 MiB
  // v3: a rectilinear grid (chunk sizes listed per axis) instead of `chunks`.
  std::optional<ChunkGrid> rectilinear_chunks;
  DataType dtype = DataType::float_(64);
  std::optional<nlohmann::json> fill_value;  // JSON form as in the metadata; nullopt: zero
  // v3: the full "codecs" list. nullopt: bytes(little) + zstd(level 0).
  std::optional<nlohmann::json> codecs;
  // v2: the numcodecs compressor ("null" for none) and filters. nullopt compressor: zstd.
  std::optional<nlohmann::json> v2_compressor;
  std::optional<nlohmann::json> v2_filters;
  char v2_order = 'C';
  std::optional<ChunkKeyEncoding> chunk_key_encoding;  // v3 default: default "/"; v2: "."
  std::optional<std::vector<std::optional<std::string>>> dimension_names;
  nlohmann::json attributes = nlohmann::json::object();
};

ArrayMetadata make_array_metadata(const ArraySpec& spec,
                                  const CodecRegistry& registry);

}  // namespace zarrkit
