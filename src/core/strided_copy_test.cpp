#include "core/strided_copy.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace zarrkit {
namespace {

// A strided layout over a backing buffer: random axis order, random gaps, maybe reversed.
struct Layout {
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;  // byte offset of element [0,...,0]
  std::size_t bytes = 0;    // backing buffer size
};

Layout random_layout(std::mt19937_64& rng, const std::vector<std::uint64_t>& shape,
                     std::size_t itemsize, bool allow_broadcast) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const std::size_t ndim = shape.size();
  std::vector<std::size_t> order(ndim);
  std::iota(order.begin(), order.end(), 0);
  if (pick(0, 1)) std::shuffle(order.begin(), order.end(), rng);
  Layout l;
  l.strides.assign(ndim, 0);
  std::int64_t stride = static_cast<std::int64_t>(itemsize) * pick(1, pick(0, 2) ? 1 : 3);
  for (std::size_t k = ndim; k-- > 0;) {
    const std::size_t axis = order[k];
    if (allow_broadcast && pick(0, 5) == 0) continue;  // stride 0
    l.strides[axis] = stride;
    stride *= static_cast<std::int64_t>(shape[axis]) + (pick(0, 3) == 0 ? pick(1, 2) : 0);
  }
  l.bytes = static_cast<std::size_t>(stride) + itemsize;
  // Reverse some axes: start at the far end with a negative stride.
  for (std::size_t a = 0; a < ndim; ++a) {
    if (shape[a] > 0 && pick(0, 4) == 0) {
      l.offset += l.strides[a] * static_cast<std::int64_t>(shape[a] - 1);
      l.strides[a] = -l.strides[a];
    }
  }
  return l;
}

TEST(StridedCopy, MatchesElementByElementCopy) {
  std::mt19937_64 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const std::size_t itemsizes[] = {1, 2, 3, 4, 8, 12, 16};
  for (int iteration = 0; iteration < 3000; ++iteration) {
    const std::size_t itemsize = itemsizes[pick(0, 6)];
    std::vector<std::uint64_t> shape(static_cast<std::size_t>(pick(0, 5)));
    for (auto& d : shape) d = static_cast<std::uint64_t>(pick(0, 9) == 0 ? pick(0, 1) : pick(1, 6));
    const Layout dl = random_layout(rng, shape, itemsize, false);
    const Layout sl = random_layout(rng, shape, itemsize, true);
    std::vector<std::byte> src(sl.bytes), dst(dl.bytes), want(dl.bytes);
    for (auto& b : src) b = static_cast<std::byte>(pick(0, 255));
    for (auto& b : dst) b = static_cast<std::byte>(pick(0, 255));
    want = dst;

    // Reference: walk every index.
    std::size_t total = 1;
    for (auto d : shape) total *= d;
    for (std::size_t flat = 0; flat < total; ++flat) {
      std::size_t rest = flat;
      std::int64_t so = sl.offset, d_o = dl.offset;
      for (std::size_t a = shape.size(); a-- > 0;) {
        const auto i = static_cast<std::int64_t>(rest % shape[a]);
        rest /= shape[a];
        so += i * sl.strides[a];
        d_o += i * dl.strides[a];
      }
      std::memcpy(want.data() + d_o, src.data() + so, itemsize);
    }

    copy_strided(shape, dst.data() + dl.offset, dl.strides, src.data() + sl.offset, sl.strides, itemsize);
    ASSERT_EQ(dst, want) << "iteration " << iteration;
  }
}

TEST(StridedCopy, ContiguousRegionsBecomeOneCopy) {
  std::vector<std::uint32_t> src(6 * 5 * 4), dst(src.size(), 0);
  std::iota(src.begin(), src.end(), 1u);
  const std::vector<std::uint64_t> shape{6, 5, 4};
  const std::vector<std::int64_t> strides{80, 16, 4};
  copy_strided(shape, reinterpret_cast<std::byte*>(dst.data()), strides,
               reinterpret_cast<const std::byte*>(src.data()), strides, 4);
  EXPECT_EQ(dst, src);
}

TEST(StridedCopy, FillWritesOnlyTheRegion) {
  // Fill the middle 2x3 block of a 4x5 int16 array with 0x0102.
  std::vector<std::uint16_t> a(20, 7);
  const std::uint16_t value = 0x0102;
  const std::vector<std::uint64_t> shape{2, 3};
  const std::vector<std::int64_t> strides{10, 2};
  fill_strided(shape, reinterpret_cast<std::byte*>(a.data() + 5 + 1), strides,
               ByteView(reinterpret_cast<const std::byte*>(&value), 2));
  for (std::size_t r = 0; r < 4; ++r) {
    for (std::size_t c = 0; c < 5; ++c) {
      const bool inside = r >= 1 && r <= 2 && c >= 1 && c <= 3;
      EXPECT_EQ(a[r * 5 + c], inside ? value : 7) << r << "," << c;
    }
  }
  // A long contiguous fill with a non-uniform 12-byte element (the doubling path).
  std::vector<std::byte> big(12 * 1000);
  std::byte element[12];
  for (int i = 0; i < 12; ++i) element[i] = static_cast<std::byte>(i + 1);
  fill_strided(std::vector<std::uint64_t>{1000}, big.data(), std::vector<std::int64_t>{12},
               ByteView(element, 12));
  for (std::size_t i = 0; i < big.size(); ++i) ASSERT_EQ(big[i], element[i % 12]);
}

TEST(StridedCopy, ZeroDimensionsAndEmptyShapes) {
  std::uint64_t a = 5, b = 0;
  copy_strided({}, reinterpret_cast<std::byte*>(&b), {}, reinterpret_cast<const std::byte*>(&a), {}, 8);
  EXPECT_EQ(b, 5u);
  const std::vector<std::uint64_t> empty{3, 0};
  const std::vector<std::int64_t> strides{8, 8};
  copy_strided(empty, nullptr, strides, nullptr, strides, 8);  // touches nothing
}

}  // namespace
}  // namespace zarrkit
