// PartialChunkCodec::locate on sharded arrays, used as a batch executor (the GPU reader)
// uses it: locate each task's inner chunks, then fetch, decode and place each one here, in
// the test, and compare with Array::read.
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <random>

#include "core/block_runs.h"
#include "core/partial_chunk_codec.h"
#include "engine/indexer.h"
#include "engine/selection_testing.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

const json kLittle = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
const json kZstd = {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}};

json sharding(const Shape& inner, json codecs, const std::string& location) {
  return {{"name", "sharding_indexed"},
          {"configuration",
           {{"chunk_shape", inner},
            {"codecs", std::move(codecs)},
            {"index_codecs", json::array({kLittle, {{"name", "crc32c"}}})},
            {"index_location", location}}}};
}

// A store that counts the gets of chunk keys, and how many of them asked for a range.
class CountingStore final : public Store {
 public:
  explicit CountingStore(std::shared_ptr<Store> inner) : inner_(std::move(inner)) {}
  StoreCapabilities capabilities() const override { return inner_->capabilities(); }
  std::string describe() const override { return inner_->describe(); }
  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype,
                            std::optional<ByteRange> range) override {
    if (!key.ends_with("zarr.json")) {
      const std::lock_guard lock(mutex_);
      ++gets;
      if (range) ++ranged_gets;
    }
    return inner_->get(key, prototype, range);
  }
  void set(std::string_view key, ByteView value) override { inner_->set(key, value); }
  void erase(std::string_view key) override { inner_->erase(key); }
  std::vector<std::string> list(std::string_view prefix) override { return inner_->list(prefix); }

  int gets = 0;
  int ranged_gets = 0;

 private:
  std::shared_ptr<Store> inner_;
  std::mutex mutex_;
};

// Places the inner chunks `located` finds into `region`: the fill value where nothing is
// stored, nested shards located in turn (unless wanted whole), the others fetched as one
// range each and decoded with the inner chain.
void place(const LocatedChunks& located, Store& store, const std::string& key, const NDView& region, ByteView fill,
           int& nested_locates) {
  ASSERT_TRUE(located.inner);
  ASSERT_EQ(located.bytes.size(), located.selection.chunks.size());
  const PreparedChain& inner = *located.inner;
  for (std::size_t i = 0; i < located.selection.chunks.size(); ++i) {
    const InnerChunkRef& chunk = located.selection.chunks[i];
    const InnerChunkBytes& where = located.bytes[i];
    const BlockRuns runs = chunk.runs();
    SCOPED_TRACE(chunk.describe());
    if (!located.stored) {
      EXPECT_FALSE(where.stored);
    }
    if (!where.stored) {
      fill_region(runs, region.data, region.byte_strides, fill);
      continue;
    }
    if (inner.partial() != nullptr && !chunk.covered) {
      ++nested_locates;
      ChunkSource nested{&store, key, where.offset, where.nbytes, std::nullopt};
      const Shape valid = chunk.valid();
      place(inner.partial()->locate(nested, runs, valid), store, key, region, fill, nested_locates);
      continue;
    }
    const auto bytes = store.get(key, BufferPrototype::host(), ByteRange::range(where.offset, where.offset + where.nbytes));
    ASSERT_TRUE(bytes);
    ASSERT_EQ(bytes->size(), where.nbytes);
    const NDBuffer decoded = inner.decode(bytes->view());
    ASSERT_EQ(decoded.nbytes(), inner.chunk_bytes());
    copy_block_to_region(runs, decoded.data(), inner.strides(), region.data, region.byte_strides,
                         inner.spec().dtype.size());
  }
}

struct ReadByLocating {
  NDBuffer values;
  int locates = 0;
  int nested_locates = 0;
};

// Reads `selection` of the array at `path` through locate alone. With `whole_values`, each
// shard is fetched whole first and located in memory.
ReadByLocating read_by_locating(Store& store, const std::string& path, const ArrayMetadata& m,
                                const Selection& selection, bool whole_values = false) {
  const PartialChunkCodec* partial = m.prepared_chain().partial();
  if (partial == nullptr) throw InternalError("the array's chain has no partial codec");
  const ChunkPlan plan(m.shape, m.chunk_shape, selection);
  ReadByLocating result;
  result.values = NDBuffer::allocate(plan.output_shape(), m.dtype);
  const NDView region = expand_to_region(result.values.view(), plan.selection());
  for (std::uint64_t t = 0; t < plan.num_tasks(); ++t) {
    const ChunkTask task = plan.task(t);
    const std::string key = join_key(path, m.chunk_key(task.chunk_coords));
    std::optional<Buffer> whole;
    ChunkSource source{&store, key, 0, std::nullopt, std::nullopt};
    if (whole_values) {
      whole = store.get(key, BufferPrototype::host());
      if (whole) source = ChunkSource{nullptr, key, 0, whole->size(), whole->view()};
    }
    LocatedChunks located = partial->locate_task(source, task, m.shape);
    ++result.locates;
    if (whole_values && !whole) {
      // An absent value: nothing located, nothing read.
      EXPECT_FALSE(located.stored);
    }
    place(located, store, key, region, m.fill_value.bytes(), result.nested_locates);
  }
  return result;
}

