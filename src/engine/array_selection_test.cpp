// Coordinate, mask and block selections, resize and append, on real arrays.
#include <cstring>
#include <numeric>

#include <gtest/gtest.h>

#include "core/partial_chunk_codec.h"
#include "engine/array_testing.h"
#include "engine/point_indexer.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

// An int32 array of `shape` in `chunks` whose element at linear index k holds k.
Array iota_array(const std::shared_ptr<Store>& store, const Shape& shape, const Shape& chunks, int zarr_format = 3,
                 std::int32_t fill = 0, const std::string& path = "a") {
  ArraySpec spec;
  spec.zarr_format = zarr_format;
  spec.shape = shape;
  spec.chunks = chunks;
  spec.dtype = DataType::int_(32);
  spec.fill_value = fill;
  Array a = Array::create(store, path, make_array_metadata(spec, CodecRegistry::builtin()), true);
  std::vector<std::int32_t> values(checked_num_elements(shape));
  std::iota(values.begin(), values.end(), 0);
  a.write({}, view_of(values, shape, a.dtype()));
  return a;
}

template <typename F>
void expect_error(F&& f, ErrorCode code, std::string_view fragment) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing \"" << fragment << "\"";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// ---- Coordinate selections -------------------------------------------------------------

TEST(Coordinates, ReadPointsInTheirOrderWithNegativeIndices) {
  auto store = MemoryStore::create();
  const Array a = iota_array(store, {6, 7}, {4, 3});
  const NDBuffer got = a.read_coordinates({{5, 0, -1, 2, 2}, {6, 0, 0, -7, 3}});
  EXPECT_EQ(got.shape(), (Shape{5}));
  EXPECT_EQ(values_of<std::int32_t>(got), (std::vector<std::int32_t>{41, 0, 35, 14, 17}));
}

// Points of a sharded array read the shard's index and only the inner chunks that hold
// them: an inner chunk with no point in it is never decoded (a corrupt one does no harm),
// and one with a point is (its damage is the error, naming the inner chunk).
TEST(Coordinates, ShardedReadsDecodeOnlyTheInnerChunksThatHoldPoints) {
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {20, 20};
  spec.chunks = {10, 10};
  spec.dtype = DataType::int_(32);
  spec.codecs = json::array({{{"name", "sharding_indexed"},
                              {"configuration",
                               {{"chunk_shape", {5, 5}},
                                {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                                        {{"name", "zstd"}, {"configuration", {{"level", 1}}}}})},
                                {"index_codecs",
                                 json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                              {{"name", "crc32c"}}})}}}}});
  Array a = Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()));
  std::vector<std::int32_t> values(400);
  std::iota(values.begin(), values.end(), 0);
  a.write({}, view_of(values, {20, 20}, a.dtype()));
  // Points in inner chunks (0,0) and (1,1) of shard (0,0), one in shard (1,1), one past
  // the written shards' inner chunk (1,0) of shard (0,1).
  EXPECT_EQ(values_of<std::int32_t>(a.read_coordinates({{1, 7, 12, 6}, {2, 8, 19, 13}})),
            (std::vector<std::int32_t>{22, 148, 259, 133}));
  // Damage inner chunk (0,1) of shard (0,0), which holds none of the points above.
  const PartialChunkCodec* partial = a.metadata().prepared_chain().partial();
  ASSERT_NE(partial, nullptr);
  std::vector<AxisRun> whole{AxisRun{0, 1, 10, 0, 1}, AxisRun{0, 1, 10, 0, 1}};
  const BlockRuns runs{std::span<const AxisRun>(&whole[0], 1), std::span<const AxisRun>(&whole[1], 1)};
  const LocatedChunks located = partial->locate(ChunkSource{store.get(), "a/c/0/0", 0, std::nullopt, std::nullopt},
                                                runs, Shape{10, 10});
  std::size_t damaged = located.selection.chunks.size();
  for (std::size_t i = 0; i < located.selection.chunks.size(); ++i) {
    if (located.selection.chunks[i].ordinal == 1) damaged = i;
  }
  ASSERT_LT(damaged, located.selection.chunks.size());
  Buffer shard = Buffer::copy_of(store->get("a/c/0/0")->view());
  for (std::uint64_t k = 0; k < located.bytes[damaged].nbytes; ++k) shard.data()[located.bytes[damaged].offset + k] = std::byte{0x5a};
  store->set("a/c/0/0", shard.view());
  EXPECT_EQ(values_of<std::int32_t>(a.read_coordinates({{1, 7, 12, 6}, {2, 8, 19, 13}})),
            (std::vector<std::int32_t>{22, 148, 259, 133}));
  expect_error([&] { (void)a.read_coordinates({{1}, {7}}); }, ErrorCode::kDataLoss, "inner chunk (0,1)");
}

