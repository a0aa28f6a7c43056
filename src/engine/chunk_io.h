// Small pieces shared by the engine's request paths outside array.cpp (point selections,
// resize): checked chunk decoding, storing a chunk (or erasing it when it holds only the
// fill value), the checks every request makes, and parsing chunk keys back into coordinates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zarrkit/metadata.h"
#include "zarrkit/ndbuffer.h"
#include "zarrkit/store.h"

namespace zarrkit {

// UnsupportedError for variable-length types (the engine moves fixed-size elements).
void require_fixed_size_elements(const DataType& dtype);
// UnsupportedError unless the view's memory is host-accessible.
void require_host_memory(const NDView& view, const char* what);
// InvalidArgumentError unless the fill value has one element's bytes.
void require_fill_of_itemsize(const ArrayMetadata& m, std::string_view array);
// ResourceExhaustedError when an array of `shape` and `dtype` could not be allocated.
void require_allocatable(const Shape& shape, const DataType& dtype, std::string_view what);

// Decodes the chunk at grid index `chunk`; DataLossError unless it has exactly the chunk's
// shape and size.
NDBuffer decode_chunk(const ArrayMetadata& m, std::span<const std::uint64_t> chunk, ByteView encoded);
// Encodes and stores `chunk` under `key`, or erases the key when the chunk holds only the
// fill value and `write_empty_chunks` is false (zarr-python's behaviour).
void store_chunk(Store& store, const std::string& key, const ArrayMetadata& m, std::span<const std::uint64_t> coords,
                 const NDBuffer& chunk, bool write_empty_chunks);

// The chunk coordinates of `relative_key` (a key below the array's path), when it is a
// canonically spelled chunk key of `m` inside `grid`; nullopt for any other key.
std::optional<std::vector<std::uint64_t>> parse_chunk_key(const ArrayMetadata& m, const Shape& grid,
                                                          std::string_view relative_key);

// A chunk the store lists for an array: its full key and its grid coordinates.
struct ListedChunk {
  std::string key;
  std::vector<std::uint64_t> coords;
};
// The chunks of the array at `path` inside `grid` (by default the array's own) that one
// listing of the store shows (every other key skipped: metadata, keys of child nodes,
// non-canonical spellings), in listing order.
std::vector<ListedChunk> list_chunks(Store& store, std::string_view path, const ArrayMetadata& m, const Shape& grid);
std::vector<ListedChunk> list_chunks(Store& store, std::string_view path, const ArrayMetadata& m);

}  // namespace zarrkit