struct Layout {
  Shape shape, shards;
  json codecs;
  std::string what;
};

std::vector<Layout> layouts() {
  return {
      {{37}, {16}, json::array({sharding({4}, json::array({kLittle}), "end")}), "1-d ragged, index at end"},
      {{37}, {16}, json::array({sharding({4}, json::array({kLittle, kZstd}), "start")}), "1-d zstd, index at start"},
      {{13, 11}, {6, 8}, json::array({sharding({3, 2}, json::array({kLittle}), "start")}), "2-d ragged, raw"},
      {{9, 10, 7}, {4, 4, 4}, json::array({sharding({2, 2, 1}, json::array({kLittle, kZstd}), "end")}), "3-d"},
      {{20, 18}, {8, 8}, json::array({sharding({4, 4}, json::array({sharding({2, 2}, json::array({kLittle}), "end")}), "end")}),
       "nested"},
      {{20, 18},
       {8, 8},
       json::array({sharding({4, 4}, json::array({sharding({2, 1}, json::array({kLittle, kZstd}), "start")}), "start")}),
       "nested, index at start on both levels"},
  };
}

ArrayMetadata metadata_for(const Layout& layout) {
  ArraySpec spec;
  spec.shape = layout.shape;
  spec.chunks = layout.shards;
  spec.dtype = DataType::int_(32);
  spec.fill_value = 7;
  spec.codecs = layout.codecs;
  return make_array_metadata(spec, CodecRegistry::builtin());
}

std::string bytes_of(const NDBuffer& b) { return std::string(as_chars(b.buffer().view())); }

class Locate : public ::testing::TestWithParam<Layout> {};

TEST_P(Locate, InnerChunksFetchedAndDecodedByTheCallerEqualArrayRead) {
  const Layout& layout = GetParam();
  auto memory = MemoryStore::create();
  const ArrayMetadata m = metadata_for(layout);
  Array array = Array::create(memory, "a", m);
  std::mt19937_64 rng(std::hash<std::string>{}(layout.what));
  // Values in a part of the array only: some shards stay absent, and fill-value rows leave
  // some inner chunks unstored.
  Selection part;
  for (std::size_t a = 0; a < layout.shape.size(); ++a) {
    part.push_back(Slice{0, static_cast<std::int64_t>(std::max<std::uint64_t>(1, layout.shape[a] / 2 + 1)), 1});
  }
  const Shape part_shape = array.selection_shape(part);
  NDBuffer values = NDBuffer::allocate(part_shape, DataType::int_(32));
  auto* p = reinterpret_cast<std::int32_t*>(values.data());
  for (std::uint64_t i = 0; i < values.num_elements(); ++i) p[i] = i % 5 == 0 ? 7 : static_cast<std::int32_t>(i);
  array.write(part, values.view());
  Selection corner;  // an inner chunk that was stored, emptied again
  for (std::size_t a = 0; a < layout.shape.size(); ++a) corner.push_back(Slice{0, 1, 1});
  array.write(corner, NDBuffer::filled(array.selection_shape(corner), DataType::int_(32),
                                       FillValue::of<std::int32_t>(7)).view());

  auto counting = std::make_shared<CountingStore>(memory);
  std::vector<Selection> selections = {Selection{}, part, corner};
  for (int i = 0; i < 40; ++i) selections.push_back(testing::random_selection(rng, layout.shape));
  bool nested_seen = false;
  for (const Selection& sel : selections) {
    SCOPED_TRACE(testing::describe_selection(sel));
    const std::string expected = bytes_of(array.read(sel));
    const ReadByLocating ranged = read_by_locating(*counting, "a", m, sel);
    EXPECT_EQ(bytes_of(ranged.values), expected);
    const ReadByLocating whole = read_by_locating(*counting, "a", m, sel, /*whole_values=*/true);
    EXPECT_EQ(bytes_of(whole.values), expected);
    nested_seen = nested_seen || ranged.nested_locates > 0;
  }
  EXPECT_EQ(nested_seen, layout.what.starts_with("nested"));
}

INSTANTIATE_TEST_SUITE_P(Layouts, Locate, ::testing::ValuesIn(layouts()),
                         [](const auto& info) { return "layout" + std::to_string(info.index); });