TEST(Coordinates, ArraysBroadcastLikeNumPy) {
  auto store = MemoryStore::create();
  const Array a = iota_array(store, {6, 7}, {4, 3});
  // rows [[1], [4]] against columns [0, 2, 6]: a 2x3 result (NumPy a[rows, cols]).
  const NDBuffer grid = a.read_coordinates({CoordinateArray({2, 1}, {1, 4}), CoordinateArray({0, 2, 6})});
  EXPECT_EQ(grid.shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of<std::int32_t>(grid), (std::vector<std::int32_t>{7, 9, 13, 28, 30, 34}));
  // A scalar repeats along the other array.
  const NDBuffer row = a.read_coordinates({CoordinateArray::scalar(3), CoordinateArray({6, 5})});
  EXPECT_EQ(values_of<std::int32_t>(row), (std::vector<std::int32_t>{27, 26}));
  // All scalars: a 0-d result.
  const NDBuffer one = a.read_coordinates({CoordinateArray::scalar(-1), CoordinateArray::scalar(-1)});
  EXPECT_EQ(one.shape(), Shape{});
  EXPECT_EQ(values_of<std::int32_t>(one), (std::vector<std::int32_t>{41}));
  // Empty.
  EXPECT_EQ(a.read_coordinates({CoordinateArray(std::vector<std::int64_t>{}), CoordinateArray::scalar(0)}).shape(),
            (Shape{0}));
}

TEST(Coordinates, WritesLetTheLastRepeatWinAndEraseFillChunks) {
  auto store = MemoryStore::create();
  Array a = iota_array(store, {4, 4}, {2, 2}, 3, -1);
  std::vector<std::int32_t> values{100, 101, 102, 103};
  a.write_coordinates({{0, 3, 0, 1}, {1, 3, 1, 0}}, view_of(values, {4}, a.dtype()));
  const auto all = values_of<std::int32_t>(a.read());
  EXPECT_EQ(all[1], 102);  // (0, 1) written twice: the later value stays
  EXPECT_EQ(all[15], 101);
  EXPECT_EQ(all[4], 103);
  EXPECT_EQ(all[0], 0);
  // Broadcast a scalar; a chunk left holding only the fill value is erased.
  std::vector<std::int32_t> fill{-1};
  a.write_coordinates({{2, 2, 3, 3}, {2, 3, 2, 3}}, view_of(fill, {}, a.dtype()));
  EXPECT_FALSE(store->exists("a/c/1/1"));
  EXPECT_EQ(values_of<std::int32_t>(a.read({Slice{2, 4, 1}, Slice{2, 4, 1}})), std::vector<std::int32_t>(4, -1));
  // Points in a missing chunk read as the fill value.
  EXPECT_EQ(values_of<std::int32_t>(a.read_coordinates({{3}, {3}})), (std::vector<std::int32_t>{-1}));
}

