#include "stores/byte_range_coalescer.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace zarrkit {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

ByteRange range(std::uint64_t start, std::uint64_t end) { return ByteRange::range(start, end); }

std::vector<std::pair<std::uint64_t, std::uint64_t>> spans(const CoalescedRanges& c) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const ByteRange& r : c.requests) out.emplace_back(r.start, r.end);
  return out;
}

std::vector<std::size_t> members(const CoalescedRanges& c, std::size_t request) {
  const auto m = c.members(request);
  return {m.begin(), m.end()};
}

// Every kRange lies inside its read at its own place; the members of each read are exactly
// the ranges placed in it.
void check_placement(std::span<const ByteRange> ranges, const CoalescedRanges& c) {
  ASSERT_EQ(c.parts.size(), ranges.size());
  ASSERT_EQ(c.member_begin.size(), c.requests.size() + 1);
  std::vector<int> seen(ranges.size(), 0);
  for (std::size_t r = 0; r < c.requests.size(); ++r) {
    for (const std::size_t i : c.members(r)) {
      ++seen.at(i);
      EXPECT_EQ(c.parts[i].request, r) << i;
    }
  }
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_EQ(seen[i], 1) << i;
    const ByteRange& read = c.requests.at(c.parts[i].request);
    if (ranges[i].kind != ByteRange::Kind::kRange) {
      EXPECT_EQ(read.kind, ranges[i].kind);
      EXPECT_EQ(c.parts[i].offset, 0u);
      EXPECT_EQ(c.parts[i].length, kMax);
      continue;
    }
    const std::uint64_t start = ranges[i].start;
    const std::uint64_t end = std::max(ranges[i].end, start);
    EXPECT_EQ(read.start + c.parts[i].offset, start) << i;
    EXPECT_EQ(c.parts[i].length, end - start) << i;
    EXPECT_LE(c.parts[i].offset + c.parts[i].length, read.end - read.start) << i;
  }
}

TEST(ByteRangeCoalescer, MergesNearbyRangesByStart) {
  const std::vector<ByteRange> ranges{range(100, 200), range(0, 50), range(60, 90), range(1000, 1010),
                                      range(150, 160)};
  const CoalescedRanges c = coalesce_byte_ranges(ranges, {.max_gap = 10, .max_span = 1000});
  EXPECT_EQ(spans(c), (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 200}, {1000, 1010}}));
  EXPECT_EQ(members(c, 0), (std::vector<std::size_t>{1, 2, 0, 4}));
  EXPECT_EQ(members(c, 1), (std::vector<std::size_t>{3}));
  EXPECT_EQ(c.parts[4].offset, 150u);
  EXPECT_EQ(c.parts[4].length, 10u);
  check_placement(ranges, c);
  // Without leave to read gaps, only touching and overlapping ranges merge.
  const CoalescedRanges tight = coalesce_byte_ranges(ranges, {.max_gap = 0});
  EXPECT_EQ(spans(tight), (std::vector<std::pair<std::uint64_t, std::uint64_t>>{
                              {0, 50}, {60, 90}, {100, 200}, {1000, 1010}}));
  check_placement(ranges, tight);
}

TEST(ByteRangeCoalescer, LimitsHoldExactlyAtTheBoundary) {
  const std::vector<ByteRange> ranges{range(0, 10), range(20, 30)};  // a gap of 10
  EXPECT_EQ(coalesce_byte_ranges(ranges, {.max_gap = 10}).requests.size(), 1u);
  EXPECT_EQ(coalesce_byte_ranges(ranges, {.max_gap = 9}).requests.size(), 2u);
  EXPECT_EQ(coalesce_byte_ranges(ranges, {.max_gap = 10, .max_span = 30}).requests.size(), 1u);
  EXPECT_EQ(coalesce_byte_ranges(ranges, {.max_gap = 10, .max_span = 29}).requests.size(), 2u);
  // A range longer than the span is a read of its own, and the next one starts afresh.
  const std::vector<ByteRange> long_first{range(0, 100), range(100, 101), range(101, 102)};
  const CoalescedRanges c = coalesce_byte_ranges(long_first, {.max_gap = 0, .max_span = 50});
  EXPECT_EQ(spans(c), (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 100}, {100, 102}}));
  check_placement(long_first, c);
}

TEST(ByteRangeCoalescer, OverlapsAndRepeatsShareTheirBytes) {
  const std::vector<ByteRange> ranges{range(10, 30), range(0, 20), range(10, 30), range(12, 14)};
  const CoalescedRanges c = coalesce_byte_ranges(ranges, {});
  EXPECT_EQ(spans(c), (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 30}}));
  EXPECT_EQ(c.parts[0].offset, 10u);
  EXPECT_EQ(c.parts[2].offset, 10u);  // the repeat lies where the first one does
  EXPECT_EQ(c.parts[3].offset, 12u);
  // Ties keep the order given.
  EXPECT_EQ(members(c, 0), (std::vector<std::size_t>{1, 0, 2, 3}));
  check_placement(ranges, c);

  // Kept apart: each byte of a read belongs to one range.
  const CoalescedRanges apart = coalesce_byte_ranges(ranges, {.max_gap = 100, .merge_overlaps = false});
  EXPECT_EQ(spans(apart), (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 20}, {10, 30}, {10, 30}, {12, 14}}));
  check_placement(ranges, apart);
}

