// The v3 "transpose" codec (array->array): permutes the axes of the chunk. The encoded
// array B has shape B[i] = A[order[i]] (SPEC-NOTES rule 18), so B's axis i walks A's axis
// order[i]. Both sides are C-contiguous; the work is one strided copy.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>

#include <fmt/ranges.h>

#include "codecs/register.h"
#include "codecs/transpose.h"
#include "core/checked_math.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

// One axis of a strided copy: its extent, and the byte step along it in source and destination.
struct CopyAxis {
  std::uint64_t extent;
  std::int64_t src_stride;
  std::int64_t dst_stride;
};

template <std::size_t N>
void copy_tile(std::byte* dst, const std::byte* src, std::uint64_t rows, std::uint64_t cols,
               std::int64_t src_row, std::int64_t src_col, std::int64_t dst_row, std::int64_t dst_col,
               std::size_t itemsize) {
  for (std::uint64_t r = 0; r < rows; ++r) {
    const std::byte* s = src + static_cast<std::int64_t>(r) * src_row;
    std::byte* d = dst + static_cast<std::int64_t>(r) * dst_row;
    for (std::uint64_t c = 0; c < cols; ++c, s += src_col, d += dst_col) {
      std::memcpy(d, s, N == 0 ? itemsize : N);  // N known at compile time: one move
    }
  }
}

void copy_tile_any(std::byte* dst, const std::byte* src, std::uint64_t rows, std::uint64_t cols,
                   std::int64_t src_row, std::int64_t src_col, std::int64_t dst_row, std::int64_t dst_col,
                   std::size_t itemsize) {
  switch (itemsize) {
    case 1: return copy_tile<1>(dst, src, rows, cols, src_row, src_col, dst_row, dst_col, itemsize);
    case 2: return copy_tile<2>(dst, src, rows, cols, src_row, src_col, dst_row, dst_col, itemsize);
    case 4: return copy_tile<4>(dst, src, rows, cols, src_row, src_col, dst_row, dst_col, itemsize);
    case 8: return copy_tile<8>(dst, src, rows, cols, src_row, src_col, dst_row, dst_col, itemsize);
    case 16: return copy_tile<16>(dst, src, rows, cols, src_row, src_col, dst_row, dst_col, itemsize);
    default: return copy_tile<0>(dst, src, rows, cols, src_row, src_col, dst_row, dst_col, itemsize);
  }
}

