// OutputFaults and ReadOrder (output_faults.h): each span of a large output faulted in once,
// before it is written, its values kept; tasks taken one from each page-disjoint group.
#include "engine/output_faults.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "zarrkit/selection.h"

namespace zarrkit {
namespace {

constexpr std::size_t kSpan = std::size_t{2} << 20;

// Fresh anonymous memory, untouched: no page of it is resident until written or faulted.
class FreshMemory {
 public:
  explicit FreshMemory(std::size_t bytes) : bytes_(bytes) {
    data_ = static_cast<std::byte*>(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    EXPECT_NE(data_, MAP_FAILED);
    ::madvise(data_, bytes, MADV_NOHUGEPAGE);  // pages of 4 KiB, so residency is exact
  }
  ~FreshMemory() { ::munmap(data_, bytes_); }
  std::byte* data() const { return data_; }
  // Whether each 4 KiB page of [offset, offset + length) is resident.
  std::vector<bool> resident(std::size_t offset, std::size_t length) const {
    std::vector<unsigned char> pages(length / 4096);
    EXPECT_EQ(::mincore(data_ + offset, length, pages.data()), 0);
    std::vector<bool> out;
    for (unsigned char p : pages) out.push_back((p & 1) != 0);
    return out;
  }

 private:
  std::byte* data_;
  std::size_t bytes_;
};

NDView view_of(std::byte* data, const Shape& shape) {
  return NDView{data, shape, NDView::c_strides(shape, 4), DataType::uint_(32)};
}

TEST(OutputFaults, FaultsInTheSpansAboutToBeWrittenOnce) {
  // 80 MiB (above the 64 MiB threshold): 40 spans of 2 MiB from the mapping's start.
  FreshMemory memory(80 << 20);
  const NDView out = view_of(memory.data(), {20, 1024, 1024});
  OutputFaults faults(out, 4);
  ASSERT_TRUE(faults.active());
  const auto none = memory.resident(0, 80 << 20);
  EXPECT_EQ(std::count(none.begin(), none.end(), true), 0);
  // A write of a few bytes inside span 3 and one across spans 10 and 11.
  faults.before_write(memory.data() + 3 * kSpan + 100, memory.data() + 3 * kSpan + 200);
  faults.before_write(memory.data() + 11 * kSpan - 8, memory.data() + 11 * kSpan + 8);
  for (std::size_t span = 0; span < 40; ++span) {
    const auto pages = memory.resident(span * kSpan, kSpan);
    const bool want = span == 3 || span == 10 || span == 11;
    EXPECT_EQ(std::count(pages.begin(), pages.end(), want), static_cast<long>(pages.size())) << "span " << span;
  }
  // Rows: every span they touch.
  std::vector<MutableByteView> rows = {MutableByteView(memory.data() + 20 * kSpan, 64),
                                       MutableByteView(memory.data() + 20 * kSpan + 4096, 64),
                                       MutableByteView(memory.data() + 30 * kSpan - 32, 64)};
  faults.before_write(rows);
  for (const std::size_t span : {20, 29, 30}) {
    const auto pages = memory.resident(span * kSpan, kSpan);
    EXPECT_EQ(std::count(pages.begin(), pages.end(), true), static_cast<long>(pages.size())) << "span " << span;
  }
  const auto untouched = memory.resident(21 * kSpan, kSpan);
  EXPECT_EQ(std::count(untouched.begin(), untouched.end(), true), 0);
  // Bytes outside the output are left alone.
  faults.before_write(memory.data() - 4096, memory.data());
  faults.fault_all();
  const auto all = memory.resident(0, 80 << 20);
  EXPECT_EQ(std::count(all.begin(), all.end(), true), static_cast<long>(all.size()));
}

TEST(OutputFaults, ThreadsFaultingTheSameSpansKeepTheValues) {
  // 80 MiB, not span aligned, with values in place already; eight threads walk the same
  // rows at once.
  const Shape shape = {5, 1024, 1024 * 4 + 3};
  std::vector<std::uint32_t> storage(5 * 1024 * (1024 * 4 + 3) + 1);
  for (std::size_t i = 0; i < storage.size(); i += 997) storage[i] = static_cast<std::uint32_t>(i);
  const std::vector<std::uint32_t> before = storage;
  const NDView out = view_of(reinterpret_cast<std::byte*>(storage.data() + 1), shape);
  OutputFaults faults(out, 8);
  ASSERT_TRUE(faults.active());
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const std::size_t bytes = (storage.size() - 1) * 4;
      for (std::size_t at = static_cast<std::size_t>(t) * 4096; at < bytes; at += 3 * kSpan / 2) {
        faults.before_write(out.data + at, out.data + std::min(bytes, at + kSpan));
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(storage, before);
}

TEST(OutputFaults, InactiveForSmallStridedOrSingleThreadedOutputs) {
  std::vector<std::uint32_t> small(1 << 20);
  EXPECT_FALSE(OutputFaults(view_of(reinterpret_cast<std::byte*>(small.data()), {1024, 1024}), 16).active());
  const auto fake = reinterpret_cast<std::byte*>(std::uintptr_t{1} << 40);  // never touched
  EXPECT_FALSE(OutputFaults(view_of(fake, {64, 1024, 1024}), 1).active());
  NDView strided = view_of(fake, {64, 1024, 1024});
  strided.byte_strides[2] = 8;
  EXPECT_FALSE(OutputFaults(strided, 16).active());
  EXPECT_TRUE(OutputFaults(view_of(fake, {64, 1024, 1024}), 16).active());
}

TEST(OutputFaults, TaskSpanReachesFromTheLowestToTheHighestElement) {
  const Shape shape = {8, 100, 100};
  const ChunkPlan plan(shape, {4, 50, 50}, Selection{Slice{1, 7, 1}, Slice{std::nullopt, std::nullopt, -1}, Slice{}});
  const NDView region = view_of(reinterpret_cast<std::byte*>(std::uintptr_t{1} << 40), plan.output_shape());
  // Task 0: chunk (0, 0, 0), rows 1-3 of the array (output rows 0-2); the reversed axis puts
  // array rows 0-49 at output positions 99-50; columns 0-49.
  const auto [begin, end] = OutputFaults::task_span(plan.task(0), region);
  EXPECT_EQ(begin - region.data, (0 * 100 * 100 + 50 * 100 + 0) * 4);
  EXPECT_EQ(end - region.data, (2 * 100 * 100 + 99 * 100 + 49) * 4 + 4);
}

TEST(ReadOrder, TakesEveryTaskOnceOneFromEachGroupInTurn) {
  for (const std::size_t n : {1, 5, 16, 17, 128, 131}) {
    for (const std::size_t groups : {0, 1, 2, 3, 16}) {
      SCOPED_TRACE(fmt::format("{} tasks, {} groups", n, groups));
      const ReadOrder order{groups};
      std::vector<std::size_t> taken;
      for (std::size_t i = 0; i < n; ++i) taken.push_back(order.task(i, n));
      std::sort(taken.begin(), taken.end());
      std::vector<std::size_t> all(n);
      std::iota(all.begin(), all.end(), std::size_t{0});
      EXPECT_EQ(taken, all);
    }
  }
  auto sequence = [](std::size_t groups, std::size_t n) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(ReadOrder{groups}.task(i, n));
    return out;
  };
  EXPECT_EQ(sequence(2, 8), (std::vector<std::size_t>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(sequence(3, 7), (std::vector<std::size_t>{0, 3, 5, 1, 4, 6, 2}));  // groups of 3, 2, 2
  EXPECT_EQ(sequence(0, 4), (std::vector<std::size_t>{0, 1, 2, 3}));
}

TEST(ReadOrder, LargeOutputsAreReadInGroupsWritingSpansOfTheirOwnWhereTheGridAllows) {
  // plan_read_order looks at the output's shape and layout only: no memory behind it.
  auto order_for = [](const Shape& shape, const Shape& chunks, const DataType& dtype, std::size_t threads,
                      const Selection& sel = Selection{}) {
    const ChunkPlan plan(shape, chunks, sel);
    const NDView out{reinterpret_cast<std::byte*>(std::uintptr_t{1} << 40), plan.output_shape(),
                     NDView::c_strides(plan.output_shape(), dtype.size()), dtype};
    return plan_read_order(plan, out, threads);
  };
  const DataType f32 = DataType::float_(32), u16 = DataType::uint_(16);
  // S3 at full size: 8 slabs of 64 rows of 4 MiB; each row split in two 2 MiB halves by
  // pairs of chunks along the second axis: 16 groups of 8 tasks.
  ReadOrder s3 = order_for({512, 1024, 1024}, {64, 256, 256}, f32, 16);
  EXPECT_EQ(s3.groups, 16u);
  std::vector<std::size_t> first;
  for (std::size_t i = 0; i < 4; ++i) first.push_back(s3.task(i, 128));
  EXPECT_EQ(first, (std::vector<std::size_t>{0, 8, 16, 24}));
  s3 = order_for({512, 1024, 1024}, {64, 256, 256}, f32, 2);  // the slabs are enough
  EXPECT_EQ(s3.groups, 8u);
  // S1 at full size (4 slabs whose rows of 2 MiB hold a quarter of four chunks each) and S2
  // (rows of 1 MiB): C order at 16 threads; S1's slabs are enough for 4 threads.
  EXPECT_EQ(order_for({1024, 1024, 1024}, {256, 256, 256}, u16, 16).groups, 0u);
  EXPECT_EQ(order_for({1024, 1024, 512}, {256, 256, 256}, u16, 16).groups, 0u);
  EXPECT_EQ(order_for({1024, 1024, 1024}, {256, 256, 256}, u16, 4).groups, 4u);
  // A part of S3 (rows 1 to 500): still groups of whole 2 MiB halves of rows.
  EXPECT_EQ(order_for({512, 1024, 1024}, {64, 256, 256}, f32, 16, Selection{Slice{1, 500, 1}}).groups, 16u);
  // Small outputs, one thread, a list selection.
  EXPECT_EQ(order_for({64, 256, 256}, {16, 64, 64}, u16, 16).groups, 0u);
  EXPECT_EQ(order_for({512, 1024, 1024}, {64, 256, 256}, f32, 1).groups, 0u);
  std::vector<std::int64_t> backwards(20);  // 80 MiB of rows, the output walking the array backwards
  std::iota(backwards.rbegin(), backwards.rend(), std::int64_t{100});
  const ReadOrder listed = order_for({512, 1024, 1024}, {64, 256, 256}, f32, 16, Selection{IndexArray{backwards}});
  EXPECT_EQ(listed.groups, 0u);
}

}  // namespace
}  // namespace zarrkit
