#include "engine/indexer.h"

#include <map>
#include <optional>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "engine/selection_testing.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using testing::describe_selection;
using testing::for_each_index;
using testing::random_selection;
using testing::reference_axes;

std::uint64_t linear(const std::vector<std::uint64_t>& coords, const Shape& shape) {
  return testing::linear_index(coords, shape);
}

// Runs the plan with plain loops over a chunked copy of an array whose element at linear
// index k holds k + 1, and checks it against the reference.
void check_plan(const Shape& shape, const Shape& chunks, const Selection& sel) {
  SCOPED_TRACE(::testing::Message() << "selection " << describe_selection(sel) << " shape ["
                                    << fmt::format("{}", fmt::join(shape, ",")) << "] chunks ["
                                    << fmt::format("{}", fmt::join(chunks, ",")) << "]");
  const ChunkPlan plan(shape, chunks, sel);
  const auto ref = reference_axes(sel, shape);
  const std::size_t ndim = shape.size();

  // Shapes.
  Shape want_out, want_region;
  for (const auto& ra : ref) {
    want_region.push_back(ra.indices.size());
    if (!ra.drops) want_out.push_back(ra.indices.size());
  }
  ASSERT_EQ(plan.output_shape(), want_out);
  ASSERT_EQ(plan.region_shape(), want_region);

  // Execute.
  std::uint64_t region_size = 1;
  for (auto d : want_region) region_size *= d;
  std::vector<std::uint64_t> region(region_size, 0);
  std::set<std::vector<std::uint64_t>> seen_chunks;
  for (const ChunkTask& task : plan.tasks()) {
    ASSERT_EQ(task.chunk_coords.size(), ndim);
    ASSERT_TRUE(seen_chunks.insert(task.chunk_coords).second) << "a chunk appears twice";
    Shape counts;
    for (std::size_t a = 0; a < ndim; ++a) {
      const auto& cs = task.chunk_selection[a];
      ASSERT_EQ(cs.count, task.output_selection[a].count);
      ASSERT_GT(cs.count, 0u);
      ASSERT_EQ(cs.stop, cs.start + (cs.count - 1) * cs.step + 1);
      ASSERT_LE(cs.stop, chunks[a]);
      counts.push_back(cs.count);
    }
    std::uint64_t selected_here = 0;
    for_each_index(counts, [&](const std::vector<std::uint64_t>& k) {
      std::vector<std::uint64_t> global(ndim), out(ndim);
      for (std::size_t a = 0; a < ndim; ++a) {
        global[a] = task.chunk_coords[a] * chunks[a] + task.chunk_selection[a].start +
                    k[a] * task.chunk_selection[a].step;
        out[a] = task.output_selection[a].start + k[a];
        ASSERT_LT(global[a], shape[a]);
        ASSERT_LT(out[a], want_region[a]);
      }
      auto& slot = region[linear(out, want_region)];
      ASSERT_EQ(slot, 0u) << "an output element is written twice";
      slot = linear(global, shape) + 1;
      ++selected_here;
    });
    // covers_whole_chunk <=> every in-bounds element of the chunk is selected.
    std::uint64_t in_bounds = 1;
    bool edge = false;
    for (std::size_t a = 0; a < ndim; ++a) {
      const std::uint64_t begin = task.chunk_coords[a] * chunks[a];
      const std::uint64_t len = std::min(chunks[a], shape[a] - begin);
      edge = edge || len != chunks[a];
      in_bounds *= len;
    }
    EXPECT_EQ(task.covers_whole_chunk, selected_here == in_bounds);
    EXPECT_EQ(task.is_entire_chunk, selected_here == in_bounds && !edge);
  }

  // Compare with the reference, element by element.
  Shape ref_counts;
  for (const auto& ra : ref) ref_counts.push_back(ra.indices.size());
  for_each_index(ref_counts, [&](const std::vector<std::uint64_t>& k) {
    std::vector<std::uint64_t> global(ndim);
    for (std::size_t a = 0; a < ndim; ++a) global[a] = ref[a].indices[k[a]];
    ASSERT_EQ(region[linear(k, ref_counts)], linear(global, shape) + 1);
  });
}