// Copies an array described by `axes` (destination C-contiguous, source strided). The two
// innermost axes of the work are the destination's last axis and the axis along which the
// source is densest; they are copied in square tiles so that both sides stay in cache.
void strided_copy(std::byte* dst, const std::byte* src, std::vector<CopyAxis> axes, std::size_t itemsize) {
  // Axes of extent 1 do not move anything.
  std::erase_if(axes, [](const CopyAxis& a) { return a.extent == 1; });
  for (const auto& a : axes) {
    if (a.extent == 0) return;
  }
  // Merge neighbours that are contiguous on both sides into one longer axis.
  std::vector<CopyAxis> merged;
  for (const auto& a : axes) {
    if (!merged.empty()) {
      auto& last = merged.back();
      if (last.src_stride == a.src_stride * static_cast<std::int64_t>(a.extent) &&
          last.dst_stride == a.dst_stride * static_cast<std::int64_t>(a.extent)) {
        last.extent *= a.extent;
        last.src_stride = a.src_stride;
        last.dst_stride = a.dst_stride;
        continue;
      }
    }
    merged.push_back(a);
  }
  const auto item = static_cast<std::int64_t>(itemsize);
  if (merged.empty()) {  // a single element (or a 0-d chunk)
    std::memcpy(dst, src, itemsize);
    return;
  }
  // The destination's innermost axis is C-contiguous; if the source is too, copy rows.
  const std::size_t n = merged.size();
  const CopyAxis inner = merged[n - 1];
  std::size_t dense = n - 1;  // the axis along which the source moves least
  for (std::size_t i = 0; i < n; ++i) {
    if (std::abs(merged[i].src_stride) < std::abs(merged[dense].src_stride)) dense = i;
  }
  const bool rows_are_contiguous = inner.src_stride == item;
  // Tile when another axis is denser in the source than the destination's rows.
  const bool tiled = !rows_are_contiguous && dense != n - 1;
  std::vector<CopyAxis> outer;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if (!tiled || i != dense) outer.push_back(merged[i]);
  }
  const CopyAxis tile_rows = tiled ? merged[dense] : CopyAxis{1, 0, 0};

  constexpr std::uint64_t kTile = 32;
  std::vector<std::uint64_t> index(outer.size(), 0);
  std::int64_t src_offset = 0;
  std::int64_t dst_offset = 0;
  for (;;) {
    if (rows_are_contiguous) {
      std::memcpy(dst + dst_offset, src + src_offset, inner.extent * itemsize);
    } else {
      for (std::uint64_t r0 = 0; r0 < tile_rows.extent; r0 += kTile) {
        const std::uint64_t rows = std::min(kTile, tile_rows.extent - r0);
        for (std::uint64_t c0 = 0; c0 < inner.extent; c0 += kTile) {
          const std::uint64_t cols = std::min(kTile, inner.extent - c0);
          const auto r = static_cast<std::int64_t>(r0);
          const auto c = static_cast<std::int64_t>(c0);
          copy_tile_any(dst + dst_offset + r * tile_rows.dst_stride + c * inner.dst_stride,
                        src + src_offset + r * tile_rows.src_stride + c * inner.src_stride, rows, cols,
                        tile_rows.src_stride, inner.src_stride, tile_rows.dst_stride, inner.dst_stride,
                        itemsize);
        }
      }
    }
    // Odometer over the outer axes.
    std::size_t axis = outer.size();
    for (; axis-- > 0;) {
      src_offset += outer[axis].src_stride;
      dst_offset += outer[axis].dst_stride;
      if (++index[axis] < outer[axis].extent) break;
      src_offset -= outer[axis].src_stride * static_cast<std::int64_t>(outer[axis].extent);
      dst_offset -= outer[axis].dst_stride * static_cast<std::int64_t>(outer[axis].extent);
      index[axis] = 0;
    }
    if (axis == static_cast<std::size_t>(-1)) return;
  }
}

// Copies `src` (C-contiguous, shape `src_shape`) into `dst` (C-contiguous) so that
// dst axis i is src axis perm[i].
void permute_axes(std::byte* dst, const std::byte* src, const Shape& src_shape,
                  const std::vector<std::size_t>& perm, std::size_t itemsize) {
  const auto src_strides = NDView::c_strides(src_shape, itemsize);
  Shape dst_shape(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) dst_shape[i] = src_shape[perm[i]];
  const auto dst_strides = NDView::c_strides(dst_shape, itemsize);
  std::vector<CopyAxis> axes(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) axes[i] = {dst_shape[i], src_strides[perm[i]], dst_strides[i]};
  strided_copy(dst, src, std::move(axes), itemsize);
}

class TransposeCodec final : public ArrayToArrayCodec {
 public:
  // `order` is a permutation (checked by the factory), or empty when `layout` is "C"/"F".
  TransposeCodec(std::vector<std::size_t> order, std::optional<char> layout)
      : order_(std::move(order)), layout_(layout) {}

  std::string_view name() const override { return "transpose"; }
  std::vector<std::size_t> order(std::size_t ndim) const { return order_for(ndim); }

  nlohmann::json to_json() const override {
    nlohmann::json config;
    if (layout_) {
      config["order"] = std::string(1, *layout_);
    } else {
      config["order"] = order_;
    }
    return codec_json(name(), std::move(config));
  }

  ChunkSpec encoded_spec(const ChunkSpec& decoded) const override {
    const auto order = order_for(decoded.shape.size());
    ChunkSpec encoded = decoded;
    for (std::size_t i = 0; i < order.size(); ++i) encoded.shape[i] = decoded.shape[order[i]];
    return encoded;
  }

  NDBuffer encode(const NDBuffer& decoded, const ChunkSpec& decoded_spec) const override {
    check_input(decoded, decoded_spec.shape, decoded_spec, "encode");
    const auto order = order_for(decoded_spec.shape.size());
    ChunkSpec encoded = encoded_spec(decoded_spec);
    NDBuffer out = NDBuffer::allocate(encoded.shape, decoded_spec.dtype);
    permute_axes(out.data(), decoded.data(), decoded_spec.shape, order, decoded_spec.dtype.size());
    return out;
  }