TEST(ByteRangeCoalescer, KeptOrderMergesOnlyForwardNeighbours) {
  // Going backwards starts a new read; so does an overlap when overlaps are kept apart.
  const std::vector<ByteRange> ranges{range(100, 110), range(115, 120), range(0, 10), range(5, 15), range(20, 25)};
  const CoalescedRanges c = coalesce_byte_ranges(ranges, {.max_gap = 10, .keep_order = true, .merge_overlaps = false});
  EXPECT_EQ(spans(c), (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{100, 120}, {0, 10}, {5, 25}}));
  EXPECT_EQ(members(c, 0), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(members(c, 2), (std::vector<std::size_t>{3, 4}));
  check_placement(ranges, c);
  // Sharing overlaps, [5, 15) joins [0, 10), still never a range that starts earlier.
  const CoalescedRanges shared = coalesce_byte_ranges(ranges, {.max_gap = 10, .keep_order = true});
  EXPECT_EQ(spans(shared), (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{100, 120}, {0, 25}}));
  check_placement(ranges, shared);
  const std::vector<ByteRange> backwards{range(50, 60), range(40, 50)};
  EXPECT_EQ(coalesce_byte_ranges(backwards, {.max_gap = 100, .keep_order = true}).requests.size(), 2u);
}

TEST(ByteRangeCoalescer, EmptyRangesAreEmptyPartsAtTheirStart) {
  const std::vector<ByteRange> ranges{range(0, 2), range(3, 3), range(4, 6), range(9, 5)};
  const CoalescedRanges c = coalesce_byte_ranges(ranges, {.max_gap = 4});
  EXPECT_EQ(spans(c), (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 9}}));
  EXPECT_EQ(c.parts[1].offset, 3u);
  EXPECT_EQ(c.parts[1].length, 0u);
  EXPECT_EQ(c.parts[3].offset, 9u);  // inverted: empty at its start
  EXPECT_EQ(c.parts[3].length, 0u);
  check_placement(ranges, c);
  // Alone, an empty range is an empty read (it selects nothing).
  const std::vector<ByteRange> alone{range(7, 7)};
  EXPECT_EQ(spans(coalesce_byte_ranges(alone, {})), (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{7, 7}}));
  // No ranges, no reads.
  const CoalescedRanges none = coalesce_byte_ranges({}, {});
  EXPECT_TRUE(none.requests.empty());
  EXPECT_EQ(none.member_begin, std::vector<std::size_t>{0});
}

TEST(ByteRangeCoalescer, SuffixAndOpenEndedRangesPassThroughFirst) {
  const std::vector<ByteRange> ranges{range(10, 20), ByteRange::last(4), range(0, 5), ByteRange::from_offset(100)};
  const CoalescedRanges c = coalesce_byte_ranges(ranges, {.max_gap = 10});
  ASSERT_EQ(c.requests.size(), 3u);
  EXPECT_EQ(c.requests[0].kind, ByteRange::Kind::kSuffix);
  EXPECT_EQ(c.requests[0].suffix, 4u);
  EXPECT_EQ(c.requests[1].kind, ByteRange::Kind::kFromOffset);
  EXPECT_EQ(c.requests[1].start, 100u);
  EXPECT_EQ(c.requests[2].start, 0u);
  EXPECT_EQ(c.requests[2].end, 20u);
  EXPECT_EQ(members(c, 0), std::vector<std::size_t>{1});
  EXPECT_EQ(members(c, 2), (std::vector<std::size_t>{2, 0}));
  check_placement(ranges, c);
}

TEST(ByteRangeCoalescer, OffsetsNearTheTopDoNotOverflow) {
  const std::vector<ByteRange> ranges{range(kMax - 10, kMax), range(kMax - 30, kMax - 20), range(0, 1),
                                      range(kMax, kMax)};
  const CoalescedRanges c = coalesce_byte_ranges(ranges, {.max_gap = kMax, .max_span = kMax});
  EXPECT_EQ(spans(c), (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, kMax}}));
  check_placement(ranges, c);
  const CoalescedRanges near = coalesce_byte_ranges(ranges, {.max_gap = 10, .max_span = 30});
  EXPECT_EQ(spans(near), (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 1}, {kMax - 30, kMax}}));
  check_placement(ranges, near);
  const CoalescedRanges gapless = coalesce_byte_ranges(ranges, {.max_gap = 9, .max_span = kMax});
  EXPECT_EQ(gapless.requests.size(), 3u);
  check_placement(ranges, gapless);
}

TEST(ByteRangeCoalescer, RandomRangesArePlacedExactlyWithinTheLimits) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 500; ++round) {
    const CoalesceLimits limits{.max_gap = rng() % 50,
                                .max_span = 1 + rng() % 400,
                                .keep_order = rng() % 2 == 0,
                                .merge_overlaps = rng() % 2 == 0};
    std::vector<ByteRange> ranges;
    const int n = static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) {
      const std::uint64_t start = rng() % 1000;
      ranges.push_back(range(start, start + rng() % 120));
    }
    const CoalescedRanges c = coalesce_byte_ranges(ranges, limits);
    check_placement(ranges, c);
    for (std::size_t r = 0; r < c.requests.size(); ++r) {
      const auto m = c.members(r);
      if (m.size() > 1) {
        EXPECT_LE(c.requests[r].end - c.requests[r].start, limits.max_span);
      }
      for (std::size_t k = 1; k < m.size(); ++k) {
        const CoalescedRanges::Part& before = c.parts[m[k - 1]];
        const CoalescedRanges::Part& part = c.parts[m[k]];
        if (limits.keep_order) {
          EXPECT_LT(m[k - 1], m[k]) << "kept order broken";
        }
        if (!limits.merge_overlaps) {
          EXPECT_GE(part.offset, before.offset + before.length) << "overlap merged";
        }
      }
    }
    if (HasFailure()) {
      ADD_FAILURE() << "round " << round;
      return;
    }
  }
}

}  // namespace
}  // namespace zarrkit
