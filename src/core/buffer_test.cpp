#include "zarrkit/buffer.h"

#include <gtest/gtest.h>

#include "zarrkit/dtype.h"
#include "zarrkit/error.h"
#include "zarrkit/ndbuffer.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {

TEST(Buffer, SliceSharesOwnershipAndChecksBounds) {
  Buffer b = Buffer::copy_of(as_bytes("hello world"));
  Buffer s = b.slice(6, 5);
  EXPECT_EQ(as_chars(s.view()), "world");
  EXPECT_THROW(b.slice(6, 6), InvalidArgumentError);
  EXPECT_THROW(b.slice(12, 0), InvalidArgumentError);
}

TEST(NDBuffer, FilledWithPattern) {
  auto nd = NDBuffer::filled({3, 5}, DataType::int_(32), FillValue::of<std::int32_t>(-7));
  const auto* p = reinterpret_cast<const std::int32_t*>(nd.data());
  for (int i = 0; i < 15; ++i) EXPECT_EQ(p[i], -7);
  EXPECT_TRUE(all_equal_fill(nd.buffer().view(), nd.dtype(), FillValue::of<std::int32_t>(-7)));
  EXPECT_FALSE(all_equal_fill(nd.buffer().view(), nd.dtype(), FillValue::of<std::int32_t>(0)));
}

TEST(NDBuffer, SizeOverflowIsAnError) {
  EXPECT_THROW(NDBuffer::allocate({1ull << 40, 1ull << 40}, DataType::float_(64)), InvalidArgumentError);
}

TEST(ByteSwap, ComplexSwapsHalves) {
  std::uint32_t v[2] = {0x01020304u, 0x05060708u};
  byteswap_elements({reinterpret_cast<std::byte*>(v), 8}, DataType::complex_(64), Endian::kBig);
  EXPECT_EQ(v[0], 0x04030201u);
  EXPECT_EQ(v[1], 0x08070605u);
}

TEST(FillCheck, AnyNanMatchesNanFill) {
  float data[3] = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                   std::numeric_limits<float>::signaling_NaN()};
  EXPECT_TRUE(all_equal_fill({reinterpret_cast<std::byte*>(data), 12}, DataType::float_(32),
                             FillValue::of(std::numeric_limits<float>::quiet_NaN())));
}

TEST(ThreadPool, RunsAllAndReportsFirstError) {
  ThreadPool pool(4);
  std::vector<int> hits(1000, 0);
  pool.parallel_for(hits.size(), [&](std::size_t i) { hits[i]++; });
  for (int h : hits) EXPECT_EQ(h, 1);
  EXPECT_THROW(pool.parallel_for(100, [](std::size_t i) {
    if (i % 10 == 3) throw DataLossError("bad");
  }), DataLossError);
  // Nested use shares the pool rather than deadlocking.
  std::atomic<int> total{0};
  pool.parallel_for(8, [&](std::size_t) { pool.parallel_for(8, [&](std::size_t) { total++; }); });
  EXPECT_EQ(total.load(), 64);
}

}  // namespace
}  // namespace zarrkit