TEST(Coordinates, ErrorsAreTyped) {
  auto store = MemoryStore::create();
  Array a = iota_array(store, {6, 7}, {4, 3});
  expect_error([&] { a.read_coordinates({{1, 2}}); }, ErrorCode::kInvalidArgument,
               "needs one index array per axis: the array has 2 axes, 1 arrays were given");
  expect_error([&] { a.read_coordinates({{1, 2}, {1, 2, 3}}); }, ErrorCode::kInvalidArgument,
               "could not be broadcast together with shapes [2], [3]");
  expect_error([&] { a.read_coordinates({{1, 6}, {0, 0}}); }, ErrorCode::kInvalidArgument,
               "index 6 is out of bounds for axis 0 with size 6");
  expect_error([&] { a.read_coordinates({{0}, {-8}}); }, ErrorCode::kInvalidArgument,
               "index -8 is out of bounds for axis 1 with size 7");
  expect_error([&] { a.read_coordinates({CoordinateArray({3}, {1, 2}), {0}}); }, ErrorCode::kInvalidArgument,
               "has shape [3] but 2 values");
  std::vector<std::int32_t> three{1, 2, 3};
  expect_error([&] { a.write_coordinates({{1, 2}, {1, 2}}, view_of(three, {3}, a.dtype())); },
               ErrorCode::kInvalidArgument, "could not broadcast input of shape [3]");
  // Broadcasting to more points than memory can hold is refused before allocating: six
  // arrays of 2^10 indices, each along its own axis, broadcast to 2^60 points.
  const Array six = iota_array(store, {2, 2, 2, 2, 2, 2}, {1, 1, 1, 1, 1, 1}, 3, 0, "six");
  CoordinateSelection outer;
  for (std::size_t axis = 0; axis < 6; ++axis) {
    Shape shape(6, 1);
    shape[axis] = 1u << 10;
    outer.emplace_back(shape, std::vector<std::int64_t>(1u << 10, 1));
  }
  expect_error([&] { six.read_coordinates(outer); }, ErrorCode::kResourceExhausted,
               "a selection of 1152921504606846976 points needs more memory than can be allocated");
}

// ---- Masks -----------------------------------------------------------------------------

TEST(Mask, ReadsAndWritesTheTrueElementsInCOrder) {
  auto store = MemoryStore::create();
  Array a = iota_array(store, {3, 5}, {2, 2});
  MaskSelection mask{{3, 5}, std::vector<std::uint8_t>(15, 0)};
  for (int k : {14, 0, 7, 3, 12}) mask.mask[static_cast<std::size_t>(k)] = 1;
  EXPECT_EQ(values_of<std::int32_t>(a.read_mask(mask)), (std::vector<std::int32_t>{0, 3, 7, 12, 14}));
  std::vector<std::int32_t> values{-1, -2, -3, -4, -5};
  a.write_mask(mask, view_of(values, {5}, a.dtype()));
  const auto all = values_of<std::int32_t>(a.read());
  EXPECT_EQ(all[0], -1);
  EXPECT_EQ(all[3], -2);
  EXPECT_EQ(all[14], -5);
  EXPECT_EQ(all[1], 1);
  expect_error([&] { a.read_mask(MaskSelection{{5, 3}, std::vector<std::uint8_t>(15)}); }, ErrorCode::kInvalidArgument,
               "the mask has shape [5, 3], the array has shape [3, 5]");
  expect_error([&] { a.read_mask(MaskSelection{{3, 5}, std::vector<std::uint8_t>(14)}); },
               ErrorCode::kInvalidArgument, "the mask has shape [3, 5] but 14 values");
}

// ---- Point plans -----------------------------------------------------------------------

TEST(PointPlan, GroupsPointsByChunkKeepingTheirOrder) {
  NormalizedPoints points = normalize_coordinates({{9, 0, 8, 1, 9}, {0, 0, 1, 1, 0}}, {10, 2});
  const PointPlan plan(std::move(points), {10, 2}, {4, 2});
  ASSERT_EQ(plan.num_tasks(), 2u);
  PointTask t;
  plan.task(0, t);
  EXPECT_EQ(t.chunk_coords, (std::vector<std::uint64_t>{0, 0}));
  EXPECT_EQ(std::vector<std::uint64_t>(t.points.begin(), t.points.end()), (std::vector<std::uint64_t>{1, 3}));
  plan.task(1, t);
  EXPECT_EQ(t.chunk_coords, (std::vector<std::uint64_t>{2, 0}));
  EXPECT_EQ(std::vector<std::uint64_t>(t.points.begin(), t.points.end()), (std::vector<std::uint64_t>{0, 2, 4}));
  EXPECT_EQ(plan.offset_in_chunk(2), 1u);      // (8, 1) is row 0, column 1 of chunk (2, 0)
  EXPECT_EQ(plan.offset_in_chunk(3), 2u + 1);  // (1, 1) is row 1, column 1 of chunk (0, 0)
}