  NDBuffer decode(const NDBuffer& encoded, const ChunkSpec& decoded_spec) const override {
    const auto order = order_for(decoded_spec.shape.size());
    ChunkSpec encoded_shape_spec = encoded_spec(decoded_spec);
    check_input(encoded, encoded_shape_spec.shape, decoded_spec, "decode");
    // A's axis order[i] is B's axis i, so A's axis k is B's axis inverse[k].
    std::vector<std::size_t> inverse(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) inverse[order[i]] = i;
    NDBuffer out = NDBuffer::allocate(decoded_spec.shape, decoded_spec.dtype);
    permute_axes(out.data(), encoded.data(), encoded_shape_spec.shape, inverse, decoded_spec.dtype.size());
    return out;
  }

 private:
  std::vector<std::size_t> order_for(std::size_t ndim) const {
    if (layout_) {
      std::vector<std::size_t> order(ndim);
      std::iota(order.begin(), order.end(), std::size_t{0});
      if (*layout_ == 'F') std::reverse(order.begin(), order.end());
      return order;
    }
    if (order_.size() != ndim) {
      fail_invalid("transpose order [{}] has {} entries but the chunk has {} dimensions", fmt::join(order_, ","),
                   order_.size(), ndim);
    }
    return order_;
  }

  static void check_input(const NDBuffer& array, const Shape& expected_shape, const ChunkSpec& spec,
                          const char* what) {
    if (array.dtype().is_variable_length()) {
      fail_unsupported("transpose cannot {} {}, a variable-length type", what, array.dtype().name());
    }
    if (array.shape() != expected_shape || !(array.dtype() == spec.dtype)) {
      fail_invalid("transpose cannot {} an array of shape [{}] {}: expected shape [{}] {}", what,
                   fmt::join(array.shape(), ","), array.dtype().name(), fmt::join(expected_shape, ","),
                   spec.dtype.name());
    }
    if (!is_host_accessible(array.kind())) {
      fail_unsupported("transpose cannot {} {} memory", what, memory_kind_name(array.kind()));
    }
  }

  std::vector<std::size_t> order_;
  std::optional<char> layout_;
};

std::shared_ptr<const Codec> make_transpose(const nlohmann::json& configuration, const CodecContext&) {
  for (const auto& [key, value] : configuration.items()) {
    if (key != "order") fail_invalid("transpose codec: unexpected configuration key \"{}\"", key);
  }
  auto it = configuration.find("order");
  if (it == configuration.end()) fail_invalid("transpose codec needs \"order\"");
  // Early v3 drafts (and tensorstore) also accept "C" and "F".
  if (*it == "C" || *it == "F") {
    return std::make_shared<TransposeCodec>(std::vector<std::size_t>{}, it->get<std::string>()[0]);
  }
  if (!it->is_array()) fail_invalid("transpose \"order\" must be a list of axes, got {}", it->dump());
  std::vector<std::size_t> order;
  std::vector<bool> seen(it->size(), false);
  for (const auto& axis : *it) {
    if (!axis.is_number_integer() || axis.get<std::int64_t>() < 0 ||
        axis.get<std::uint64_t>() >= it->size() || seen[axis.get<std::size_t>()]) {
      fail_invalid("transpose \"order\" {} is not a permutation of 0..{}", it->dump(),
                   static_cast<std::int64_t>(it->size()) - 1);
    }
    seen[axis.get<std::size_t>()] = true;
    order.push_back(axis.get<std::size_t>());
  }
  return std::make_shared<TransposeCodec>(std::move(order), std::nullopt);
}

}  // namespace

std::vector<std::size_t> transpose_codec_order(const Codec& codec, std::size_t ndim) {
  const auto* transpose = dynamic_cast<const TransposeCodec*>(&codec);
  if (transpose == nullptr) throw InternalError(fmt::format("'{}' is not the transpose codec", codec.name()));
  return transpose->order(ndim);
}

void register_transpose_codec(CodecRegistry& registry) { registry.add_v3("transpose", make_transpose); }

}  // namespace zarrkit
