// Sharded arrays through the engine, which reads and writes them through the sharding
// codec's partial codec (sharding_level.h): partial reads (what is fetched), writes (what
// is stored, byte for byte), concurrency, and corrupt shards.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "codecs/sharding.h"
#include "core/block_runs.h"
#include "engine/selection_testing.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;
using testing::describe_selection;
using testing::for_each_index;
using testing::random_selection;
using testing::reference_axes;

// ---- A store that records what is fetched -------------------------------------------------

// A fetch as text: the key, then each range as "[begin,end)" or "last N"; no range: the whole value.
struct Fetched {
  std::string key;
  std::vector<std::string> ranges;
  bool operator==(const Fetched&) const = default;
};

void PrintTo(const Fetched& f, std::ostream* os) {
  *os << f.key;
  for (const auto& r : f.ranges) *os << " " << r;
}

std::string range_text(const ByteRange& r) {
  switch (r.kind) {
    case ByteRange::Kind::kRange:
      return fmt::format("[{},{})", r.start, r.end);
    case ByteRange::Kind::kFromOffset:
      return fmt::format("[{},)", r.start);
    case ByteRange::Kind::kSuffix:
      return fmt::format("last {}", r.suffix);
  }
  return "?";
}
std::string range(std::uint64_t begin, std::uint64_t end) { return range_text(ByteRange::range(begin, end)); }
std::string last(std::uint64_t n) { return range_text(ByteRange::last(n)); }

class CountingStore : public Store {
 public:
  explicit CountingStore(std::shared_ptr<Store> inner) : inner_(std::move(inner)) {}
  StoreCapabilities capabilities() const override { return inner_->capabilities(); }
  std::string describe() const override { return inner_->describe(); }
  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype,
                            std::optional<ByteRange> range) override {
    record(key, range ? std::vector<ByteRange>{*range} : std::vector<ByteRange>{});
    return inner_->get(key, prototype, range);
  }
  std::optional<std::vector<Buffer>> get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                const BufferPrototype& prototype) override {
    record(key, {ranges.begin(), ranges.end()});
    return inner_->get_ranges(key, ranges, prototype);  // the inner store's own get calls are not counted
  }
  void set(std::string_view key, ByteView value) override { inner_->set(key, value); }
  void erase(std::string_view key) override { inner_->erase(key); }
  std::vector<std::string> list(std::string_view prefix) override { return inner_->list(prefix); }

  // The fetches of chunk keys (metadata reads are left out).
  std::vector<Fetched> chunk_fetches() {
    std::lock_guard lock(mutex_);
    std::vector<Fetched> out;
    for (const auto& f : fetched_) {
      if (!f.key.ends_with("zarr.json")) out.push_back(f);
    }
    return out;
  }
  void reset() {
    std::lock_guard lock(mutex_);
    fetched_.clear();
  }

 private:
  void record(std::string_view key, const std::vector<ByteRange>& ranges) {
    std::lock_guard lock(mutex_);
    Fetched f{std::string(key), {}};
    for (const auto& r : ranges) f.ranges.push_back(range_text(r));
    fetched_.push_back(std::move(f));
  }
  std::shared_ptr<Store> inner_;
  std::mutex mutex_;
  std::vector<Fetched> fetched_;
};

// A CountingStore whose open_reader reads the value a part at a time (as LocalStore's does,
// never handing out the whole value) and records every read: where in the value, how many
// bytes, and where they went. With `shrink_to`, reads see the value end there (a file cut
// short after it was opened).
class StreamingStore : public CountingStore {
 public:
  struct Read {
    std::uint64_t offset = 0;
    std::size_t size = 0;
    const std::byte* dest = nullptr;
  };
  explicit StreamingStore(std::shared_ptr<Store> inner) : CountingStore(inner), inner_(std::move(inner)) {}

  std::unique_ptr<ByteSource> open_reader(std::string_view key) override {
    std::optional<Buffer> value = inner_->get(key, BufferPrototype::host());
    if (!value) return nullptr;
    return std::make_unique<Source>(*this, std::move(*value));
  }
  std::vector<Read> reads() {
    std::lock_guard lock(mutex_);
    return reads_;
  }
  void reset_reads() {
    std::lock_guard lock(mutex_);
    reads_.clear();
  }
  std::optional<std::uint64_t> shrink_to;

 private:
  class Source final : public ByteSource {
   public:
    Source(StreamingStore& store, Buffer value) : store_(store), value_(std::move(value)) {}
    std::uint64_t size() const override { return value_.size(); }
    std::size_t read(std::uint64_t offset, MutableByteView dest) override {
      store_.record({offset, dest.size(), dest.data()});
      const std::uint64_t end = std::min<std::uint64_t>(value_.size(), store_.shrink_to.value_or(value_.size()));
      const std::size_t n = offset >= end ? 0 : static_cast<std::size_t>(std::min<std::uint64_t>(dest.size(), end - offset));
      if (n > 0) std::memcpy(dest.data(), value_.data() + offset, n);
      return n;
    }

   private:
    StreamingStore& store_;
    Buffer value_;
  };
  void record(const Read& read) {
    std::lock_guard lock(mutex_);
    reads_.push_back(read);
  }
  std::shared_ptr<Store> inner_;
  std::mutex mutex_;
  std::vector<Read> reads_;
};

// ---- Helpers --------------------------------------------------------------------------------

const json kLittle = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
const json kIndexCodecs = json::array({kLittle, {{"name", "crc32c"}}});

