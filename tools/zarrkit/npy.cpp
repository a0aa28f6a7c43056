#include "zarrkit/npy.h"

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/checked_math.h"
#include "zarrkit/error.h"

namespace zarrkit::cli {
namespace {

std::uint64_t file_size(std::FILE* f, const std::filesystem::path& path) {
  if (fseeko(f, 0, SEEK_END) != 0) fail_io("cannot seek in {}: {}", path.string(), std::strerror(errno));
  off_t size = ftello(f);
  if (size < 0 || fseeko(f, 0, SEEK_SET) != 0) fail_io("cannot seek in {}: {}", path.string(), std::strerror(errno));
  return static_cast<std::uint64_t>(size);
}

void read_exact(std::FILE* f, std::byte* out, std::size_t n, const std::filesystem::path& path) {
  if (n > 0 && std::fread(out, 1, n, f) != n) {
    if (std::ferror(f)) fail_io("reading {}: {}", path.string(), std::strerror(errno));
    fail_data_loss("{} is truncated", path.string());
  }
}

}  // namespace

NpyReader::NpyReader(const std::filesystem::path& path)
    : path_(path), file_(std::fopen(path.c_str(), "rb"), &std::fclose) {
  if (!file_) {
    if (errno == ENOENT) fail_not_found("no such file: {}", path.string());
    fail_io("cannot open {}: {}", path.string(), std::strerror(errno));
  }
  const std::uint64_t size = file_size(file_.get(), path);
  // Read the preamble, then exactly the header it announces (bounded by the file size).
  std::vector<std::byte> head(std::min<std::uint64_t>(size, 12));
  read_exact(file_.get(), head.data(), head.size(), path);
  std::size_t preamble = npy_preamble_size(head);
  std::uint64_t header_len = 0;
  if (preamble != 0 && head.size() >= preamble) {
    for (std::size_t i = preamble; i-- > 8;) header_len = (header_len << 8) | static_cast<std::uint8_t>(head[i]);
  }
  const std::uint64_t wanted = std::min<std::uint64_t>(preamble + std::min<std::uint64_t>(header_len, kMaxNpyHeaderBytes), size);
  if (wanted > head.size()) {
    std::size_t have = head.size();
    head.resize(to_size(wanted));
    read_exact(file_.get(), head.data() + have, head.size() - have, path);
  }
  try {
    header_ = parse_npy_header(head);
  } catch (const Error& e) {
    rethrow_with_context(e, path.string());
  }
  if (size - header_.data_offset < header_.data_bytes) {
    fail_data_loss("{} is truncated: its header promises {} bytes of data, the file has {}", path.string(),
                   header_.data_bytes, size - header_.data_offset);
  }
  native_ = native_dtype(header_.dtype);
}

std::size_t NpyReader::slab_axis() const {
  return header_.fortran_order && !shape().empty() ? shape().size() - 1 : 0;
}

std::uint64_t NpyReader::slab_stride_bytes() const {
  if (shape().empty()) return header_.data_bytes;
  const std::uint64_t extent = shape()[slab_axis()];
  return extent == 0 ? 0 : header_.data_bytes / extent;
}

NDBuffer NpyReader::read_slab(std::uint64_t begin, std::uint64_t end) {
  const std::size_t ndim = shape().size();
  const std::uint64_t extent = ndim == 0 ? 1 : shape()[slab_axis()];
  if (begin > end || end > extent) fail_invalid("slab [{}, {}) is outside axis of length {}", begin, end, extent);
  Shape slab_shape = shape();
  if (ndim > 0) slab_shape[slab_axis()] = end - begin;
  const std::uint64_t stride = slab_stride_bytes();
  Buffer raw = Buffer::allocate(to_size(checked_mul(end - begin, stride)));
  const auto offset = checked_add(header_.data_offset, checked_mul(begin, stride));
  if (fseeko(file_.get(), static_cast<off_t>(offset), SEEK_SET) != 0) {
    fail_io("cannot seek in {}: {}", path_.string(), std::strerror(errno));
  }
  read_exact(file_.get(), raw.data(), raw.size(), path_);
  npy_to_native(raw.mutable_view(), header_.dtype);
  if (!header_.fortran_order || ndim < 2) return NDBuffer(std::move(raw), std::move(slab_shape), native_);

  // Fortran order: the first axis varies fastest. Describe the slab with those strides and
  // copy it into C order.
  NDView fortran{raw.data(), slab_shape, std::vector<std::int64_t>(ndim), native_, MemoryKind::kHost};
  std::int64_t s = static_cast<std::int64_t>(native_.size());
  for (std::size_t i = 0; i < ndim; ++i) {
    fortran.byte_strides[i] = s;
    s *= static_cast<std::int64_t>(slab_shape[i]);
  }
  NDBuffer c_order = NDBuffer::allocate(slab_shape, native_);
  copy_to_c_order(fortran, c_order.data());
  return c_order;
}

NDBuffer NpyReader::read_all() { return read_slab(0, shape().empty() ? 1 : shape()[slab_axis()]); }

void copy_to_c_order(const NDView& source, std::byte* dest) {
  const std::size_t ndim = source.shape.size();
  const std::size_t item = source.dtype.size();
  const std::uint64_t count = checked_num_elements(source.shape);
  if (count == 0) return;
  if (ndim == 0 || source.is_c_contiguous()) {
    std::memcpy(dest, source.data, to_size(count * item));
    return;
  }
  // Walk the output in C order with an odometer over the source strides; the innermost axis
  // is a tight loop.
  std::vector<std::uint64_t> index(ndim, 0);
  const std::byte* row = source.data;
  const std::uint64_t inner = source.shape[ndim - 1];
  const std::int64_t inner_stride = source.byte_strides[ndim - 1];
  for (std::uint64_t done = 0; done < count; done += inner) {
    const std::byte* p = row;
    for (std::uint64_t i = 0; i < inner; ++i, p += inner_stride, dest += item) std::memcpy(dest, p, item);
    for (std::size_t axis = ndim - 1; axis-- > 0;) {
      row += source.byte_strides[axis];
      if (++index[axis] < source.shape[axis]) break;
      row -= source.byte_strides[axis] * static_cast<std::int64_t>(source.shape[axis]);
      index[axis] = 0;
    }
  }
}

void write_npy(const std::filesystem::path& path, const NDBuffer& array) {
  const std::string header = format_npy_header(array.dtype(), array.shape());
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!file) fail_io("cannot create {}: {}", path.string(), std::strerror(errno));
  bool ok = std::fwrite(header.data(), 1, header.size(), file.get()) == header.size();
  if (ok && array.nbytes() > 0) ok = std::fwrite(array.data(), 1, array.nbytes(), file.get()) == array.nbytes();
  if (!ok || std::fclose(file.release()) != 0) fail_io("writing {}: {}", path.string(), std::strerror(errno));
}

}  // namespace zarrkit::cli
