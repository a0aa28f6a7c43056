#include "zarrkit/blocks.h"

#include <gtest/gtest.h>

#include "zarrkit/progress.h"

namespace zarrkit::cli {
namespace {

TEST(Blocks, CoverWholeSourceChunksInDestinationMultiples) {
  // Source chunks of 25 rows, destination of 10: blocks of 30 rows (3 destination chunks).
  EXPECT_EQ(copy_block_shape({100, 40}, {10, 40}, {25, 40}, 8, 10000), (Shape{30, 40}));
  // Plenty of budget: grown to the whole array (inner axes first).
  EXPECT_EQ(copy_block_shape({100, 40}, {10, 40}, {25, 40}, 8, 1 << 30), (Shape{100, 40}));
}

TEST(Blocks, StayWithinBudgetButNeverBelowOneChunk) {
  // 1000x1000 float64 source chunk = 8 MB, budget 1 MB: fall back to destination chunks
  // on the outer axis first.
  Shape block = copy_block_shape({1000, 1000}, {100, 100}, {1000, 1000}, 8, 1 << 20);
  EXPECT_EQ(block[0] % 100, 0u);
  EXPECT_EQ(block[1] % 100, 0u);
  EXPECT_LE(block[0] * block[1] * 8, 1u << 20);
  // A destination chunk bigger than the budget is still one block.
  EXPECT_EQ(copy_block_shape({50, 50}, {50, 50}, {5, 5}, 8, 16), (Shape{50, 50}));
  // The array edge limits growth.
  EXPECT_EQ(copy_block_shape({7}, {3}, {3}, 1, 1 << 20), (Shape{9}));
  EXPECT_EQ(copy_block_shape({}, {}, {}, 4, 1 << 20), Shape{});
}

TEST(Blocks, TileTheArrayInCOrder) {
  std::vector<Shape> origins, extents;
  for_each_block({5, 4}, {2, 3}, [&](const Block& b) {
    origins.push_back(b.origin);
    extents.push_back(b.extent);
  });
  EXPECT_EQ(origins, (std::vector<Shape>{{0, 0}, {0, 3}, {2, 0}, {2, 3}, {4, 0}, {4, 3}}));
  EXPECT_EQ(extents, (std::vector<Shape>{{2, 3}, {2, 1}, {2, 3}, {2, 1}, {1, 3}, {1, 1}}));
}

TEST(Blocks, SelectionsAreSlices) {
  std::vector<Selection> selections;
  for_each_block({3}, {2}, [&](const Block& b) { selections.push_back(b.selection); });
  ASSERT_EQ(selections.size(), 2u);
  EXPECT_EQ(selections[1], (Selection{Slice{2, 3, 1}}));
}

TEST(Blocks, ZeroDimAndEmptyArrays) {
  int calls = 0;
  for_each_block({}, {}, [&](const Block& b) {
    EXPECT_TRUE(b.selection.empty());
    ++calls;
  });
  EXPECT_EQ(calls, 1);
  for_each_block({4, 0}, {2, 2}, [&](const Block&) { ++calls; });
  EXPECT_EQ(calls, 1);
}

TEST(Blocks, ChunksInRegion) {
  EXPECT_EQ(chunks_in_region({30, 40}, {10, 20}), 6u);
  EXPECT_EQ(chunks_in_region({5, 1}, {10, 20}), 1u);
  EXPECT_EQ(chunks_in_region({}, {}), 1u);
}

TEST(Progress, LineShowsChunksBytesAndRate) {
  Progress p("copy", 10, 4096, /*enabled=*/false);
  p.advance(5, 2048);
  const std::string line = p.line();
  EXPECT_NE(line.find("5/10 chunks"), std::string::npos) << line;
  EXPECT_NE(line.find("2.0 KiB / 4.0 KiB"), std::string::npos) << line;
  EXPECT_NE(line.find("/s"), std::string::npos) << line;
  EXPECT_NE(line.find("[############............]"), std::string::npos) << line;
}

}  // namespace
}  // namespace zarrkit::cli