TEST(PointPlan, GridsTooLargeToNumberStillGroup) {
  // 2^40 x 2^40 chunks of one element: the chunk count overflows 64 bits.
  const std::uint64_t n = std::uint64_t{1} << 40;
  NormalizedPoints points = normalize_coordinates({{5, -1, 5, 0}, {-1, 3, -1, 3}}, {n, n});
  const PointPlan plan(std::move(points), {n, n}, {1, 1});
  ASSERT_EQ(plan.num_tasks(), 3u);
  PointTask t;
  plan.task(0, t);
  EXPECT_EQ(t.chunk_coords, (std::vector<std::uint64_t>{0, 3}));
  plan.task(1, t);
  EXPECT_EQ(t.chunk_coords, (std::vector<std::uint64_t>{5, n - 1}));
  EXPECT_EQ(std::vector<std::uint64_t>(t.points.begin(), t.points.end()), (std::vector<std::uint64_t>{0, 2}));
  plan.task(2, t);
  EXPECT_EQ(t.chunk_coords, (std::vector<std::uint64_t>{n - 1, 3}));
}

// ---- Block selections ------------------------------------------------------------------

TEST(Blocks, SelectWholeChunksByChunkIndex) {
  auto store = MemoryStore::create();
  Array a = iota_array(store, {10, 7}, {4, 3});  // a 3 x 3 grid, ragged on both axes
  EXPECT_EQ(a.block_selection({std::int64_t{1}}), (Selection{Slice{4, 8, 1}, Slice{0, 7, 1}}));
  EXPECT_EQ(a.block_selection({std::int64_t{-1}, Slice{1, std::nullopt, 1}}), (Selection{Slice{8, 10, 1}, Slice{3, 7, 1}}));
  EXPECT_EQ(a.block_selection({Ellipsis{}, Slice{5, 9, 1}}), (Selection{Slice{0, 10, 1}, Slice{0, 0, 1}}));
  // Steps and lists become element lists: blocks in the order asked, each in its own order.
  EXPECT_EQ(a.block_selection({Slice{std::nullopt, std::nullopt, -2}}),
            (Selection{IndexArray{{8, 9, 0, 1, 2, 3}}, Slice{0, 7, 1}}));
  EXPECT_EQ(a.block_selection({IndexArray{{2, 0}}, BoolArray{{0, 0, 1}}}),
            (Selection{IndexArray{{8, 9, 0, 1, 2, 3}}, IndexArray{{6}}}));
  // A block read equals the element read; writes land in the block.
  EXPECT_EQ(values_of<std::int32_t>(a.read_blocks({std::int64_t{2}, std::int64_t{2}})),
            (std::vector<std::int32_t>{62, 69}));
  std::vector<std::int32_t> zero{0};
  a.write_blocks({std::int64_t{0}, std::int64_t{1}}, view_of(zero, {}, a.dtype()));
  EXPECT_EQ(values_of<std::int32_t>(a.read({Slice{0, 4, 1}, Slice{3, 6, 1}})), std::vector<std::int32_t>(12, 0));
  expect_error([&] { a.block_selection({std::int64_t{3}}); }, ErrorCode::kInvalidArgument,
               "index 3 is out of bounds for axis 0 with size 3");
  expect_error([&] { a.block_selection({Slice{std::nullopt, std::nullopt, 0}}); }, ErrorCode::kInvalidArgument,
               "step cannot be zero");
}

// ---- Resize and append -----------------------------------------------------------------

TEST(Resize, ShrinkingErasesChunksOutsideAndClearsTheEdge) {
  for (const int format : {2, 3}) {
    SCOPED_TRACE(format);
    auto store = MemoryStore::create();
    Array a = iota_array(store, {10, 6}, {4, 4}, format, -1);
    const std::string k = format == 3 ? "a/c/" : "a/";
    const char sep = format == 3 ? '/' : '.';
    auto key = [&](int i, int j) { return k + std::to_string(i) + sep + std::to_string(j); };
    EXPECT_TRUE(store->exists(key(2, 1)));
    a.resize({5, 6});
    EXPECT_EQ(a.shape(), (Shape{5, 6}));
    EXPECT_FALSE(store->exists(key(2, 0)));
    EXPECT_FALSE(store->exists(key(2, 1)));
    EXPECT_TRUE(store->exists(key(1, 0)));
    // The metadata on disk has the new shape.
    const Array reopened = Array::open(store, "a");
    EXPECT_EQ(reopened.shape(), (Shape{5, 6}));
    std::vector<std::int32_t> want(30);
    std::iota(want.begin(), want.end(), 0);
    EXPECT_EQ(values_of<std::int32_t>(reopened.read()), want);
    // Growing again shows the fill value where the old data was.
    a.resize({10, 8});
    const auto all = values_of<std::int32_t>(a.read());
    for (std::size_t i = 0; i < 80; ++i) {
      const std::size_t r = i / 8, c = i % 8;
      EXPECT_EQ(all[i], r < 5 && c < 6 ? static_cast<std::int32_t>(r * 6 + c) : -1) << r << "," << c;
    }
  }
}

