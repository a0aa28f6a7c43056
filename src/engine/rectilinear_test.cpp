// Arrays on a rectilinear chunk grid: every selection kind, writes, sharding, resize and
// append, checked against the same data in an array on a regular grid (whose paths the
// other engine tests cover) and against the chunks' own stored shapes.
#include <cstring>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "engine/array_testing.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

const Shape kShape{30, 7};

// Rows in chunks of 10 10 5 5, columns in chunks of 4 (the last cut to 3 by the extent):
// what zarr-python 3.4.2 writes for chunks=[[10, 10, 5, 5], 4].
ChunkGrid rows_varying() {
  const std::vector<ChunkRun> rows{{10, 2}, {5, 2}};
  return ChunkGrid({AxisGrid::explicit_runs(rows), AxisGrid::regular(4)});
}

json sharded_codecs() {
  return json::array({{{"name", "sharding_indexed"},
                       {"configuration",
                        {{"chunk_shape", {5, 4}},
                         {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                                 {{"name", "zstd"}, {"configuration", {{"level", 1}}}}})},
                         {"index_codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                                       {{"name", "crc32c"}}})},
                         {"index_location", "end"}}}}});
}

Array make(const std::shared_ptr<Store>& store, const std::string& path, const Shape& shape,
           std::optional<ChunkGrid> grid, const Shape& chunks = {}, std::optional<json> codecs = std::nullopt) {
  ArraySpec spec;
  spec.shape = shape;
  spec.dtype = DataType::int_(32);
  spec.fill_value = -1;
  spec.rectilinear_chunks = std::move(grid);
  spec.chunks = chunks;
  spec.codecs = std::move(codecs);
  return Array::create(store, path, make_array_metadata(spec, CodecRegistry::builtin()), true);
}

// A rectilinear array and a regular one (the reference) holding the same values.
struct Pair {
  std::shared_ptr<Store> store = MemoryStore::create();
  Array rect;
  Array ref;
  explicit Pair(std::optional<json> codecs = std::nullopt, ChunkGrid grid = rows_varying(), Shape shape = kShape)
      : rect(make(store, "rect", shape, std::move(grid), {}, codecs)), ref(make(store, "ref", shape, std::nullopt, {4, 3})) {
    std::vector<std::int32_t> values(checked_num_elements(shape));
    std::iota(values.begin(), values.end(), 0);
    rect.write({}, view_of(values, shape, rect.dtype()));
    ref.write({}, view_of(values, shape, ref.dtype()));
  }
};

std::vector<std::int32_t> ints(const NDBuffer& b) { return values_of<std::int32_t>(b); }

// Every stored chunk of `a` decodes to the shape its grid gives it.
void expect_chunks_have_their_shapes(const Array& a, Store& store) {
  const ArrayMetadata& m = a.metadata();
  const ChunkGrid grid = m.chunk_grid();
  std::size_t seen = 0;
  for (const std::string& key : store.list(a.path() + "/c/")) {
    const std::string rel = key.substr(a.path().size() + 3);
    const std::size_t slash = rel.find('/');
    const std::vector<std::uint64_t> coords{std::stoull(rel.substr(0, slash)), std::stoull(rel.substr(slash + 1))};
    const auto bytes = store.get(key, BufferPrototype::host());
    ASSERT_TRUE(bytes);
    const NDBuffer chunk = m.prepared_chain(coords).decode(bytes->view(), BufferPrototype::host());
    EXPECT_EQ(chunk.shape(), grid.chunk_shape(coords)) << key;
    ++seen;
  }
  EXPECT_GT(seen, 0u);
}

TEST(Rectilinear, WholeReadAndChunkShapes) {
  Pair p;
  EXPECT_EQ(ints(p.rect.read()), ints(p.ref.read()));
  EXPECT_EQ(p.rect.metadata().chunk_grid_shape(), (Shape{4, 2}));
  expect_chunks_have_their_shapes(p.rect, *p.store);
  // Re-opened from the store, the grid is the one written.
  const Array reopened = Array::open(p.store, "rect");
  ASSERT_TRUE(reopened.metadata().is_rectilinear());
  EXPECT_EQ(*reopened.metadata().rectilinear_grid, rows_varying());
  EXPECT_EQ(ints(reopened.read()), ints(p.ref.read()));
}