json sharding(const Shape& inner, json codecs = json::array({kLittle}), const std::string& location = "end") {
  return {{"name", "sharding_indexed"},
          {"configuration",
           {{"chunk_shape", inner}, {"codecs", codecs}, {"index_codecs", kIndexCodecs}, {"index_location", location}}}};
}

ArrayMetadata sharded_metadata(Shape shape, Shape shards, json codecs, DataType dtype = DataType::int_(32),
                               json fill = 0) {
  ArraySpec spec;
  spec.shape = std::move(shape);
  spec.chunks = std::move(shards);
  spec.dtype = dtype;
  spec.fill_value = fill;
  spec.codecs = std::move(codecs);
  return make_array_metadata(spec, CodecRegistry::builtin());
}

NDBuffer int32_values(const Shape& shape, std::int32_t first) {
  NDBuffer out = NDBuffer::allocate(shape, DataType::int_(32));
  auto* p = reinterpret_cast<std::int32_t*>(out.data());
  for (std::uint64_t i = 0; i < out.num_elements(); ++i) p[i] = first + static_cast<std::int32_t>(i);
  return out;
}

std::vector<std::int32_t> as_int32(const NDBuffer& b) {
  std::vector<std::int32_t> out(b.num_elements());
  if (b.nbytes() > 0) std::memcpy(out.data(), b.data(), b.nbytes());  // empty: data() may be null
  return out;
}

std::string bytes_of(Store& store, const std::string& key) {
  auto v = store.get(key);
  return v ? std::string(as_chars(v->view())) : std::string("<absent>");
}

const ShardingCodec& codec_of(const ArrayMetadata& m) {
  return dynamic_cast<const ShardingCodec&>(*m.codecs->array_to_bytes());
}

// Every stored shard must be exactly what the sharding codec (whose output matches
// zarr-python's, see sharding_test.cpp) makes of its decoded values: same inner chunk bytes,
// same Morton layout, same index.
void expect_canonical_shards(Store& store, const ArrayMetadata& m) {
  for (const std::string& key : store.list()) {
    if (key.ends_with("zarr.json")) continue;
    const auto stored = store.get(key);
    const NDBuffer decoded = m.codecs->decode(stored->view(), m.chunk_spec());
    const Buffer canonical = m.codecs->encode(decoded, m.chunk_spec());
    EXPECT_EQ(as_chars(stored->view()), as_chars(canonical.view())) << "shard " << key << " is not canonical";
    EXPECT_FALSE(all_equal_fill(decoded.buffer().view(), m.dtype, m.fill_value))
        << "shard " << key << " holds only the fill value and should have been deleted";
  }
}

// ---- split_runs -----------------------------------------------------------------------------

TEST(ShardRuns, SplitsRunsAtInnerChunkBoundaries) {
  // Positions 1, 3, 5, 7, 9 of a shard of 10 in inner chunks of 4, going to 0, 1, 2, 3, 4.
  const std::vector<AxisRun> runs = {AxisRun{1, 2, 5, 0, 1}};
  const auto parts = split_runs(runs, 4, 10);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].index, 0u);
  EXPECT_EQ(parts[0].runs, (std::vector<AxisRun>{{1, 2, 2, 0, 1}}));
  EXPECT_EQ(parts[1].runs, (std::vector<AxisRun>{{1, 2, 2, 2, 1}}));
  EXPECT_EQ(parts[2].runs, (std::vector<AxisRun>{{1, 2, 1, 4, 1}}));
  EXPECT_EQ(parts[2].valid, 2u);  // positions 8 and 9 of the shard lie in the array
  EXPECT_FALSE(parts[0].covers);
}

TEST(ShardRuns, CoverageCountsOnlyPositionsInsideTheArray) {
  // A reversed run over 0..5 (output walks backwards) in inner chunks of 4; the array ends at 6.
  const std::vector<AxisRun> runs = {AxisRun{0, 1, 6, 5, -1}};
  const auto parts = split_runs(runs, 4, 6);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].runs, (std::vector<AxisRun>{{0, 1, 4, 5, -1}}));
  EXPECT_EQ(parts[1].runs, (std::vector<AxisRun>{{0, 1, 2, 1, -1}}));
  EXPECT_TRUE(parts[0].covers);
  EXPECT_TRUE(parts[1].covers);  // 2 of its 4 positions are in the array, both selected
  // Separate single positions 0, 1, 2, 3 (a list) cover the inner chunk too.
  const std::vector<AxisRun> list = {{2, 1, 1, 0, 1}, {0, 1, 1, 1, 1}, {3, 1, 1, 2, 1}, {1, 1, 1, 3, 1}};
  EXPECT_TRUE(split_runs(list, 4, 8)[0].covers);
  EXPECT_FALSE(split_runs(std::span(list).first(3), 4, 8)[0].covers);
}

// ---- Round trips against a reference --------------------------------------------------------

struct Layout {
  Shape shape, shards;
  json codecs;
  std::string what;
};

