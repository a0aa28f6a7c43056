// Splitting a selection into parts and reading / writing the parts at once (multi_device.h).
// Host views here; the GPU tests run the same on devices.
#include "zarrkit/multi_device.h"

#include <cstring>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "engine/array_testing.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

json sharding(const Shape& inner) {
  return json::array({{{"name", "sharding_indexed"},
                       {"configuration",
                        {{"chunk_shape", inner},
                         {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                                 {{"name", "zstd"}, {"configuration", {{"level", 1}}}}})},
                         {"index_codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                                       {{"name", "crc32c"}}})}}}}});
}

// An int32 array whose element at linear index k holds k.
Array iota_array(const Shape& shape, const Shape& chunks, std::optional<json> codecs = std::nullopt) {
  ArraySpec spec;
  spec.shape = shape;
  spec.chunks = chunks;
  spec.dtype = DataType::int_(32);
  spec.codecs = std::move(codecs);
  Array a = Array::create(MemoryStore::create(), "a", make_array_metadata(spec, CodecRegistry::builtin()));
  std::vector<std::int32_t> values(checked_num_elements(shape));
  std::iota(values.begin(), values.end(), 0);
  a.write({}, view_of(values, shape, a.dtype()));
  return a;
}

// The slices' [start, stop) along `axis` (step-1 slices).
std::vector<std::pair<std::int64_t, std::int64_t>> ranges(const std::vector<Selection>& parts, std::size_t axis) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (const auto& p : parts) {
    const Slice& s = std::get<Slice>(p[axis]);
    out.emplace_back(*s.start, *s.stop);
  }
  return out;
}

TEST(SplitSelection, CutsAtChunkBoundariesAndBalancesTheChunks) {
  const Array a = iota_array({100, 8}, {10, 8});
  using R = std::vector<std::pair<std::int64_t, std::int64_t>>;
  EXPECT_EQ(ranges(split_selection(a.metadata(), {}, 0, 3), 0), (R{{0, 30}, {30, 60}, {60, 100}}));
  EXPECT_EQ(ranges(split_selection(a.metadata(), {}, 0, 4), 0), (R{{0, 20}, {20, 50}, {50, 70}, {70, 100}}));
  // A selection that starts and ends inside chunks: the first and last pieces are partial.
  EXPECT_EQ(ranges(split_selection(a.metadata(), {Slice{15, 95, 1}}, 0, 2), 0), (R{{15, 50}, {50, 95}}));
  // Fewer chunks than parts: one piece per chunk.
  EXPECT_EQ(ranges(split_selection(a.metadata(), {Slice{5, 25, 1}}, 0, 8), 0), (R{{5, 10}, {10, 20}, {20, 25}}));
  // Along an axis of one chunk: one piece.
  EXPECT_EQ(split_selection(a.metadata(), {}, 1, 4).size(), 1u);
  // The other axes come back as they were selected (integers still drop their axis).
  const auto kept = split_selection(a.metadata(), {Slice{0, 40, 1}, std::int64_t{3}}, 0, 2);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1][1], AxisSelector(std::int64_t{3}));
  EXPECT_EQ(a.selection_shape(kept[0]), (Shape{20}));
}

TEST(SplitSelection, ShardedArraysAreCutAtShardBoundaries) {
  const Array a = iota_array({64, 4}, {16, 4}, sharding({4, 4}));
  const auto parts = split_selection(a.metadata(), {}, 0, 2);
  using R = std::vector<std::pair<std::int64_t, std::int64_t>>;
  EXPECT_EQ(ranges(parts, 0), (R{{0, 32}, {32, 64}}));
}

TEST(SplitSelection, RefusesWhatCannotBeSplit) {
  const Array a = iota_array({10, 10}, {5, 5});
  EXPECT_THROW(split_selection(a.metadata(), {}, 0, 0), InvalidArgumentError);
  EXPECT_THROW(split_selection(a.metadata(), {}, 2, 2), InvalidArgumentError);
  EXPECT_THROW(split_selection(a.metadata(), {std::int64_t{1}}, 0, 2), InvalidArgumentError);
  // An empty selection: one (empty) piece.
  const auto empty = split_selection(a.metadata(), {Slice{3, 3, 1}}, 0, 4);
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(a.selection_shape(empty[0]), (Shape{0, 10}));
}

// Every kind of axis selection, cut into every number of parts: the parts' reads, put
// together along the axis, equal the read of the whole selection.
TEST(SplitSelection, PartsTogetherReadWhatTheWholeReads) {
  const Array a = iota_array({37, 11}, {6, 4});
  std::mt19937 rng(7);
  const std::vector<AxisSelector> axis0 = {
      Slice{},           Slice{3, 35, 1},  Slice{2, 36, 5},         Slice{36, std::nullopt, -1},
      Slice{30, 1, -7},  Slice{0, 37, 13}, IndexArray{{5, 1, 30, 30, 12, 0}},
      BoolArray{std::vector<std::uint8_t>(37, 1)}};
  for (const auto& s0 : axis0) {
    const Selection whole = {s0, Slice{1, 10, 2}};
    const auto expected = values_of<std::int32_t>(a.read(whole));
    const Shape shape = a.selection_shape(whole);
    for (std::size_t parts = 1; parts <= 9; ++parts) {
      const auto pieces = split_selection(a.metadata(), whole, 0, parts);
      ASSERT_LE(pieces.size(), parts);
      std::vector<std::int32_t> joined;
      for (const auto& p : pieces) {
        const auto v = values_of<std::int32_t>(a.read(p));
        if (shape[0] != 0) {
          EXPECT_FALSE(v.empty()) << format_selection(p);
        }
        joined.insert(joined.end(), v.begin(), v.end());
      }
      EXPECT_EQ(joined, expected) << format_selection(whole) << " in " << parts << " parts";
    }
  }
}

TEST(ReadIntoDevices, HostViewsReadInParallelEqualTheWholeRead) {
  const Array a = iota_array({64, 8, 8}, {4, 8, 8}, sharding({2, 4, 8}));
  const auto pieces = split_selection(a.metadata(), {}, 0, 4);
  ASSERT_EQ(pieces.size(), 4u);
  std::vector<std::vector<std::int32_t>> outputs(pieces.size());
  std::vector<DevicePart> parts;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const Shape shape = a.selection_shape(pieces[i]);
    outputs[i].assign(checked_num_elements(shape), -1);
    parts.push_back({pieces[i], view_of(outputs[i], shape, a.dtype())});
  }
  read_into_devices(a, parts);
  std::vector<std::int32_t> joined;
  for (const auto& o : outputs) joined.insert(joined.end(), o.begin(), o.end());
  EXPECT_EQ(joined, values_of<std::int32_t>(a.read()));
}