TEST(Indexer, MatchesNaiveReferenceOnRandomCases) {
  std::mt19937_64 rng(20240611);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iteration = 0; iteration < 20000; ++iteration) {
    const auto ndim = static_cast<std::size_t>(pick(0, 4));
    Shape shape, chunks;
    for (std::size_t a = 0; a < ndim; ++a) {
      shape.push_back(static_cast<std::uint64_t>(pick(0, 4) == 0 ? pick(0, 3) : pick(1, 13)));
      chunks.push_back(static_cast<std::uint64_t>(pick(1, 6)));
    }
    check_plan(shape, chunks, random_selection(rng, shape));
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(Indexer, ZeroDimensionalArrayHasOneTask) {
  const ChunkPlan plan({}, {}, {});
  ASSERT_EQ(plan.num_tasks(), 1u);
  const auto t = plan.task(0);
  EXPECT_TRUE(t.chunk_coords.empty());
  EXPECT_TRUE(t.covers_whole_chunk);
  EXPECT_TRUE(t.is_entire_chunk);
  EXPECT_TRUE(plan.output_shape().empty());
  EXPECT_EQ(ChunkPlan({}, {}, {Ellipsis{}}).num_tasks(), 1u);
}

TEST(Indexer, IntegerDropsAxis) {
  const auto n = normalize_selection({std::int64_t{-1}, Slice{1, 9, 3}}, {10, 10});
  EXPECT_EQ(n.output_shape, (Shape{3}));
  EXPECT_EQ(n.region_shape, (Shape{1, 3}));
  EXPECT_EQ(n.axes[0], (AxisSelection{9, 1, 1, true}));
  EXPECT_EQ(n.axes[1], (AxisSelection{1, 3, 3, false}));
}

TEST(Indexer, EllipsisExpandsInTheMiddle) {
  const auto n = normalize_selection({std::int64_t{2}, Ellipsis{}, std::int64_t{3}}, {5, 6, 7, 8});
  EXPECT_EQ(n.output_shape, (Shape{6, 7}));
  EXPECT_TRUE(n.axes[0].drops_axis);
  EXPECT_TRUE(n.axes[3].drops_axis);
  EXPECT_EQ(n.axes[3].start, 3u);
}

TEST(Indexer, SlicesClampLikeNumPy) {
  const Shape shape{10};
  auto axis = [&](Slice s) { return normalize_selection({s}, shape).axes[0]; };
  EXPECT_EQ(axis({-100, 100, 1}), (AxisSelection{0, 1, 10, false}));
  EXPECT_EQ(axis({-3, std::nullopt, 1}), (AxisSelection{7, 1, 3, false}));
  EXPECT_EQ(axis({8, 2, 1}).count, 0u);
  EXPECT_EQ(axis({12, 20, 1}).count, 0u);
  EXPECT_EQ(axis({0, 10, 4}), (AxisSelection{0, 4, 3, false}));
  EXPECT_EQ(axis({std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
                  std::numeric_limits<std::int64_t>::max()}),
            (AxisSelection{0, static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()), 1, false}));
}

TEST(Indexer, Errors) {
  const Shape shape{10, 4};
  try {
    normalize_selection({std::int64_t{12}}, shape);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_STREQ(e.what(), "index 12 is out of bounds for axis 0 with size 10");
  }
  try {
    normalize_selection({Slice::all(), std::int64_t{-5}}, shape);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_STREQ(e.what(), "index -5 is out of bounds for axis 1 with size 4");
  }
  EXPECT_THROW(normalize_selection({Slice{std::nullopt, std::nullopt, 0}}, shape), InvalidArgumentError);
  try {
    normalize_selection({Slice{std::nullopt, std::nullopt, -1}}, shape);
    FAIL();
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("negative steps are not supported yet"), std::string::npos);
  }
  EXPECT_THROW(normalize_selection({Ellipsis{}, Ellipsis{}}, shape), InvalidArgumentError);
  EXPECT_THROW(normalize_selection({std::int64_t{0}, std::int64_t{0}, std::int64_t{0}}, shape),
               InvalidArgumentError);
  EXPECT_THROW(normalize_selection({std::int64_t{0}}, Shape{}), InvalidArgumentError);
  EXPECT_THROW(ChunkPlan(shape, {5}, {}), InvalidArgumentError);
  EXPECT_THROW(ChunkPlan(shape, {5, 0}, {}), InvalidArgumentError);
}