std::vector<Layout> layouts() {
  const json zstd = {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}};
  return {
      {{37}, {16}, json::array({sharding({4})}), "1-d, ragged, index at end"},
      {{37}, {16}, json::array({sharding({4}, json::array({kLittle, zstd}), "start")}), "1-d, zstd, index at start"},
      {{13, 11}, {6, 8}, json::array({sharding({3, 2})}), "2-d ragged"},
      {{13, 11}, {6, 8}, json::array({sharding({3, 2}, json::array({kLittle}), "start")}), "2-d, index at start"},
      {{9, 10, 7}, {4, 4, 4}, json::array({sharding({2, 2, 1})}), "3-d"},
      {{20, 18}, {8, 8}, json::array({sharding({4, 4}, json::array({sharding({2, 2})}))}), "nested"},
      {{20, 18},
       {8, 8},
       json::array({sharding({4, 4}, json::array({sharding({2, 1}, json::array({kLittle, zstd}), "start")}), "start")}),
       "nested, index at start on both levels"},
      {{12, 10},
       {6, 4},
       // the inner chunk shape applies to the transposed shard [4, 6]
       json::array({{{"name", "transpose"}, {"configuration", {{"order", {1, 0}}}}}, sharding({2, 3})}),
       "transpose before sharding (whole shards)"},
  };
}

void PrintTo(const Layout& layout, std::ostream* os) { *os << layout.what; }

class ShardRoundTrip : public ::testing::TestWithParam<Layout> {};

TEST_P(ShardRoundTrip, RandomWritesAndReadsMatchAReference) {
  const Layout& layout = GetParam();
  auto memory = MemoryStore::create();
  const ArrayMetadata m = sharded_metadata(layout.shape, layout.shards, layout.codecs, DataType::int_(32), 7);
  Array array = Array::create(memory, "a", m);
  std::vector<std::int32_t> reference(checked_num_elements(layout.shape), 7);
  std::mt19937_64 rng(std::hash<std::string>{}(layout.what));
  for (int round = 0; round < 150; ++round) {
    const Selection sel = random_selection(rng, layout.shape);
    const auto axes = reference_axes(sel, layout.shape);
    const Shape out_shape = array.selection_shape(sel);
    Shape region;
    for (const auto& ax : axes) region.push_back(ax.indices.size());
    SCOPED_TRACE(describe_selection(sel));
    if (round % 3 != 2) {
      // Writes: some values, some of them the fill value so that inner chunks empty out.
      NDBuffer data = NDBuffer::allocate(out_shape, DataType::int_(32));
      auto* p = reinterpret_cast<std::int32_t*>(data.data());
      const bool fill_round = round % 5 == 0;
      for (std::uint64_t i = 0; i < data.num_elements(); ++i) {
        p[i] = fill_round ? 7 : static_cast<std::int32_t>(rng() % 1000);
      }
      array.write(sel, data.view());
      std::uint64_t k = 0;
      for_each_index(region, [&](const std::vector<std::uint64_t>& at) {
        std::vector<std::uint64_t> coords;
        for (std::size_t a = 0; a < at.size(); ++a) coords.push_back(axes[a].indices[at[a]]);
        reference[testing::linear_index(coords, layout.shape)] = p[k++];
      });
    } else {
      const NDBuffer got = array.read(sel);
      const auto values = as_int32(got);
      std::uint64_t k = 0;
      for_each_index(region, [&](const std::vector<std::uint64_t>& at) {
        std::vector<std::uint64_t> coords;
        for (std::size_t a = 0; a < at.size(); ++a) coords.push_back(axes[a].indices[at[a]]);
        ASSERT_EQ(values[k++], reference[testing::linear_index(coords, layout.shape)]) << "round " << round;
      });
    }
  }
  EXPECT_EQ(as_int32(array.read()), reference);
  expect_canonical_shards(*memory, m);
}

INSTANTIATE_TEST_SUITE_P(Layouts, ShardRoundTrip, ::testing::ValuesIn(layouts()),
                         [](const auto& info) { return "layout" + std::to_string(info.index); });

// ---- Writes ---------------------------------------------------------------------------------

TEST(ShardWrite, WholeArrayEqualsTheCodecsEncoding) {
  auto memory = MemoryStore::create();
  for (const std::string location : {"start", "end"}) {
    const ArrayMetadata m = sharded_metadata({8, 12}, {4, 6}, json::array({sharding({2, 3}, json::array({kLittle}), location)}));
    Array array = Array::create(memory, location, m, true);
    const NDBuffer values = int32_values({8, 12}, 1);
    array.write({}, values.view());
    for (std::uint64_t i = 0; i < 2; ++i) {
      for (std::uint64_t j = 0; j < 2; ++j) {
        const Selection block = {Slice{std::int64_t(4 * i), std::int64_t(4 * i + 4), 1},
                                 Slice{std::int64_t(6 * j), std::int64_t(6 * j + 6), 1}};
        const Buffer expected = m.codecs->encode(array.read(block), m.chunk_spec());
        EXPECT_EQ(bytes_of(*memory, fmt::format("{}/c/{}/{}", location, i, j)), as_chars(expected.view()));
      }
    }
  }
}

TEST(ShardWrite, ShardOfOnlyFillValueIsDeleted) {
  auto memory = MemoryStore::create();
  const ArrayMetadata m = sharded_metadata({8}, {4}, json::array({sharding({2})}));
  Array array = Array::create(memory, "", m);
  array.write({}, int32_values({8}, 1).view());
  ASSERT_NE(bytes_of(*memory, "c/0"), "<absent>");
  // Clearing one inner chunk keeps the shard; clearing the other deletes it.
  const NDBuffer zeros = NDBuffer::filled({2}, DataType::int_(32), FillValue::zero(DataType::int_(32)));
  array.write({Slice{0, 2, 1}}, zeros.view());
  ASSERT_NE(bytes_of(*memory, "c/0"), "<absent>");
  array.write({Slice{2, 4, 1}}, zeros.view());
  EXPECT_EQ(bytes_of(*memory, "c/0"), "<absent>");
  EXPECT_NE(bytes_of(*memory, "c/1"), "<absent>");
  // A whole-array write of zeros deletes every shard.
  array.write({}, NDBuffer::filled({8}, DataType::int_(32), FillValue::zero(DataType::int_(32))).view());
  EXPECT_EQ(memory->list(), std::vector<std::string>{"zarr.json"});
}