// Random basic and orthogonal selections: integers, slices of any step (negative too),
// index lists (unsorted, repeated, negative) and boolean lists, per axis.
Selection random_selection(std::mt19937& rng, const Shape& shape) {
  Selection s;
  for (const std::uint64_t extent : shape) {
    const auto n = static_cast<std::int64_t>(extent);
    std::uniform_int_distribution<std::int64_t> index(-n, n - 1);
    switch (rng() % 5) {
      case 0:
        s.emplace_back(index(rng));
        break;
      case 1: {
        std::int64_t step = static_cast<std::int64_t>(rng() % 13) + 1;
        if (rng() % 3 == 0) step = -step;
        s.emplace_back(Slice{index(rng), index(rng), step});
        break;
      }
      case 2: {
        IndexArray list;
        const std::size_t count = rng() % 12;
        for (std::size_t k = 0; k < count; ++k) list.indices.push_back(index(rng));
        s.emplace_back(std::move(list));
        break;
      }
      case 3: {
        BoolArray mask;
        for (std::uint64_t k = 0; k < extent; ++k) mask.mask.push_back(rng() % 3 == 0);
        s.emplace_back(std::move(mask));
        break;
      }
      default:
        s.emplace_back(Slice::all());
    }
  }
  return s;
}

TEST(Rectilinear, EverySelectionReadsAsOnARegularGrid) {
  for (const bool sharded : {false, true}) {
    // The sharded grid: shards of 10 and 20 rows (multiples of the inner 5), one of 8 columns.
    const std::vector<ChunkRun> rows{{10, 1}, {20, 1}};
    const ChunkGrid grid = sharded ? ChunkGrid({AxisGrid::explicit_runs(rows), AxisGrid::regular(8)}) : rows_varying();
    Pair p(sharded ? std::optional(sharded_codecs()) : std::nullopt, grid);
    std::mt19937 rng(sharded ? 7 : 11);
    for (int trial = 0; trial < 400; ++trial) {
      const Selection s = random_selection(rng, kShape);
      const NDBuffer want = p.ref.read(s);
      const NDBuffer got = p.rect.read(s);
      ASSERT_EQ(got.shape(), want.shape()) << "trial " << trial;
      ASSERT_EQ(ints(got), ints(want)) << "trial " << trial << (sharded ? " (sharded)" : "");
    }
  }
}

TEST(Rectilinear, StepsBetweenTheSmallestAndLargestChunk) {
  // Chunks of 1, 9, 1, 9, ...: a step of 5 lands in some chunks and skips others.
  const std::vector<ChunkRun> rows{{1, 1}, {9, 1}, {1, 1}, {9, 1}, {1, 1}, {9, 1}};
  Pair p(std::nullopt, ChunkGrid({AxisGrid::explicit_runs(rows), AxisGrid::regular(7)}));
  for (const std::int64_t step : {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -3, -5, -8}) {
    const Selection s{Slice{std::nullopt, std::nullopt, step}};
    EXPECT_EQ(ints(p.rect.read(s)), ints(p.ref.read(s))) << step;
  }
}

TEST(Rectilinear, CoordinatesMasksAndBlocks) {
  Pair p;
  const CoordinateSelection points{{29, 0, 10, 19, 20, 25, 9, 29}, {6, 0, 3, 4, 0, 6, 3, 6}};
  EXPECT_EQ(ints(p.rect.read_coordinates(points)), ints(p.ref.read_coordinates(points)));
  MaskSelection mask{kShape, std::vector<std::uint8_t>(210)};
  for (std::size_t k = 0; k < 210; k += 7) mask.mask[k] = 1;
  EXPECT_EQ(ints(p.rect.read_mask(mask)), ints(p.ref.read_mask(mask)));
  // Block (2, 1) is rows 20..25 and columns 4..7 (cut to 7).
  const Selection block{std::int64_t{2}, std::int64_t{1}};
  EXPECT_EQ(ints(p.rect.read_blocks(block)), ints(p.ref.read(Selection{Slice{20, 25, 1}, Slice{4, 7, 1}})));
  const Selection blocks{IndexArray{{3, 0}}, Slice::all()};
  const NDBuffer got = p.rect.read_blocks(blocks);
  std::vector<std::int64_t> rows(5);
  std::iota(rows.begin(), rows.end(), 25);
  for (std::int64_t r = 0; r < 10; ++r) rows.push_back(r);
  EXPECT_EQ(ints(got), ints(p.ref.read(Selection{IndexArray{rows}, Slice::all()})));
}

