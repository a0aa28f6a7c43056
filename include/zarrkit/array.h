// A Zarr array (v2 or v3) in a store. Opening reads only metadata; a read or write touches
// only the chunks its selection covers. Chunks of one request are planned first, then
// fetched, decoded/encoded and scattered in parallel on the shared thread pool.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "zarrkit/config.h"
#include "zarrkit/metadata.h"
#include "zarrkit/ndbuffer.h"
#include "zarrkit/selection.h"
#include "zarrkit/store.h"
#include "zarrkit/vlen.h"

namespace zarrkit {

namespace detail {
struct ArrayCacheState;  // src/engine/cached_reads.h
}
class ReadCache;

// What is stored for an array (for `zarrkit info`).
struct StorageInfo {
  std::uint64_t chunks_stored = 0;
  std::uint64_t chunks_total = 0;
  std::uint64_t bytes_stored = 0;   // chunk bytes only
  std::uint64_t bytes_logical = 0;  // shape * itemsize
};

// Reads may go through the decoded-chunk cache (zarrkit/chunk_cache.h): the process's, or
// one of the array's own when Config::cache.array_bytes was set when it was opened.
class Array {
 public:
  // Opens the array at `path` ("" for the root): zarr.json if present, else .zarray.
  // NotFoundError if neither exists.
  static Array open(std::shared_ptr<Store> store, std::string_view path = "",
                    const CodecRegistry* registry = nullptr);
  // When create() writes the new array's metadata: at once (kFirst), or only when the caller
  // calls write_metadata() after writing the chunks (kLast), so that a copy or import that
  // is interrupted leaves no array there rather than a partial one that reads as finished.
  enum class MetadataWrite { kFirst, kLast };
  // Writes metadata for a new array (and the missing ancestor groups). With `overwrite`,
  // an existing node and its chunks are removed first; otherwise an existing node is an
  // InvalidArgumentError.
  static Array create(std::shared_ptr<Store> store, std::string_view path,
                      const ArrayMetadata& metadata, bool overwrite = false,
                      MetadataWrite when = MetadataWrite::kFirst);
  // Writes the array's metadata (v3 zarr.json; v2 .zarray and .zattrs).
  void write_metadata() const;

  const ArrayMetadata& metadata() const { return *metadata_; }
  const Shape& shape() const { return metadata_->shape; }
  const DataType& dtype() const { return metadata_->dtype; }
  std::size_t ndim() const { return metadata_->shape.size(); }
  const std::string& path() const { return path_; }
  const std::shared_ptr<Store>& store() const { return store_; }

  // The selected region as a new C-order array of native-order elements (integer entries
  // drop their axis). Missing chunks read as the fill value (zeros for a v2 null fill).
  // ResourceExhaustedError if the result cannot be allocated.
  NDBuffer read(const Selection& selection = {}) const;
  // Reads into `out` (host memory, any strides), whose shape must equal the selection's
  // and whose dtype must equal the array's.
  void read_into(const Selection& selection, const NDView& out) const;
  // Writes `data`: its shape must equal the selection's or broadcast to it (NumPy rules; a
  // single element fills the selection). Chunks left holding only the fill value are
  // erased unless Config::write_empty_chunks. Errors raised for a chunk name the array,
  // the store and the chunk key; chunks written before the error keep their new values.
  void write(const Selection& selection, const NDView& data);

  // Arrays of the variable-length types (string, bytes; see vlen.h), which read() and
  // write() refuse: the same selections, fill value, broadcasting and empty-chunk rules,
  // with the elements as strings. UnsupportedError for other types and for sharded ones.
  VarNDBuffer read_var(const Selection& selection = {}) const;
  void write_var(const Selection& selection, const VarNDBuffer& data);
  // Coordinate and mask selections (below) of variable-length elements; block selections
  // go through read_var(block_selection(...)).
  VarNDBuffer read_var_coordinates(const CoordinateSelection& coordinates) const;
  void write_var_coordinates(const CoordinateSelection& coordinates, const VarNDBuffer& data);
  VarNDBuffer read_var_mask(const MaskSelection& mask) const;
  void write_var_mask(const MaskSelection& mask, const VarNDBuffer& data);

  // The shape a selection produces.
  Shape selection_shape(const Selection& selection) const;

  // Coordinate selection (zarr's vindex, selection.h): the elements at the coordinates, in
  // the coordinate arrays' broadcast shape. Each chunk touched is decoded once.
  NDBuffer read_coordinates(const CoordinateSelection& coordinates) const;
  void read_coordinates_into(const CoordinateSelection& coordinates, const NDView& out) const;
  // Writes `data` (of the broadcast shape, or broadcasting to it) to the coordinates; where
  // a coordinate repeats, the value that comes last wins, as in NumPy.
  void write_coordinates(const CoordinateSelection& coordinates, const NDView& data);
  // NumPy's a[mask] (one-dimensional, C order) and a[mask] = data.
  NDBuffer read_mask(const MaskSelection& mask) const;
  void write_mask(const MaskSelection& mask, const NDView& data);

  // Block selection (zarr's blocks): the same entries as a Selection, over chunk indices
  // instead of element indices; an integer selects one block and keeps its axis. Returns
  // the element selection it stands for, for read() and write().
  Selection block_selection(const Selection& blocks) const;
  NDBuffer read_blocks(const Selection& blocks) const { return read(block_selection(blocks)); }
  void write_blocks(const Selection& blocks, const NDView& data) { write(block_selection(blocks), data); }

  // Changes the shape (same number of axes). Chunks that fall wholly outside the new shape
  // are erased, and stored chunks that straddle its edge get the fill value beyond it, so
  // that growing later reads the fill value there, never old data. Growing keeps every
  // element. The metadata is rewritten after the chunks: an interrupted resize leaves the
  // old shape with its data inside it intact. Needs a listable store.
  void resize(const Shape& new_shape);
  // Grows `axis` by data.shape[axis] and writes `data` there (zarr-python's Array.append);
  // `data` must match the array's shape on the other axes. The chunks are written before
  // the metadata. Returns the new shape.
  Shape append(const NDView& data, std::size_t axis = 0);

  // Replaces all attributes (v3: rewrites zarr.json; v2: rewrites .zattrs).
  void set_attributes(const nlohmann::json& attributes);
  // Lists the keys under the array's path; only keys that are chunk keys of this array
  // (inside its grid, canonically spelled) count.
  StorageInfo storage_info() const;

 private:
  friend class Group;  // opens arrays from consolidated metadata, without reading the store
  friend class ReadCache;
  Array(std::shared_ptr<Store> store, std::string path, std::shared_ptr<const ArrayMetadata> m);

  std::shared_ptr<Store> store_;
  std::string path_;
  std::shared_ptr<const ArrayMetadata> metadata_;
  std::shared_ptr<detail::ArrayCacheState> cache_state_;
};

}  // namespace zarrkit