TEST(ShardWrite, WriteEmptyChunksKeepsFillInnerChunks) {
  auto memory = MemoryStore::create();
  const ArrayMetadata m = sharded_metadata({8}, {4}, json::array({sharding({2})}));
  Array array = Array::create(memory, "", m);
  ScopedConfig keep([](Config& c) { c.write_empty_chunks = true; });
  array.write({Slice{0, 2, 1}}, NDBuffer::filled({2}, DataType::int_(32), FillValue::zero(DataType::int_(32))).view());
  const auto shard = memory->get("c/0");
  ASSERT_TRUE(shard);
  const auto& codec = codec_of(m);
  const ShardLayout lay = codec.layout(m.chunk_spec());
  const auto entries = codec.decode_index(shard->view().last(lay.index_size), lay, shard->size());
  EXPECT_FALSE(entries[0].is_empty());
  EXPECT_TRUE(entries[1].is_empty());
}

// Untouched inner chunks are copied, not decoded: garbage in one of them survives a write to
// another, byte for byte, and the write succeeds.
TEST(ShardWrite, UntouchedInnerChunksAreCopiedAsTheyAre) {
  auto memory = MemoryStore::create();
  const ArrayMetadata m = sharded_metadata({8}, {8}, json::array({sharding({2})}));
  Array array = Array::create(memory, "", m);
  array.write({}, int32_values({8}, 1).view());
  // Rebuild the shard with a 5-byte inner chunk 3: `bytes` cannot decode it (it needs 8).
  const auto& codec = codec_of(m);
  const ShardLayout lay = codec.layout(m.chunk_spec());
  const auto old = memory->get("c/0");
  auto entries = codec.decode_index(old->view().last(lay.index_size), lay, old->size());
  std::string data(as_chars(old->view().first(old->size() - lay.index_size)));
  data += "JUNK!";
  entries[3] = {data.size() - 5, 5};
  NDBuffer index = NDBuffer::allocate(lay.index_spec.shape, lay.index_spec.dtype);
  std::memcpy(index.data(), entries.data(), 16 * entries.size());
  const Buffer encoded_index = codec.index_codecs().encode(index, lay.index_spec);
  memory->set("c/0", as_bytes(data + std::string(as_chars(encoded_index.view()))));
  EXPECT_THROW(array.read({Slice{6, 8, 1}}), DataLossError);

  array.write({Slice{0, 3, 1}}, int32_values({3}, 100).view());  // inner chunks 0 and 1
  const auto updated = memory->get("c/0");
  const auto new_entries = codec.decode_index(updated->view().last(lay.index_size), lay, updated->size());
  EXPECT_EQ(as_chars(updated->view().subspan(new_entries[3].offset, new_entries[3].nbytes)), "JUNK!");
  EXPECT_EQ(as_int32(array.read({Slice{0, 6, 1}})), (std::vector<std::int32_t>{100, 101, 102, 4, 5, 6}));
}

TEST(ShardWrite, ConcurrentPartialWritesLoseNoUpdate) {
  for (const bool whole_shards : {false, true}) {
    auto memory = MemoryStore::create();
    const json codecs = whole_shards ? json::array({{{"name", "transpose"}, {"configuration", {{"order", {0}}}}},
                                                    sharding({4})})
                                     : json::array({sharding({4})});
    const ArrayMetadata m = sharded_metadata({256}, {256}, codecs);
    Array array = Array::create(memory, "", m);
    constexpr int kThreads = 8;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        // Every thread writes its own elements, one at a time, all in the one shard.
        for (std::int64_t i = t; i < 256; i += kThreads) {
          const NDBuffer one = int32_values({1}, static_cast<std::int32_t>(1000 + i));
          array.write({Slice{i, i + 1, 1}}, one.view());
        }
      });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(as_int32(array.read()), as_int32(int32_values({256}, 1000))) << (whole_shards ? "whole" : "partial");
  }
}

// ---- What reads fetch -----------------------------------------------------------------------

struct CountingFixture {
  std::shared_ptr<MemoryStore> memory = MemoryStore::create();
  std::shared_ptr<CountingStore> counting = std::make_shared<CountingStore>(memory);
};