TEST(Indexer, LargeStepSkipsChunksWithoutVisitingThem) {
  // 2^62 elements in chunks of 1: a step of 2^60 touches 4 chunks only.
  const std::uint64_t extent = std::uint64_t{1} << 62;
  const AxisSelection axis{1, std::uint64_t{1} << 60, 4, false};
  const auto parts = split_axis(axis, extent, 1);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[3].chunk_index, 3 * (std::uint64_t{1} << 60) + 1);
  EXPECT_EQ(parts[3].out, (OutputRange{3, 1}));
  EXPECT_TRUE(parts[3].covers_chunk);
}

TEST(Indexer, PlanningAHugeSelectionTakesNoMemory) {
  // 2^64 - 1 chunks of one element: planned in O(1), any task computed directly.
  const std::uint64_t extent = std::numeric_limits<std::uint64_t>::max();
  const ChunkPlan plan({extent}, {1}, {});
  EXPECT_EQ(plan.num_tasks(), extent);
  const auto t = plan.task(extent - 2);
  EXPECT_EQ(t.chunk_coords[0], extent - 2);
  EXPECT_EQ(t.output_selection[0], (OutputRange{extent - 2, 1}));
  // Two such axes overflow the task count: an error, not a wrap-around.
  EXPECT_THROW(ChunkPlan({extent, extent}, {1, 1}, {}), InvalidArgumentError);
  // ... unless another axis selects nothing.
  EXPECT_EQ(ChunkPlan({extent, extent, 5}, {1, 1, 1}, {Ellipsis{}, Slice{3, 3, 1}}).num_tasks(), 0u);
}

TEST(Indexer, EdgesOfHugeAxes) {
  const std::uint64_t extent = std::numeric_limits<std::uint64_t>::max() - 3;
  const ChunkPlan plan({extent}, {1000}, {Slice{-5, std::nullopt, 2}});
  ASSERT_EQ(plan.num_tasks(), 1u);
  const auto t = plan.task(0);
  EXPECT_EQ(t.chunk_coords[0], (extent - 5) / 1000);
  EXPECT_EQ(t.chunk_selection[0].start, (extent - 5) % 1000);
  EXPECT_EQ(t.chunk_selection[0].count, 3u);
  EXPECT_FALSE(t.covers_whole_chunk);
}

TEST(Indexer, EdgeChunkCoveredUpToTheArrayEdge) {
  const ChunkPlan plan({10}, {4}, {Slice{8, std::nullopt, 1}});
  ASSERT_EQ(plan.num_tasks(), 1u);
  EXPECT_TRUE(plan.task(0).covers_whole_chunk);
  EXPECT_FALSE(plan.task(0).is_entire_chunk);
}

TEST(Indexer, ExpandAndBroadcastViews) {
  const auto sel = normalize_selection({std::int64_t{1}, Slice::all(), Slice{0, 2, 1}}, {3, 4, 5});
  NDView v{nullptr, {4, 2}, {80, 8}, DataType::float_(64)};
  const NDView r = expand_to_region(v, sel);
  EXPECT_EQ(r.shape, (Shape{1, 4, 2}));
  EXPECT_EQ(r.byte_strides, (std::vector<std::int64_t>{0, 80, 8}));
  EXPECT_THROW(expand_to_region(NDView{nullptr, {4, 3}, {24, 8}, DataType::float_(64)}, sel),
               InvalidArgumentError);

  const NDView scalar = broadcast_to_region(NDView{nullptr, {}, {}, DataType::float_(64)}, sel);
  EXPECT_EQ(scalar.shape, (Shape{1, 4, 2}));
  EXPECT_EQ(scalar.byte_strides, (std::vector<std::int64_t>{0, 0, 0}));
  const NDView row = broadcast_to_region(NDView{nullptr, {1, 2}, {16, 8}, DataType::float_(64)}, sel);
  EXPECT_EQ(row.byte_strides, (std::vector<std::int64_t>{0, 0, 8}));
  const NDView extra = broadcast_to_region(NDView{nullptr, {1, 4, 2}, {64, 16, 8}, DataType::float_(64)}, sel);
  EXPECT_EQ(extra.byte_strides, (std::vector<std::int64_t>{0, 16, 8}));
  EXPECT_THROW(broadcast_to_region(NDView{nullptr, {3}, {8}, DataType::float_(64)}, sel),
               InvalidArgumentError);
  EXPECT_THROW(broadcast_to_region(NDView{nullptr, {2, 4, 2}, {64, 16, 8}, DataType::float_(64)}, sel),
               InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
