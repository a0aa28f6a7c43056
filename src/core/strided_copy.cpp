#include "core/strided_copy.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "zarrkit/error.h"

namespace zarrkit {
namespace {

struct Dim {
  std::uint64_t extent;
  std::int64_t dst_stride;
  std::int64_t src_stride;
};

// The layout after dropping extent-1 axes and merging contiguous neighbours.
struct Layout {
  std::array<Dim, kMaxCopyDims> dims;
  std::size_t ndim = 0;
  bool empty = false;  // some extent is 0: nothing to do
};

Layout simplify(std::span<const std::uint64_t> shape, std::span<const std::int64_t> dst_strides,
                std::span<const std::int64_t> src_strides) {
  if (dst_strides.size() != shape.size() || src_strides.size() != shape.size()) {
    throw InternalError(fmt::format("strided copy: {} axes but {} and {} strides", shape.size(),
                                    dst_strides.size(), src_strides.size()));
  }
  if (shape.size() > kMaxCopyDims) {
    fail_unsupported("arrays with more than {} dimensions are not supported (got {})", kMaxCopyDims,
                     shape.size());
  }
  std::array<Dim, kMaxCopyDims> dims;
  std::size_t ndim = 0;
  Layout layout;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) {
      layout.empty = true;
      return layout;
    }
    if (shape[i] != 1) dims[ndim++] = {shape[i], dst_strides[i], src_strides[i]};
  }
  // An element-wise copy may visit the axes in any order. Walking the destination in
  // memory order (largest stride outermost) keeps the writes sequential when the caller's
  // layout differs from the chunk's (an F-order output, a transposed view). Already-sorted
  // axes, the common case, stay as they are.
  auto magnitude = [](std::int64_t s) { return s < 0 ? -s : s; };
  std::stable_sort(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(ndim),
                   [&](const Dim& a, const Dim& b) { return magnitude(a.dst_stride) > magnitude(b.dst_stride); });
  for (std::size_t i = 0; i < ndim; ++i) {
    const Dim& d = dims[i];
    if (layout.ndim > 0) {
      Dim& outer = layout.dims[layout.ndim - 1];
      // The outer axis steps exactly over a whole run of the inner one, on both sides.
      const auto extent = static_cast<std::int64_t>(d.extent);
      if (outer.dst_stride == d.dst_stride * extent && outer.src_stride == d.src_stride * extent) {
        outer = {outer.extent * d.extent, d.dst_stride, d.src_stride};
        continue;
      }
    }
    layout.dims[layout.ndim++] = d;
  }
  return layout;
}

template <std::size_t N>
void copy_row_fixed(std::byte* dst, std::int64_t ds, const std::byte* src, std::int64_t ss,
                    std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    std::memcpy(dst, src, N);  // a single load and store for fixed N
    dst += ds;
    src += ss;
  }
}

void copy_row_generic(std::byte* dst, std::int64_t ds, const std::byte* src, std::int64_t ss,
                      std::uint64_t n, std::size_t itemsize) {
  for (std::uint64_t i = 0; i < n; ++i) {
    std::memcpy(dst, src, itemsize);
    dst += ds;
    src += ss;
  }
}

// Fills n contiguous elements with one element's bytes.
void fill_row_contiguous(std::byte* dst, const std::byte* element, std::size_t itemsize,
                         std::uint64_t n) {
  bool uniform = true;  // all bytes of the element equal (zero, or a one-byte type)
  for (std::size_t b = 1; b < itemsize; ++b) uniform = uniform && element[b] == element[0];
  const std::size_t bytes = static_cast<std::size_t>(n) * itemsize;
  if (uniform) {
    std::memset(dst, static_cast<int>(element[0]), bytes);
    return;
  }
  // Copy one element, then keep doubling the filled prefix.
  std::memcpy(dst, element, itemsize);
  std::size_t filled = itemsize;
  while (filled < bytes) {
    const std::size_t chunk = std::min(filled, bytes - filled);
    std::memcpy(dst + filled, dst, chunk);
    filled += chunk;
  }
}

// Copies the innermost axis.
struct RowCopier {
  std::size_t itemsize;

  void operator()(std::byte* dst, std::int64_t ds, const std::byte* src, std::int64_t ss,
                  std::uint64_t n) const {
    const auto size = static_cast<std::int64_t>(itemsize);
    if (ds == size && ss == size) {
      std::memcpy(dst, src, static_cast<std::size_t>(n) * itemsize);
      return;
    }
    if (ds == size && ss == 0) {
      fill_row_contiguous(dst, src, itemsize, n);
      return;
    }
    switch (itemsize) {
      case 1: return copy_row_fixed<1>(dst, ds, src, ss, n);
      case 2: return copy_row_fixed<2>(dst, ds, src, ss, n);
      case 4: return copy_row_fixed<4>(dst, ds, src, ss, n);
      case 8: return copy_row_fixed<8>(dst, ds, src, ss, n);
      case 16: return copy_row_fixed<16>(dst, ds, src, ss, n);
      default: return copy_row_generic(dst, ds, src, ss, n, itemsize);
    }
  }
};

}  // namespace

void copy_strided(std::span<const std::uint64_t> shape, std::byte* dst,
                  std::span<const std::int64_t> dst_strides, const std::byte* src,
                  std::span<const std::int64_t> src_strides, std::size_t itemsize) {
  if (itemsize == 0) return;
  const Layout layout = simplify(shape, dst_strides, src_strides);
  if (layout.empty) return;
  const RowCopier copy_row{itemsize};
  if (layout.ndim == 0) {  // a single element
    std::memcpy(dst, src, itemsize);
    return;
  }
  const Dim& inner = layout.dims[layout.ndim - 1];
  const std::size_t outer_ndim = layout.ndim - 1;
  std::array<std::uint64_t, kMaxCopyDims> index{};
  for (;;) {
    copy_row(dst, inner.dst_stride, src, inner.src_stride, inner.extent);
    // Advance the odometer over the outer axes, last one fastest.
    std::size_t axis = outer_ndim;
    while (axis-- > 0) {
      const Dim& d = layout.dims[axis];
      dst += d.dst_stride;
      src += d.src_stride;
      if (++index[axis] < d.extent) break;
      index[axis] = 0;
      dst -= d.dst_stride * static_cast<std::int64_t>(d.extent);
      src -= d.src_stride * static_cast<std::int64_t>(d.extent);
    }
    if (axis == static_cast<std::size_t>(-1)) return;
  }
}

void fill_strided(std::span<const std::uint64_t> shape, std::byte* dst,
                  std::span<const std::int64_t> dst_strides, ByteView element) {
  // A fill is a copy from a source whose strides are all zero.
  std::array<std::int64_t, kMaxCopyDims> zeros{};
  if (shape.size() > kMaxCopyDims) {
    fail_unsupported("arrays with more than {} dimensions are not supported (got {})", kMaxCopyDims,
                     shape.size());
  }
  copy_strided(shape, dst, dst_strides, element.data(), std::span(zeros.data(), shape.size()),
               element.size());
}

}  // namespace zarrkit