TEST(ShardRead, FetchesTheIndexThenOnlyTheInnerChunksNeeded) {
  CountingFixture f;
  // 1-d: one shard of 16 int32 in 8 inner chunks of 2 (8 bytes each, stored in order).
  const ArrayMetadata m = sharded_metadata({16}, {16}, json::array({sharding({2})}));
  Array::create(f.memory, "", m).write({}, int32_values({16}, 1).view());
  Array array = Array::open(f.counting);
  const std::uint64_t index_size = 8 * 16 + 4;

  f.counting->reset();
  EXPECT_EQ(as_int32(array.read({Slice{5, 6, 1}})), std::vector<std::int32_t>{6});
  EXPECT_EQ(f.counting->chunk_fetches(), (std::vector<Fetched>{{"c/0", {last(index_size)}},
                                                                {"c/0", {range(16, 24)}}}));

  // Inner chunks 0 and 2 with the 8 bytes of chunk 1 between them: merged under a gap of 8...
  f.counting->reset();
  {
    ScopedConfig gap([](Config& c) { c.shard_coalesce_gap_bytes = 8; });
    Array a = Array::open(f.counting);
    EXPECT_EQ(as_int32(a.read({Slice{1, 6, 4}})), (std::vector<std::int32_t>{2, 6}));
  }
  EXPECT_EQ(f.counting->chunk_fetches(), (std::vector<Fetched>{{"c/0", {last(index_size)}},
                                                                {"c/0", {range(0, 24)}}}));
  // ...and fetched as two ranges (one request) under a smaller gap.
  f.counting->reset();
  {
    ScopedConfig gap([](Config& c) { c.shard_coalesce_gap_bytes = 7; });
    Array a = Array::open(f.counting);
    EXPECT_EQ(as_int32(a.read({Slice{1, 6, 4}})), (std::vector<std::int32_t>{2, 6}));
  }
  EXPECT_EQ(f.counting->chunk_fetches(),
            (std::vector<Fetched>{{"c/0", {last(index_size)}},
                                  {"c/0", {range(0, 8), range(16, 24)}}}));

  // The whole shard: one get, no ranges.
  f.counting->reset();
  EXPECT_EQ(as_int32(array.read()), as_int32(int32_values({16}, 1)));
  EXPECT_EQ(f.counting->chunk_fetches(), (std::vector<Fetched>{{"c/0", {}}}));
}

TEST(ShardRead, EmptyInnerChunksAndAbsentShardsCostNoDataFetch) {
  CountingFixture f;
  const ArrayMetadata m = sharded_metadata({32}, {16}, json::array({sharding({2}, json::array({kLittle}), "start")}), DataType::int_(32), -5);
  Array writer = Array::create(f.memory, "", m);
  writer.write({Slice{0, 2, 1}}, int32_values({2}, 1).view());  // inner chunk 0 of shard 0 only
  Array array = Array::open(f.counting);
  f.counting->reset();
  EXPECT_EQ(as_int32(array.read({Slice{4, 6, 1}})), (std::vector<std::int32_t>{-5, -5}));  // an empty entry
  EXPECT_EQ(f.counting->chunk_fetches(), (std::vector<Fetched>{{"c/0", {range(0, 8 * 16 + 4)}}}));
  f.counting->reset();
  EXPECT_EQ(as_int32(array.read({Slice{20, 22, 1}})), (std::vector<std::int32_t>{-5, -5}));  // no shard c/1
  EXPECT_EQ(f.counting->chunk_fetches(), (std::vector<Fetched>{{"c/1", {range(0, 8 * 16 + 4)}}}));
}

TEST(ShardRead, NestedShardsAreReadInPartToo) {
  CountingFixture f;
  // Shards of 16 = 2 inner shards of 8 = 4 inner chunks of 2 each (int32, raw bytes).
  const ArrayMetadata m = sharded_metadata({16}, {16}, json::array({sharding({8}, json::array({sharding({2})}))}));
  Array::create(f.memory, "", m).write({}, int32_values({16}, 1).view());
  Array array = Array::open(f.counting);
  f.counting->reset();
  EXPECT_EQ(as_int32(array.read({Slice{11, 12, 1}})), std::vector<std::int32_t>{12});
  // Outer index (2 entries + crc), then the nested shard 1's index (4 entries + crc) at the
  // end of its range, then the one inner chunk.
  const auto fetches = f.counting->chunk_fetches();
  ASSERT_EQ(fetches.size(), 3u);
  EXPECT_EQ(fetches[0], (Fetched{"c/0", {last(2 * 16 + 4)}}));
  const std::uint64_t inner_shard_size = 4 * 8 + 4 * 16 + 4;  // 100 bytes, stored second
  EXPECT_EQ(fetches[1], (Fetched{"c/0", {range(2 * inner_shard_size - 68, 2 * inner_shard_size)}}));
  EXPECT_EQ(fetches[2], (Fetched{"c/0", {range(inner_shard_size + 8, inner_shard_size + 16)}}));
}

// ---- Bad shards: partial and whole reads give the typed errors ------------------------------

class BadShard : public ::testing::Test {
 protected:
  void SetUp() override {
    m_ = sharded_metadata({8}, {8}, json::array({sharding({2})}));
    Array::create(memory_, "", m_).write({}, int32_values({8}, 1).view());
    lay_ = codec_of(m_).layout(m_.chunk_spec());
    const auto shard = memory_->get("c/0");
    data_ = std::string(as_chars(shard->view().first(shard->size() - lay_.index_size)));
    entries_ = codec_of(m_).decode_index(shard->view().last(lay_.index_size), lay_, shard->size());
  }
  std::string index_bytes(const std::vector<ShardIndexEntry>& entries) {
    NDBuffer index = NDBuffer::allocate(lay_.index_spec.shape, lay_.index_spec.dtype);
    std::memcpy(index.data(), entries.data(), 16 * entries.size());
    return std::string(as_chars(codec_of(m_).index_codecs().encode(index, lay_.index_spec).view()));
  }
  void store_shard(const std::string& bytes) { memory_->set("c/0", as_bytes(bytes)); }
  // A partial read (index + ranges) and a whole read must both fail with `Expected`.
  // So must a whole read through a reader that reads the value in parts.
  template <typename Expected>
  void expect_both_fail(const std::string& what) {
    Array array = Array::open(memory_);
    EXPECT_THROW(array.read({Slice{2, 3, 1}}), Expected) << what << " (partial read)";
    EXPECT_THROW(array.read(), Expected) << what << " (whole read)";
    EXPECT_THROW(Array::open(std::make_shared<StreamingStore>(memory_)).read(), Expected)
        << what << " (whole read in parts)";
  }