TEST(Resize, GrowingKeepsData) {
  auto store = MemoryStore::create();
  Array a = iota_array(store, {5, 2}, {4, 2}, 3, 9);
  a.resize({7, 3});
  EXPECT_EQ(values_of<std::int32_t>(Array::open(store, "a").read()),
            (std::vector<std::int32_t>{0, 1, 9, 2, 3, 9, 4, 5, 9, 6, 7, 9, 8, 9, 9, 9, 9, 9, 9, 9, 9}));
  a.resize({7, 3});  // the same shape: nothing changes
  EXPECT_EQ(a.shape(), (Shape{7, 3}));
  expect_error([&] { a.resize({3}); }, ErrorCode::kInvalidArgument, "the new shape has 1 axes, the array has 2");
  expect_error([&] { a.resize({std::uint64_t{1} << 62, 3}); }, ErrorCode::kInvalidArgument, "overflows 64 bits");
  EXPECT_EQ(Array::open(store, "a").shape(), (Shape{7, 3}));
}

TEST(Resize, ChunksLeftBeyondTheShapeByOthersDoNotResurface) {
  // zarr-python leaves chunks behind when it shrinks: copy the chunks of a 12-element array
  // under a 5-element one, so that c/1 holds a stale element 5 and c/2, c/3 lie outside.
  auto store = MemoryStore::create();
  iota_array(store, {12}, {3}, 3, 0, "w");
  Array a = iota_array(store, {5}, {3}, 3, 0, "a");
  for (const char* c : {"c/0", "c/1", "c/2", "c/3"}) {
    store->set(std::string("a/") + c, store->get(std::string("w/") + c)->view());
  }
  a.resize({9});
  EXPECT_EQ(values_of<std::int32_t>(a.read()), (std::vector<std::int32_t>{0, 1, 2, 3, 4, 0, 0, 0, 0}));
  EXPECT_FALSE(store->exists("a/c/2"));  // inside the new grid, outside the old shape: erased
  EXPECT_TRUE(store->exists("a/c/3"));   // outside both: out of sight
  a.resize({12});
  EXPECT_FALSE(store->exists("a/c/3"));
  EXPECT_EQ(values_of<std::int32_t>(a.read()), (std::vector<std::int32_t>{0, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(Append, GrowsAlongAnAxisAndWritesTheData) {
  for (const int format : {2, 3}) {
    SCOPED_TRACE(format);
    auto store = MemoryStore::create();
    Array a = iota_array(store, {3, 4}, {2, 3}, format);
    std::vector<std::int32_t> rows{100, 101, 102, 103, 104, 105, 106, 107};
    EXPECT_EQ(a.append(view_of(rows, {2, 4}, a.dtype())), (Shape{5, 4}));
    std::vector<std::int32_t> cols{-1, -2, -3, -4, -5};
    EXPECT_EQ(a.append(view_of(cols, {5, 1}, a.dtype()), 1), (Shape{5, 5}));
    const Array reopened = Array::open(store, "a");
    EXPECT_EQ(reopened.shape(), (Shape{5, 5}));
    EXPECT_EQ(values_of<std::int32_t>(reopened.read()),
              (std::vector<std::int32_t>{0, 1, 2, 3, -1, 4, 5, 6, 7, -2, 8, 9, 10, 11, -3, 100, 101, 102, 103, -4,
                                         104, 105, 106, 107, -5}));
    expect_error([&] { a.append(view_of(cols, {5}, a.dtype())); }, ErrorCode::kInvalidArgument,
                 "the data has 1 axes, the array has 2");
    expect_error([&] { a.append(view_of(rows, {2, 4}, a.dtype())); }, ErrorCode::kInvalidArgument,
                 "differs from the array's [5, 5] on axis 1");
    expect_error([&] { a.append(view_of(rows, {2, 5}, a.dtype()), 2); }, ErrorCode::kInvalidArgument,
                 "axis 2 is out of range");
    EXPECT_EQ(a.shape(), (Shape{5, 5}));  // failed appends change nothing
  }
}

}  // namespace
}  // namespace zarrkit
