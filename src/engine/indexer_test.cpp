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

AxisSelection strided(std::uint64_t start, std::int64_t step, std::uint64_t count, bool drops = false) {
  AxisSelection a;
  a.start = start;
  a.step = step;
  a.count = count;
  a.drops_axis = drops;
  return a;
}

std::uint64_t linear(const std::vector<std::uint64_t>& coords, const Shape& shape) {
  return testing::linear_index(coords, shape);
}

// (in-chunk index, region position) pairs of one axis part, in the order of its runs.
std::vector<std::pair<std::uint64_t, std::uint64_t>> expand_runs(const AxisChunkPart& part) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const AxisRun& r : part.runs()) {
    EXPECT_GT(r.count, 0u);
    EXPECT_GT(r.chunk_step, 0u);
    EXPECT_NE(r.out_step, 0);
    for (std::uint64_t k = 0; k < r.count; ++k) {
      out.emplace_back(r.chunk_start + k * r.chunk_step,
                       static_cast<std::uint64_t>(static_cast<std::int64_t>(r.out_start) +
                                                  static_cast<std::int64_t>(k) * r.out_step));
    }
  }
  return out;
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
    ASSERT_EQ(task.axes.size(), ndim);
    ASSERT_TRUE(seen_chunks.insert(task.chunk_coords).second) << "a chunk appears twice";
    std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> pairs(ndim);
    Shape counts;
    std::uint64_t distinct_selected = 1;
    bool in_order = true;
    for (std::size_t a = 0; a < ndim; ++a) {
      ASSERT_EQ(task.axes[a].chunk_index, task.chunk_coords[a]);
      pairs[a] = expand_runs(task.axes[a]);
      ASSERT_FALSE(pairs[a].empty());
      ASSERT_EQ(pairs[a].size(), task.axes[a].num_selected());
      std::set<std::uint64_t> distinct;
      for (std::size_t k = 0; k < pairs[a].size(); ++k) {
        const auto [in_chunk, out] = pairs[a][k];
        ASSERT_LT(in_chunk, chunks[a]);
        ASSERT_LT(out, want_region[a]);
        distinct.insert(in_chunk);
        in_order = in_order && in_chunk == k && out == pairs[a][0].second + k;
      }
      distinct_selected *= distinct.size();
      counts.push_back(pairs[a].size());
    }
    for_each_index(counts, [&](const std::vector<std::uint64_t>& k) {
      std::vector<std::uint64_t> global(ndim), out(ndim);
      for (std::size_t a = 0; a < ndim; ++a) {
        global[a] = task.chunk_coords[a] * chunks[a] + pairs[a][k[a]].first;
        out[a] = pairs[a][k[a]].second;
        ASSERT_LT(global[a], shape[a]);
      }
      auto& slot = region[linear(out, want_region)];
      ASSERT_EQ(slot, 0u) << "an output element is written twice";
      slot = linear(global, shape) + 1;
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
    EXPECT_EQ(task.covers_whole_chunk, distinct_selected == in_bounds);
    EXPECT_EQ(task.is_entire_chunk, distinct_selected == in_bounds && !edge && in_order);
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
  const ChunkPlan plan(Shape{}, Shape{}, {});
  ASSERT_EQ(plan.num_tasks(), 1u);
  const auto t = plan.task(0);
  EXPECT_TRUE(t.chunk_coords.empty());
  EXPECT_TRUE(t.covers_whole_chunk);
  EXPECT_TRUE(t.is_entire_chunk);
  EXPECT_TRUE(plan.output_shape().empty());
  EXPECT_EQ(ChunkPlan(Shape{}, Shape{}, {Ellipsis{}}).num_tasks(), 1u);
}

TEST(Indexer, IntegerDropsAxis) {
  const auto n = normalize_selection({std::int64_t{-1}, Slice{1, 9, 3}}, {10, 10});
  EXPECT_EQ(n.output_shape, (Shape{3}));
  EXPECT_EQ(n.region_shape, (Shape{1, 3}));
  EXPECT_EQ(n.axes[0], (strided(9, 1, 1, true)));
  EXPECT_EQ(n.axes[1], (strided(1, 3, 3, false)));
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
  EXPECT_EQ(axis({-100, 100, 1}), (strided(0, 1, 10, false)));
  EXPECT_EQ(axis({-3, std::nullopt, 1}), (strided(7, 1, 3, false)));
  EXPECT_EQ(axis({8, 2, 1}).count, 0u);
  EXPECT_EQ(axis({12, 20, 1}).count, 0u);
  EXPECT_EQ(axis({0, 10, 4}), (strided(0, 4, 3, false)));
  EXPECT_EQ(axis({std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
                  std::numeric_limits<std::int64_t>::max()}),
            (strided(0, std::numeric_limits<std::int64_t>::max(), 1, false)));
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
    normalize_selection({IndexArray{{0, 9, 10}}}, shape);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_STREQ(e.what(), "index 10 is out of bounds for axis 0 with size 10");
  }
  try {
    normalize_selection({Slice::all(), IndexArray{{-5}}}, shape);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_STREQ(e.what(), "index -5 is out of bounds for axis 1 with size 4");
  }
  try {
    normalize_selection({Slice::all(), BoolArray{{1, 0, 1}}}, shape);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_STREQ(e.what(), "boolean index did not match the array along axis 1: the axis has size 4, the "
                           "boolean list has 3 entries");
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
  const AxisSelection axis = strided(1, std::int64_t{1} << 60, 4);
  const auto parts = split_axis(axis, extent, 1);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[3].chunk_index, 3 * (std::uint64_t{1} << 60) + 1);
  ASSERT_EQ(parts[3].runs.size(), 1u);
  EXPECT_EQ(parts[3].runs[0].out_start, 3u);
  EXPECT_EQ(parts[3].runs[0].count, 1u);
  EXPECT_TRUE(parts[3].covers_chunk);
}