  std::shared_ptr<MemoryStore> memory_ = MemoryStore::create();
  ArrayMetadata m_;
  ShardLayout lay_;
  std::string data_;
  std::vector<ShardIndexEntry> entries_;
};

TEST_F(BadShard, ShorterThanItsIndex) {
  store_shard(std::string(10, 'x'));
  expect_both_fail<DataLossError>("10-byte shard");
  store_shard("");
  expect_both_fail<DataLossError>("empty shard");
}

TEST_F(BadShard, EntryPastTheEnd) {
  entries_[1] = {data_.size() - 4, 8};  // reaches 4 bytes into the index
  store_shard(data_ + index_bytes(entries_));
  Array array = Array::open(memory_);
  EXPECT_THROW(array.read(), DataLossError);
  EXPECT_THROW(Array::open(std::make_shared<StreamingStore>(memory_)).read(), DataLossError);
  entries_[1] = {data_.size() + 1000, 8};  // past the end of the value
  store_shard(data_ + index_bytes(entries_));
  expect_both_fail<DataLossError>("entry past the end");
}

TEST_F(BadShard, EntryOverflowing) {
  entries_[1] = {~std::uint64_t{0} - 3, 8};
  store_shard(data_ + index_bytes(entries_));
  expect_both_fail<DataLossError>("offset + nbytes overflows");
}

TEST_F(BadShard, IndexChecksumMismatch) {
  std::string index = index_bytes(entries_);
  index[5] ^= 0x01;
  store_shard(data_ + index);
  expect_both_fail<DataLossError>("crc32c mismatch");
}

TEST_F(BadShard, OnlyOneSentinelFieldSet) {
  entries_[1] = {kShardEntryEmpty, 8};
  store_shard(data_ + index_bytes(entries_));
  expect_both_fail<DataLossError>("offset 2^64-1 with nbytes 8");
  entries_[1] = {8, kShardEntryEmpty};
  store_shard(data_ + index_bytes(entries_));
  expect_both_fail<DataLossError>("nbytes 2^64-1 with offset 8");
}

TEST_F(BadShard, InnerChunkOfTheWrongSize) {
  entries_[1] = {entries_[1].offset, 4};  // raw int32 pair needs 8 bytes
  store_shard(data_ + index_bytes(entries_));
  expect_both_fail<DataLossError>("4-byte inner chunk");
}

// The value ends before the bytes its index points at (cut short after it was opened): a
// whole read in parts fails, whether it reads an inner chunk straight into the output (raw,
// 16 KiB) or a window of encoded bytes (zstd; raw inner chunks of 64 bytes).
TEST(ShardReadInParts, AValueCutShortIsDataLoss) {
  const json zstd = {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}};
  for (const std::uint64_t row : {std::uint64_t{4096}, std::uint64_t{16}}) {
    for (const json& inner : {json::array({kLittle}), json::array({kLittle, zstd})}) {
      auto memory = MemoryStore::create();
      const ArrayMetadata m = sharded_metadata({2, row}, {2, row}, json::array({sharding({1, row}, inner, "start")}));
      Array::create(memory, "", m).write({}, int32_values({2, row}, 1).view());
      auto streaming = std::make_shared<StreamingStore>(memory);
      streaming->shrink_to = memory->get("c/0/0")->size() - 1;  // the last inner chunk's last byte
      EXPECT_THROW(Array::open(streaming).read(), DataLossError) << inner.dump() << " rows of " << row;
    }
  }
}