TEST(ReadIntoDevices, AFailingPartIsNamedAndTheOthersFinish) {
  const Array a = iota_array({40}, {10});
  std::vector<std::int32_t> good(20, -1), bad(5, -1);
  std::vector<DevicePart> parts = {{{Slice{0, 20, 1}}, view_of(good, {20}, a.dtype())},
                                   {{Slice{20, 40, 1}}, view_of(bad, {5}, a.dtype())}};  // wrong shape
  try {
    read_into_devices(a, parts);
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("part 1 of 2"), std::string::npos) << e.what();
  }
  std::vector<std::int32_t> expected(20);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(good, expected);
}

TEST(WriteFromDevices, DisjointAndSharedChunksAllKeepTheirValues) {
  // Parts that share shards (cut inside them) are written one after another, so none of
  // their values is lost; parts on their own shards at once.
  for (const bool chunk_aligned : {true, false}) {
    Array a = iota_array({48, 6}, {12, 6}, sharding({3, 6}));
    std::vector<Selection> pieces;
    if (chunk_aligned) {
      pieces = split_selection(a.metadata(), {}, 0, 4);
    } else {
      for (std::int64_t r = 0; r < 48; r += 3) pieces.push_back({Slice{r, r + 3, 1}});
    }
    std::vector<std::vector<std::int32_t>> inputs(pieces.size());
    std::vector<DevicePart> parts;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      const Shape shape = a.selection_shape(pieces[i]);
      inputs[i].assign(checked_num_elements(shape), static_cast<std::int32_t>(1000 + i));
      parts.push_back({pieces[i], view_of(inputs[i], shape, a.dtype())});
    }
    write_from_devices(a, parts);
    std::vector<std::int32_t> expected;
    for (const auto& in : inputs) expected.insert(expected.end(), in.begin(), in.end());
    EXPECT_EQ(values_of<std::int32_t>(Array::open(a.store(), "a").read()), expected) << chunk_aligned;
  }
}

TEST(MultiDevice, RectilinearGridsAreCutAtTheirOwnChunkBoundariesAndKeepEveryValue) {
  // Rows in chunks of 10 10 5 5 (the largest, 10, is not where the last chunks start).
  ArraySpec spec;
  spec.shape = {30, 4};
  spec.dtype = DataType::int_(32);
  const std::vector<ChunkRun> rows{{10, 2}, {5, 2}};
  spec.rectilinear_chunks = ChunkGrid({AxisGrid::explicit_runs(rows), AxisGrid::regular(4)});
  Array a = Array::create(MemoryStore::create(), "a", make_array_metadata(spec, CodecRegistry::builtin()));
  using R = std::vector<std::pair<std::int64_t, std::int64_t>>;
  EXPECT_EQ(ranges(split_selection(a.metadata(), {}, 0, 4), 0), (R{{0, 10}, {10, 20}, {20, 25}, {25, 30}}));
  EXPECT_EQ(ranges(split_selection(a.metadata(), {Slice{3, 27, 1}}, 0, 2), 0), (R{{3, 20}, {20, 27}}));
  // Parts cut inside the chunks write in waves; parts on their own chunks at once.
  for (const bool chunk_aligned : {true, false}) {
    std::vector<Selection> pieces;
    if (chunk_aligned) {
      pieces = split_selection(a.metadata(), {}, 0, 4);
    } else {
      for (std::int64_t r = 0; r < 30; r += 3) pieces.push_back({Slice{r, r + 3, 1}});
    }
    std::vector<std::vector<std::int32_t>> inputs(pieces.size());
    std::vector<DevicePart> parts;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      const Shape shape = a.selection_shape(pieces[i]);
      inputs[i].assign(checked_num_elements(shape), static_cast<std::int32_t>(100 * chunk_aligned + i));
      parts.push_back({pieces[i], view_of(inputs[i], shape, a.dtype())});
    }
    write_from_devices(a, parts);
    std::vector<std::int32_t> expected;
    for (const auto& in : inputs) expected.insert(expected.end(), in.begin(), in.end());
    EXPECT_EQ(values_of<std::int32_t>(Array::open(a.store(), "a").read()), expected) << chunk_aligned;
    std::vector<std::vector<std::int32_t>> outputs(pieces.size());
    std::vector<DevicePart> reads;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      const Shape shape = a.selection_shape(pieces[i]);
      outputs[i].assign(checked_num_elements(shape), -1);
      reads.push_back({pieces[i], view_of(outputs[i], shape, a.dtype())});
    }
    read_into_devices(a, reads);
    EXPECT_EQ(outputs, inputs) << chunk_aligned;
  }
}

}  // namespace
}  // namespace zarrkit