TEST(Indexer, LoneIndexRunsHaveUnitSteps) {
  // A step of 2^63-1 (or its negative) leaves one index per chunk; the run's steps are 1 so
  // that byte strides computed from them (step * chunk stride) cannot overflow.
  for (const std::int64_t step : {std::numeric_limits<std::int64_t>::max(), -std::numeric_limits<std::int64_t>::max()}) {
    const auto axis = normalize_selection({Slice{std::nullopt, std::nullopt, step}}, {10}).axes[0];
    const auto parts = split_axis(axis, 10, 4);
    ASSERT_EQ(parts.size(), 1u);
    ASSERT_EQ(parts[0].runs.size(), 1u);
    EXPECT_EQ(parts[0].runs[0].count, 1u);
    EXPECT_EQ(parts[0].runs[0].chunk_step, 1u);
    EXPECT_EQ(parts[0].runs[0].out_step, 1);
  }
}

TEST(Indexer, PlanningAHugeSelectionTakesNoMemory) {
  // 2^64 - 1 chunks of one element: planned in O(1), any task computed directly.
  const std::uint64_t extent = std::numeric_limits<std::uint64_t>::max();
  const ChunkPlan plan({extent}, {1}, {});
  EXPECT_EQ(plan.num_tasks(), extent);
  const auto t = plan.task(extent - 2);
  EXPECT_EQ(t.chunk_coords[0], extent - 2);
  EXPECT_EQ(t.axes[0].runs()[0], (AxisRun{0, 1, 1, extent - 2, 1}));
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
  EXPECT_EQ(t.axes[0].runs()[0].chunk_start, (extent - 5) % 1000);
  EXPECT_EQ(t.axes[0].runs()[0].count, 3u);
  EXPECT_FALSE(t.covers_whole_chunk);
}

TEST(Indexer, NegativeStepsFollowPythonSlices) {
  const Shape shape{10};
  auto axis = [&](Slice s) { return normalize_selection({s}, shape).axes[0]; };
  EXPECT_EQ(axis({std::nullopt, std::nullopt, -1}), (strided(9, -1, 10, false)));
  EXPECT_EQ(axis({100, -100, -3}), (strided(9, -3, 4, false)));
  EXPECT_EQ(axis({-1, -2, -1}), (strided(9, -1, 1, false)));
  EXPECT_EQ(axis({2, 5, -1}).count, 0u);
  EXPECT_EQ(axis({-11, std::nullopt, -1}).count, 0u);  // starts before the first index
  EXPECT_EQ(axis({3, -11, -1}), (strided(3, -1, 4, false)));
  EXPECT_EQ(axis({std::nullopt, std::nullopt, std::numeric_limits<std::int64_t>::min()}),
            (strided(9, std::numeric_limits<std::int64_t>::min(), 1, false)));
  EXPECT_EQ(normalize_selection({Slice{std::nullopt, std::nullopt, -1}}, Shape{0}).axes[0].count, 0u);
}

TEST(Indexer, ReversedSliceIsOneRunPerChunkWalkingTheOutputBackwards) {
  // ::-1 over 10 elements in chunks of 4: chunk 0 holds outputs 9..6, chunk 2 outputs 1..0.
  const auto parts = split_axis(normalize_selection({Slice{std::nullopt, std::nullopt, -1}}, {10}).axes[0], 10, 4);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].runs, (std::vector<AxisRun>{{0, 1, 4, 9, -1}}));
  EXPECT_EQ(parts[2].runs, (std::vector<AxisRun>{{0, 1, 2, 1, -1}}));
  EXPECT_TRUE(parts[2].covers_chunk);
  EXPECT_FALSE(parts[2].full_extent);
}

TEST(Indexer, ListsGroupByChunkIntoRuns) {
  // [5, 1, 2, 3, 9, 1, 0] in chunks of 4.
  const auto axis = normalize_selection({IndexArray{{5, 1, 2, 3, 9, -9, 0}}}, {10}).axes[0];
  const auto parts = split_axis(axis, 10, 4);
  ASSERT_EQ(parts.size(), 3u);
  // Chunk 0: index 0 -> out 6; index 1 -> out 1 and 5 (a repeat: the later output is
  // applied later); 2 -> 2; 3 -> 3. Runs pair indices and outputs that both progress evenly.
  EXPECT_EQ(parts[0].chunk_index, 0u);
  EXPECT_EQ(parts[0].runs, (std::vector<AxisRun>{{0, 1, 2, 6, -5}, {1, 1, 2, 5, -3}, {3, 1, 1, 3, 1}}));
  EXPECT_TRUE(parts[0].covers_chunk);
  EXPECT_EQ(parts[1].runs, (std::vector<AxisRun>{{1, 1, 1, 0, 1}}));
  EXPECT_FALSE(parts[1].covers_chunk);
  EXPECT_EQ(parts[2].runs, (std::vector<AxisRun>{{1, 1, 1, 4, 1}}));
  // A sorted range is one run; a mask too.
  EXPECT_EQ(split_axis(normalize_selection({IndexArray{{4, 5, 6, 7}}}, {10}).axes[0], 10, 4)[0].runs,
            (std::vector<AxisRun>{{0, 1, 4, 0, 1}}));
  const auto mask = split_axis(normalize_selection({BoolArray{{0, 1, 0, 1, 0, 1}}}, {6}).axes[0], 6, 6);
  EXPECT_EQ(mask[0].runs, (std::vector<AxisRun>{{1, 2, 3, 0, 1}}));
  // An empty list selects nothing.
  EXPECT_EQ(ChunkPlan({10}, {4}, {IndexArray{}}).num_tasks(), 0u);
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