// An index entry whose size is not a raw inner chunk's: the same DataLossError as decoding
// gives, naming the inner chunk, before anything is read into the output.
TEST(ShardReadInParts, RawInnerChunkOfTheWrongSizeIsDataLoss) {
  auto memory = MemoryStore::create();
  const ArrayMetadata m = sharded_metadata({2, 4096}, {2, 4096}, json::array({sharding({1, 4096})}));
  Array::create(memory, "", m).write({}, int32_values({2, 4096}, 1).view());
  const ShardLayout lay = codec_of(m).layout(m.chunk_spec());
  const auto shard = memory->get("c/0/0");
  auto entries = codec_of(m).decode_index(shard->view().last(lay.index_size), lay, shard->size());
  entries[1].nbytes -= 4;
  NDBuffer index = NDBuffer::allocate(lay.index_spec.shape, lay.index_spec.dtype);
  std::memcpy(index.data(), entries.data(), 16 * entries.size());
  const Buffer encoded_index = codec_of(m).index_codecs().encode(index, lay.index_spec);
  memory->set("c/0/0", as_bytes(std::string(as_chars(shard->view().first(shard->size() - lay.index_size))) +
                                std::string(as_chars(encoded_index.view()))));
  try {
    Array::open(std::make_shared<StreamingStore>(memory)).read();
    ADD_FAILURE() << "read a 16380-byte raw inner chunk of 4096 int32";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("inner chunk (1,0)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("must be 16384 bytes, got 16380"), std::string::npos) << e.what();
  }
}

TEST_F(BadShard, AWriteToACorruptShardFailsAndLeavesItAsItWas) {
  std::string index = index_bytes(entries_);
  index[0] ^= 0x01;
  store_shard(data_ + index);
  Array array = Array::open(memory_);
  EXPECT_THROW(array.write({Slice{2, 3, 1}}, int32_values({1}, 5).view()), DataLossError);
  EXPECT_EQ(bytes_of(*memory_, "c/0"), data_ + index);
}

// ---- Whole shards read in parts ----------------------------------------------------------------

// Values read through a StreamingStore (whole shards read a window at a time, raw inner
// chunks into the output) equal those read from memory, where the whole shard is at hand,
// for every layout of the round trips, whole and for random selections, with windows small
// enough that a shard takes many.
TEST(ShardReadInParts, ValuesEqualThoseReadFromMemory) {
  for (const Layout& layout : layouts()) {
    SCOPED_TRACE(layout.what);
    auto memory = MemoryStore::create();
    const ArrayMetadata m = sharded_metadata(layout.shape, layout.shards, layout.codecs, DataType::int_(32), 7);
    Array writer = Array::create(memory, "a", m);
    std::mt19937_64 rng(std::hash<std::string>{}(layout.what));
    NDBuffer values = NDBuffer::allocate(layout.shape, DataType::int_(32));
    auto* p = reinterpret_cast<std::int32_t*>(values.data());
    for (std::uint64_t i = 0; i < values.num_elements(); ++i) p[i] = rng() % 4 == 0 ? 7 : static_cast<std::int32_t>(rng() % 1000);
    writer.write({}, values.view());
    // The first inner chunks hold only the fill value: not stored.
    const Selection first = {Slice{0, 3, 1}};
    writer.write(first, NDBuffer::filled(writer.selection_shape(first), DataType::int_(32), FillValue::of<std::int32_t>(7)).view());

    auto streaming = std::make_shared<StreamingStore>(memory);
    ScopedConfig window([](Config& c) { c.shard_read_window_bytes = 40; });
    const Array from_memory = Array::open(memory, "a");
    const Array in_parts = Array::open(streaming, "a");
    EXPECT_EQ(as_int32(in_parts.read()), as_int32(from_memory.read()));
    for (int round = 0; round < 40; ++round) {
      const Selection sel = random_selection(rng, layout.shape);
      EXPECT_EQ(as_int32(in_parts.read(sel)), as_int32(from_memory.read(sel))) << describe_selection(sel);
    }
    if (layout.what.find("transpose") == std::string::npos) {  // read whole through the chain: no reader
      EXPECT_FALSE(streaming->reads().empty());
    }
  }
}

// Inner chunks stored raw that fill a block of the output laid out like themselves are read
// straight into that block, one read each, and the shard is never fetched whole; the values
// equal those of the same array unsharded.
TEST(ShardReadInParts, RawInnerChunksAreReadStraightIntoTheOutput) {
  auto memory = MemoryStore::create();
  const Shape shape = {4, 64, 64};  // inner chunks of 16 KiB: large enough for reads of their own
  const NDBuffer values = int32_values(shape, 1);
  Array::create(memory, "sharded", sharded_metadata(shape, {2, 64, 64}, json::array({sharding({1, 64, 64})})))
      .write({}, values.view());
  Array::create(memory, "plain", sharded_metadata(shape, {1, 64, 64}, json::array({kLittle}))).write({}, values.view());
  auto streaming = std::make_shared<StreamingStore>(memory);
  const Array array = Array::open(streaming, "sharded");
  streaming->reset();

  NDBuffer out = NDBuffer::allocate(shape, DataType::int_(32));
  array.read_into({}, out.view());
  EXPECT_EQ(as_int32(out), as_int32(Array::open(memory, "plain").read()));
  EXPECT_TRUE(streaming->chunk_fetches().empty());  // no get, whole or ranged: all through readers

  const std::uint64_t inner_bytes = 64 * 64 * 4;
  const std::uint64_t index_size = 2 * 16 + 4;  // 2 inner chunks per shard, and the crc32c
  std::vector<std::uint64_t> inner_offsets;  // where in the output each inner chunk went
  for (const auto& read : streaming->reads()) {
    if (read.size == index_size) continue;
    EXPECT_EQ(read.size, inner_bytes);
    ASSERT_GE(read.dest, out.data());
    ASSERT_LT(read.dest, out.data() + out.nbytes());
    inner_offsets.push_back(static_cast<std::uint64_t>(read.dest - out.data()));
  }
  std::sort(inner_offsets.begin(), inner_offsets.end());
  EXPECT_EQ(inner_offsets, (std::vector<std::uint64_t>{0, inner_bytes, 2 * inner_bytes, 3 * inner_bytes}));

  // A selection of part of the shards reads only what it needs, by ranges, as before.
  streaming->reset();
  streaming->reset_reads();
  EXPECT_EQ(as_int32(array.read({Slice{1, 2, 1}})), as_int32(Array::open(memory, "plain").read({Slice{1, 2, 1}})));
  EXPECT_TRUE(streaming->reads().empty());
  EXPECT_EQ(streaming->chunk_fetches().size(), 2u);  // the index, then the inner chunk
}

// Compressed inner chunks of a whole shard are read a window at a time: no read is larger
// than the window (or than one inner chunk, when that is larger), the windows together read
// each stored byte once, and the values equal the unsharded array's.
TEST(ShardReadInParts, CompressedInnerChunksAreReadInBoundedWindows) {
  const json zstd = {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}};
  auto memory = MemoryStore::create();
  const Shape shape = {64, 32};
  NDBuffer values = NDBuffer::allocate(shape, DataType::int_(32));
  std::mt19937_64 rng(5);
  auto* p = reinterpret_cast<std::int32_t*>(values.data());
  for (std::uint64_t i = 0; i < values.num_elements(); ++i) p[i] = static_cast<std::int32_t>(rng() % 100000);
  const ArrayMetadata m = sharded_metadata(shape, {32, 32}, json::array({sharding({4, 32}, json::array({kLittle, zstd}))}));
  Array::create(memory, "sharded", m).write({}, values.view());
  Array::create(memory, "plain", sharded_metadata(shape, {4, 32}, json::array({kLittle, zstd}))).write({}, values.view());

  constexpr std::uint64_t kWindow = 1024;
  ScopedConfig window([](Config& c) { c.shard_read_window_bytes = kWindow; });
  auto streaming = std::make_shared<StreamingStore>(memory);
  const Array array = Array::open(streaming, "sharded");
  streaming->reset();
  EXPECT_EQ(as_int32(array.read()), as_int32(Array::open(memory, "plain").read()));
  EXPECT_TRUE(streaming->chunk_fetches().empty());

  const ShardLayout lay = codec_of(m).layout(m.chunk_spec());
  std::uint64_t largest_inner = 0;
  std::uint64_t stored = 0;  // inner chunk bytes of both shards
  for (const std::string key : {"sharded/c/0/0", "sharded/c/1/0"}) {
    const auto shard = memory->get(key);
    for (const auto& e : codec_of(m).decode_index(shard->view().last(lay.index_size), lay, shard->size())) {
      ASSERT_FALSE(e.is_empty());
      largest_inner = std::max(largest_inner, e.nbytes);
      stored += e.nbytes;
    }
  }
  ASSERT_LT(largest_inner, kWindow);
  ASSERT_GT(stored, 4 * kWindow);  // several windows per shard
  std::uint64_t read_bytes = 0;
  std::size_t windows = 0;
  for (const auto& read : streaming->reads()) {
    if (read.size == lay.index_size) continue;
    EXPECT_LE(read.size, kWindow);
    read_bytes += read.size;
    ++windows;
  }
  EXPECT_EQ(read_bytes, stored);
  EXPECT_GE(windows, 6u);
}