TEST(Locate, ReadsTheIndexWithOneRangedGetAndNothingElse) {
  auto memory = MemoryStore::create();
  const ArrayMetadata m = metadata_for(layouts()[2]);  // 13 x 11 in shards of 6 x 8, inner 3 x 2
  Array array = Array::create(memory, "", m);
  array.write({}, NDBuffer::filled({13, 11}, DataType::int_(32), FillValue::of<std::int32_t>(1)).view());
  CountingStore counting(memory);
  const PartialChunkCodec& partial = *m.prepared_chain().partial();
  // Rows 2..4 of columns 1..2 of shard (0, 0): inner chunks (0,0) and (1,0), (0,1), (1,1).
  const ChunkPlan plan(m.shape, m.chunk_shape, {Slice{2, 5, 1}, Slice{1, 3, 1}});
  ASSERT_EQ(plan.num_tasks(), 1u);
  const LocatedChunks located = partial.locate_task(ChunkSource{&counting, "c/0/0", 0, std::nullopt, std::nullopt},
                                                    plan.task(0), m.shape);
  EXPECT_EQ(counting.gets, 1);
  EXPECT_EQ(counting.ranged_gets, 1);
  ASSERT_TRUE(located.stored);
  // What select alone says, before any read: the same inner chunks, of the 2 x 4 per shard.
  EXPECT_EQ(partial.num_inner_chunks(), 8u);
  const ChunkTask task = plan.task(0);
  const Shape valid = chunk_valid_extent(task, m.chunk_shape, m.shape);
  EXPECT_EQ(valid, (Shape{6, 8}));
  EXPECT_EQ(partial.select(task_runs(task), valid).chunks.size(), 4u);
  EXPECT_EQ(counting.gets, 1);
  std::vector<std::uint64_t> ordinals;
  for (const InnerChunkRef& chunk : located.selection.chunks) ordinals.push_back(chunk.ordinal);
  EXPECT_EQ(ordinals, (std::vector<std::uint64_t>{0, 1, 4, 5}));  // 4 inner chunks per row of the grid
  for (const InnerChunkBytes& b : located.bytes) {
    EXPECT_TRUE(b.stored);
    EXPECT_EQ(b.nbytes, 3u * 2u * 4u);  // raw inner chunks
  }
  EXPECT_EQ(located.selection.chunks[0].describe(), "inner chunk (0,0)");
  EXPECT_FALSE(located.selection.chunks[0].covered);
  EXPECT_EQ(located.inner->chunk_bytes(), 24u);
  // An absent shard: one get that finds nothing, and every inner chunk not stored.
  memory->erase("c/1/1");
  counting.gets = counting.ranged_gets = 0;
  const ChunkPlan corner(m.shape, m.chunk_shape, {Slice{6, 13, 1}, Slice{8, 11, 1}});
  const LocatedChunks absent =
      partial.locate_task(ChunkSource{&counting, "c/1/1", 0, std::nullopt, std::nullopt}, corner.task(0), m.shape);
  EXPECT_EQ(counting.gets, 1);
  EXPECT_FALSE(absent.stored);
  EXPECT_FALSE(absent.bytes.empty());
  for (const InnerChunkBytes& b : absent.bytes) EXPECT_FALSE(b.stored);
}

TEST(Locate, ACorruptIndexIsDataLoss) {
  auto memory = MemoryStore::create();
  const ArrayMetadata m = metadata_for(layouts()[0]);  // index at the end, with crc32c
  Array array = Array::create(memory, "", m);
  array.write({}, NDBuffer::filled({37}, DataType::int_(32), FillValue::of<std::int32_t>(3)).view());
  auto shard = memory->get("c/0");
  ASSERT_TRUE(shard);
  std::string damaged(as_chars(shard->view()));
  damaged[damaged.size() - 6] ^= 1;  // inside the index: its checksum fails
  memory->set("c/0", as_bytes(damaged));
  const ChunkPlan plan(m.shape, m.chunk_shape, {Slice{0, 4, 1}});
  const PartialChunkCodec& partial = *m.prepared_chain().partial();
  EXPECT_THROW(partial.locate_task(ChunkSource{memory.get(), "c/0", 0, std::nullopt, std::nullopt}, plan.task(0), m.shape),
               DataLossError);
  // In memory, the entries are also checked against the value's size: the index alone,
  // whose entries point past it.
  const ByteView index_alone = shard->view().last(4 * 16 + 4);
  EXPECT_THROW(
      partial.locate_task(ChunkSource{nullptr, "c/0", 0, std::nullopt, index_alone}, plan.task(0), m.shape),
      DataLossError);
  EXPECT_NO_THROW(
      partial.locate_task(ChunkSource{nullptr, "c/0", 0, std::nullopt, shard->view()}, plan.task(0), m.shape));
}

}  // namespace
}  // namespace zarrkit