TEST(Rectilinear, WritesOfEveryKindMatchARegularGrid) {
  for (const bool sharded : {false, true}) {
    const std::vector<ChunkRun> rows{{10, 1}, {20, 1}};
    const ChunkGrid grid = sharded ? ChunkGrid({AxisGrid::explicit_runs(rows), AxisGrid::regular(8)}) : rows_varying();
    Pair p(sharded ? std::optional(sharded_codecs()) : std::nullopt, grid);
    std::mt19937 rng(sharded ? 3 : 5);
    for (int trial = 0; trial < 150; ++trial) {
      const Selection s = random_selection(rng, kShape);
      const Shape shape = p.ref.selection_shape(s);
      std::vector<std::int32_t> values(checked_num_elements(shape));
      for (auto& v : values) v = static_cast<std::int32_t>(rng() % 1000) - 1;  // -1 is the fill value
      p.rect.write(s, view_of(values, shape, p.rect.dtype()));
      p.ref.write(s, view_of(values, shape, p.ref.dtype()));
    }
    const CoordinateSelection points{{0, 29, 12, 12}, {0, 6, 5, 5}};
    std::vector<std::int32_t> four{7, 8, 9, 10};
    p.rect.write_coordinates(points, view_of(four, {4}, p.rect.dtype()));
    p.ref.write_coordinates(points, view_of(four, {4}, p.ref.dtype()));
    EXPECT_EQ(ints(p.rect.read()), ints(p.ref.read())) << (sharded ? "sharded" : "");
    expect_chunks_have_their_shapes(p.rect, *p.store);
  }
}

TEST(Rectilinear, ResizeAndAppendGrowTheGridAsZarrPythonDoes) {
  Pair p;
  // Growing past the sizes listed adds one chunk of the difference.
  p.rect.resize({40, 7});
  p.ref.resize({40, 7});
  EXPECT_EQ(array_metadata_to_v3_json(p.rect.metadata())["chunk_grid"]["configuration"]["chunk_shapes"],
            json::parse("[[[10, 2], [5, 2], 10], 4]"));
  EXPECT_EQ(ints(p.rect.read()), ints(p.ref.read()));
  // Shrinking keeps the sizes; what lies past the new extent reads as the fill value when
  // the array grows again.
  p.rect.resize({12, 7});
  p.ref.resize({12, 7});
  EXPECT_EQ(p.rect.metadata().chunk_grid_shape(), (Shape{2, 2}));
  std::vector<std::int32_t> rows(9 * 7, 5);
  EXPECT_EQ(p.rect.append(view_of(rows, {9, 7}, p.rect.dtype())), (Shape{21, 7}));
  p.ref.append(view_of(rows, {9, 7}, p.ref.dtype()));
  EXPECT_EQ(array_metadata_to_v3_json(p.rect.metadata())["chunk_grid"]["configuration"]["chunk_shapes"],
            json::parse("[[[10, 2], [5, 2], 10], 4]"));
  p.rect.resize({21, 10});
  p.ref.resize({21, 10});
  EXPECT_EQ(ints(p.rect.read()), ints(p.ref.read()));
  EXPECT_EQ(ints(Array::open(p.store, "rect").read()), ints(p.ref.read()));
  expect_chunks_have_their_shapes(p.rect, *p.store);
}

TEST(Rectilinear, CreateRefusesAGridThatDoesNotCoverTheShape) {
  auto store = MemoryStore::create();
  EXPECT_THROW(make(store, "a", {31, 7}, rows_varying()), InvalidArgumentError);
  ArrayMetadata m = make_array_metadata(ArraySpec{.shape = {30, 7}, .dtype = DataType::int_(32)}, CodecRegistry::builtin());
  m.rectilinear_grid = rows_varying();
  m.chunk_shape = {10, 4};
  m.shape = {31, 7};
  EXPECT_THROW(Array::create(store, "b", m), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