// Whole reads in parts of shards with empty inner chunks and of absent shards: the fill
// value, and no read of an absent shard.
TEST(ShardReadInParts, EmptyInnerChunksAndAbsentShardsReadAsTheFillValue) {
  auto memory = MemoryStore::create();
  const ArrayMetadata m = sharded_metadata({32}, {16}, json::array({sharding({4})}), DataType::int_(32), -5);
  Array::create(memory, "", m).write({Slice{4, 8, 1}}, int32_values({4}, 1).view());  // shard 0, inner chunk 1
  auto streaming = std::make_shared<StreamingStore>(memory);
  std::vector<std::int32_t> expected(32, -5);
  for (int i = 0; i < 4; ++i) expected[4 + i] = 1 + i;
  EXPECT_EQ(as_int32(Array::open(streaming).read()), expected);
  EXPECT_EQ(streaming->reads().size(), 2u);  // shard 0's index and its one inner chunk
}

// The same through LocalStore, whose reader preads the file: raw and compressed inner
// chunks, whole and in part, equal the unsharded array.
TEST(ShardReadInParts, LocalStoreValuesEqualTheUnshardedArray) {
  static std::atomic<int> counter{0};
  const auto dir = std::filesystem::temp_directory_path() /
                   fmt::format("zarrkit-shard-read-test-{}-{}", ::getpid(), counter++);
  std::filesystem::remove_all(dir);
  const json zstd = {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}};
  {
    auto store = LocalStore::open(dir);
    const Shape shape = {12, 10, 16};
    const NDBuffer values = int32_values({8, 10, 16}, -300);
    for (const json& inner : {json::array({kLittle}), json::array({kLittle, zstd})}) {
      SCOPED_TRACE(inner.dump());
      Array::create(store, "s", sharded_metadata(shape, {4, 10, 16}, json::array({sharding({1, 5, 16}, inner)})), true)
          .write({Slice{0, 8, 1}}, values.view());  // the last shard stays absent
      Array::create(store, "p", sharded_metadata(shape, {1, 5, 16}, inner), true).write({Slice{0, 8, 1}}, values.view());
      ScopedConfig window([](Config& c) { c.shard_read_window_bytes = 1000; });
      const Array sharded = Array::open(store, "s");
      const Array plain = Array::open(store, "p");
      EXPECT_EQ(as_int32(sharded.read()), as_int32(plain.read()));
      const Selection part = {Slice{3, 11, 2}, Slice{1, 9, 1}, Slice{}};
      EXPECT_EQ(as_int32(sharded.read(part)), as_int32(plain.read(part)));
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(ShardOpen, InnerChunkShapeNotDividingTheShardIsRefused) {
  auto memory = MemoryStore::create();
  json doc = {{"zarr_format", 3},   {"node_type", "array"},  {"shape", {12}}, {"data_type", "int32"},
              {"fill_value", 0},    {"attributes", json::object()},
              {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {6}}}}}},
              {"chunk_key_encoding", {{"name", "default"}}},
              {"codecs", json::array({sharding({4})})}};
  memory->set("zarr.json", as_bytes(doc.dump()));
  EXPECT_THROW(Array::open(memory), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
