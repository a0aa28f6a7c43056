#include "engine/chunk_io.h"

#include <charconv>
#include <limits>

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "zarrkit/error.h"

namespace zarrkit {

void require_fixed_size_elements(const DataType& dtype) {
  if (dtype.is_variable_length() || dtype.size() == 0) {
    fail_unsupported("reading and writing arrays of the variable-length type {} is not supported yet",
                     dtype.name());
  }
}

void require_host_memory(const NDView& view, const char* what) {
  if (!is_host_accessible(view.kind)) {
    fail_unsupported("{} {} memory is not supported yet: the engine copies on the CPU", what,
                     memory_kind_name(view.kind));
  }
}

void require_fill_of_itemsize(const ArrayMetadata& m, std::string_view array) {
  if (m.fill_value.bytes().size() != m.dtype.size()) {
    fail_invalid("array '{}': the fill value has {} bytes, {} needs {}", array, m.fill_value.bytes().size(),
                 m.dtype.name(), m.dtype.size());
  }
}

void require_allocatable(const Shape& shape, const DataType& dtype, std::string_view what) {
  // No allocator can satisfy more than PTRDIFF_MAX bytes; refuse before asking.
  std::optional<std::uint64_t> nbytes = dtype.size();
  for (auto d : shape) nbytes = nbytes ? try_mul(*nbytes, d) : std::nullopt;
  if (!nbytes || *nbytes > static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max())) {
    fail_resource("{}: [{}] of {} needs more memory than can be allocated", what, fmt::join(shape, ", "),
                  dtype.name());
  }
}

NDBuffer decode_chunk(const ArrayMetadata& m, std::span<const std::uint64_t> coords, ByteView encoded) {
  const PreparedChain& chain = m.prepared_chain(coords);
  NDBuffer chunk = chain.decode(encoded, BufferPrototype::host());
  const std::uint64_t chunk_bytes = chain.chunk_bytes();
  if (chunk.nbytes() != chunk_bytes || chunk.shape() != chain.spec().shape) {
    fail_data_loss("the codec chain decoded {} bytes of shape [{}], the chunk needs {} bytes of shape [{}]",
                   chunk.nbytes(), fmt::join(chunk.shape(), ", "), chunk_bytes, fmt::join(chain.spec().shape, ", "));
  }
  return chunk;
}

void store_chunk(Store& store, const std::string& key, const ArrayMetadata& m, std::span<const std::uint64_t> coords,
                 const NDBuffer& chunk, bool write_empty_chunks) {
  if (!write_empty_chunks && all_equal_fill(chunk.buffer().view(), m.dtype, m.fill_value)) {
    store.erase(key);
    return;
  }
  const Buffer encoded = m.prepared_chain(coords).encode(chunk);
  store.set(key, encoded.view());
}

std::optional<std::vector<std::uint64_t>> parse_chunk_key(const ArrayMetadata& m, const Shape& grid,
                                                          std::string_view rel) {
  const ChunkKeyEncoding& e = m.chunk_key_encoding;
  std::string_view rest = rel;
  if (e.kind == ChunkKeyEncoding::Kind::kDefault) {
    if (!rest.starts_with('c')) return std::nullopt;
    rest.remove_prefix(1);
    if (m.ndim() == 0) return rest.empty() ? std::optional(std::vector<std::uint64_t>{}) : std::nullopt;
    if (rest.empty() || rest.front() != e.separator) return std::nullopt;
    rest.remove_prefix(1);
  } else if (m.ndim() == 0) {
    return rest == "0" ? std::optional(std::vector<std::uint64_t>{}) : std::nullopt;
  }
  std::vector<std::uint64_t> coords;
  coords.reserve(m.ndim());
  for (std::size_t axis = 0; axis < m.ndim(); ++axis) {
    if (axis > 0) {
      if (rest.empty() || rest.front() != e.separator) return std::nullopt;
      rest.remove_prefix(1);
    }
    std::uint64_t index = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
    if (ec != std::errc() || end == rest.data() || index >= grid[axis]) return std::nullopt;
    coords.push_back(index);
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
  }
  // Reject non-canonical spellings ("c/01") by encoding the coordinates again.
  if (!rest.empty() || m.chunk_key(coords) != rel) return std::nullopt;
  return coords;
}

std::vector<ListedChunk> list_chunks(Store& store, std::string_view path, const ArrayMetadata& m) {
  return list_chunks(store, path, m, m.chunk_grid_shape());
}

std::vector<ListedChunk> list_chunks(Store& store, std::string_view path, const ArrayMetadata& m, const Shape& grid) {
  const std::size_t skip = path.empty() ? 0 : path.size() + 1;
  std::vector<ListedChunk> out;
  for (std::string& key : store.list(path)) {
    if (key.size() <= skip || (skip > 0 && key[skip - 1] != '/')) continue;
    if (auto coords = parse_chunk_key(m, grid, std::string_view(key).substr(skip))) {
      out.push_back({std::move(key), std::move(*coords)});
    }
  }
  return out;
}

}  // namespace zarrkit
