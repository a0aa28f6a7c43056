// Reads through the decoded-chunk cache: hits that touch no store, eviction within the
// budget, every write path dropping what it changes, sharded arrays caching inner chunks,
// stores and arrays kept apart, concurrent readers, and a budget of 0 meaning no cache.
#include "engine/cached_reads.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <numeric>
#include <random>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/checked_math.h"
#include "engine/array_testing.h"
#include "stores/wrappers/fault_injection_store.h"
#include "zarrkit/chunk_cache.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;
using Op = FaultInjectionStore::Operation;

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() / fmt::format("zarrkit-cache-test-{}-{}", ::getpid(), counter++);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Every test starts with an empty process cache of 64 MiB, and leaves none. stats() counts
// from the start of the test (the process's counters run on across tests).
class CachedReads : public testing::Test {
 protected:
  void use_budget(std::uint64_t budget) {
    clear_chunk_caches();
    global_config().cache.host_bytes = budget;
  }
  void SetUp() override {
    use_budget(std::uint64_t{64} << 20);
    start_ = chunk_cache_stats();
  }
  void TearDown() override {
    global_config().cache = CacheConfig{};
    clear_chunk_caches();
    process_chunk_cache(0);
  }
  ChunkCacheStats stats() const {
    ChunkCacheStats s = chunk_cache_stats();
    s.hits -= start_.hits;
    s.misses -= start_.misses;
    s.insertions -= start_.insertions;
    s.evictions -= start_.evictions;
    s.invalidations -= start_.invalidations;
    s.dropped -= start_.dropped;
    return s;
  }

 private:
  ChunkCacheStats start_;
};

json sharded_codecs(const Shape& inner) {
  return json::array({{{"name", "sharding_indexed"},
                       {"configuration",
                        {{"chunk_shape", inner},
                         {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                                 {{"name", "zstd"}, {"configuration", {{"level", 1}}}}})},
                         {"index_codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                                       {{"name", "crc32c"}}})}}}}});
}

// A 2-D int32 array of `shape` in `chunks` (zstd, or sharded with `inner` chunks), holding
// 0, 1, 2, ... in C order.
Array make_array(const std::shared_ptr<Store>& store, const std::string& path, Shape shape, Shape chunks,
                 std::optional<Shape> inner = std::nullopt) {
  ArraySpec spec;
  spec.shape = shape;
  spec.chunks = chunks;
  spec.dtype = DataType::int_(32);
  if (inner) spec.codecs = sharded_codecs(*inner);
  Array a = Array::create(store, path, make_array_metadata(spec, CodecRegistry::builtin()), /*overwrite=*/true);
  std::vector<std::int32_t> values(to_size(shape[0] * shape[1]));
  std::iota(values.begin(), values.end(), 0);
  a.write({}, view_of(values, shape, a.dtype()));
  return a;
}

std::vector<std::int32_t> read(const Array& a, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
  return values_of<std::int32_t>(a.read({Slice{r0, r1}, Slice{c0, c1}}));
}

// What `make_array` wrote there (cols: the array's width).
std::vector<std::int32_t> expected(std::int64_t cols, std::int64_t r0, std::int64_t r1, std::int64_t c0,
                                   std::int64_t c1) {
  std::vector<std::int32_t> out;
  for (std::int64_t r = r0; r < r1; ++r) {
    for (std::int64_t c = c0; c < c1; ++c) out.push_back(static_cast<std::int32_t>(r * cols + c));
  }
  return out;
}

TEST_F(CachedReads, ASecondReadOfTheSameChunksTouchesNoStore) {
  auto counted = std::make_shared<FaultInjectionStore>(std::make_shared<MemoryStore>());
  const Array a = make_array(counted, "a", {64, 64}, {16, 16});
  EXPECT_EQ(read(a, 10, 30, 5, 40), expected(64, 10, 30, 5, 40));
  const std::uint64_t gets = counted->calls(Op::kGet);
  const ChunkCacheStats first = stats();
  EXPECT_EQ(first.misses, 6u);  // rows 0..1, columns 0..2 of the chunk grid
  EXPECT_EQ(first.entries, 6u);
  // Another window over the same chunks, and the first again: no store call at all.
  EXPECT_EQ(read(a, 12, 31, 0, 47), expected(64, 12, 31, 0, 47));
  EXPECT_EQ(read(a, 10, 30, 5, 40), expected(64, 10, 30, 5, 40));
  EXPECT_EQ(counted->calls(Op::kGet), gets);
  EXPECT_EQ(stats().hits, first.hits + 12);
  // A window reaching one chunk further fetches that chunk alone.
  EXPECT_EQ(read(a, 12, 33, 0, 47), expected(64, 12, 33, 0, 47));
  EXPECT_EQ(counted->calls(Op::kGet), gets + 3);  // row 2 of the grid, columns 0..2
}

// Small outputs copy their hits on the calling thread and large ones on the pool
// (array.cpp): both give the same values and touch no store.
TEST_F(CachedReads, LargeAndSmallReadsOfCachedChunksCopyTheSameValues) {
  ScopedConfig threads([](Config& c) { c.num_threads = 4; });
  auto counted = std::make_shared<FaultInjectionStore>(std::make_shared<MemoryStore>());
  const Array a = make_array(counted, "a", {1536, 1024}, {512, 256});  // 6 MiB of int32
  EXPECT_EQ(read(a, 0, 1536, 0, 1024), expected(1024, 0, 1536, 0, 1024));
  const std::uint64_t gets = counted->calls(Op::kGet);
  EXPECT_EQ(stats().misses, 12u);
  EXPECT_EQ(read(a, 0, 1536, 0, 1024), expected(1024, 0, 1536, 0, 1024));  // above 4 MiB: the pool
  EXPECT_EQ(read(a, 500, 530, 250, 770), expected(1024, 500, 530, 250, 770));  // 8 chunks, the caller
  EXPECT_EQ(read(a, 1, 1535, 3, 1021), expected(1024, 1, 1535, 3, 1021));
  EXPECT_EQ(counted->calls(Op::kGet), gets);
  EXPECT_EQ(stats().hits, 12u + 8u + 12u);
}

TEST_F(CachedReads, AbsentChunksAreRememberedAsTheFillValue) {
  auto counted = std::make_shared<FaultInjectionStore>(std::make_shared<MemoryStore>());
  ArraySpec spec;
  spec.shape = {32, 32};
  spec.chunks = {16, 16};
  spec.dtype = DataType::int_(32);
  spec.fill_value = 7;
  const Array a = Array::create(counted, "a", make_array_metadata(spec, CodecRegistry::builtin()));
  EXPECT_EQ(read(a, 0, 32, 0, 32), std::vector<std::int32_t>(32 * 32, 7));
  const std::uint64_t gets = counted->calls(Op::kGet);
  EXPECT_EQ(read(a, 0, 32, 0, 32), std::vector<std::int32_t>(32 * 32, 7));
  EXPECT_EQ(counted->calls(Op::kGet), gets);
  // Written now: the write drops the remembered absence.
  std::vector<std::int32_t> one{5};
  Array(a).write({std::int64_t{3}, std::int64_t{4}}, view_of(one, {}, a.dtype()));
  EXPECT_EQ(read(a, 3, 4, 3, 6), (std::vector<std::int32_t>{7, 5, 7}));
}

TEST_F(CachedReads, TheLeastRecentlyUsedChunksGoToStayWithinTheBudget) {
  auto store = std::make_shared<MemoryStore>();
  const Array a = make_array(store, "a", {64, 64}, {16, 16});
  // Room for three 1 KiB chunks and their bookkeeping, not four.
  use_budget(3 * (1024 + 512));
  for (std::int64_t c = 0; c < 64; c += 16) EXPECT_EQ(read(a, 0, 16, c, c + 16), expected(64, 0, 16, c, c + 16));
  const ChunkCacheStats s = stats();
  EXPECT_EQ(s.entries, 3u);
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_LE(s.bytes, s.budget);
  // The first chunk went (the oldest); the last three are there.
  const std::uint64_t hits = s.hits;
  EXPECT_EQ(read(a, 0, 16, 16, 64), expected(64, 0, 16, 16, 64));
  EXPECT_EQ(stats().hits, hits + 3);
  EXPECT_EQ(read(a, 0, 16, 0, 16), expected(64, 0, 16, 0, 16));
  EXPECT_EQ(stats().misses, s.misses + 1);
}

TEST_F(CachedReads, ABudgetOfZeroIsNoCache) {
  use_budget(0);
  auto counted = std::make_shared<FaultInjectionStore>(std::make_shared<MemoryStore>());
  const Array a = make_array(counted, "a", {32, 32}, {16, 16});
  EXPECT_EQ(read(a, 0, 32, 0, 32), expected(32, 0, 32, 0, 32));
  const std::uint64_t gets = counted->calls(Op::kGet);
  EXPECT_EQ(read(a, 0, 32, 0, 32), expected(32, 0, 32, 0, 32));
  EXPECT_EQ(counted->calls(Op::kGet), gets + 4);
  EXPECT_EQ(stats().entries, 0u);
  EXPECT_EQ(stats().hits, 0u);
  // Turning it off empties what a read with a budget kept.
  use_budget(1 << 20);
  EXPECT_EQ(read(a, 0, 32, 0, 32), expected(32, 0, 32, 0, 32));
  EXPECT_EQ(stats().entries, 4u);
  global_config().cache.host_bytes = 0;
  EXPECT_EQ(read(a, 0, 16, 0, 16), expected(32, 0, 16, 0, 16));
  EXPECT_EQ(stats().entries, 0u);
}

TEST_F(CachedReads, EveryWritePathDropsWhatItChanges) {
  TempDir dir;
  auto store = LocalStore::open(dir.path());
  Array a = make_array(store, "g/a", {32, 32}, {16, 16});
  auto reread = [&](const Array& array) { return read(array, 0, 32, 0, 32); };
  std::vector<std::int32_t> want = expected(32, 0, 32, 0, 32);
  ASSERT_EQ(reread(a), want);

  // A chunk written in part, and one written whole.
  std::vector<std::int32_t> nine(16 * 16, 9);
  a.write({Slice{16, 32}, Slice{16, 32}}, view_of(nine, {16, 16}, a.dtype()));
  std::vector<std::int32_t> one{-1};
  a.write({std::int64_t{0}, std::int64_t{1}}, view_of(one, {}, a.dtype()));
  for (int r = 16; r < 32; ++r) {
    for (int c = 16; c < 32; ++c) want[to_size(r * 32 + c)] = 9;
  }
  want[1] = -1;
  EXPECT_EQ(reread(a), want);
  EXPECT_GE(stats().invalidations, 2u);

  // Through another store object on the same directory (and on a directory below it).
  const Array other = Array::open(LocalStore::open(dir.path() / "g"), "a");
  EXPECT_EQ(reread(other), want);
  Array(other).write({std::int64_t{2}, std::int64_t{2}}, view_of(one, {}, a.dtype()));
  want[2 * 32 + 2] = -1;
  EXPECT_EQ(reread(a), want);

  // Coordinates and masks.
  a.write_coordinates({CoordinateArray{0}, CoordinateArray{31}}, view_of(one, {1}, a.dtype()));
  want[31] = -1;
  EXPECT_EQ(reread(a), want);

  // Shrinking clears what lies past the new edge; growing back reads the fill value there.
  a.resize({20, 20});
  a.resize({32, 32});
  for (int r = 0; r < 32; ++r) {
    for (int c = 0; c < 32; ++c) {
      if (r >= 20 || c >= 20) want[to_size(r * 32 + c)] = 0;
    }
  }
  EXPECT_EQ(reread(Array::open(store, "g/a")), want);

  // Erased with its group, then created again with other values (and the same codecs).
  store->erase_prefix("g");
  EXPECT_THROW(Array::open(store, "g/a"), NotFoundError);
  const Array again = make_array(store, "g/a", {32, 32}, {16, 16});
  std::vector<std::int32_t> doubled(32 * 32);
  for (std::size_t i = 0; i < doubled.size(); ++i) doubled[i] = static_cast<std::int32_t>(2 * i);
  Array(again).write({}, view_of(doubled, {32, 32}, again.dtype()));
  EXPECT_EQ(reread(a), doubled);  // the old handle reads what is there now
}

TEST_F(CachedReads, AnArrayReplacedAroundTheStoreNeverReadsTheOldDecoding) {
  // Another program replaces the array with one of another chunking (whose chunk keys are
  // the same): this process's entries were made for the old one, and do not fit the new.
  TempDir dir;
  const Array a = make_array(LocalStore::open(dir.path() / "x"), "a", {32, 32}, {16, 16});
  ASSERT_EQ(read(a, 0, 32, 0, 32), expected(32, 0, 32, 0, 32));
  ASSERT_EQ(stats().entries, 4u);
  std::vector<std::int32_t> reversed = expected(32, 0, 32, 0, 32);
  std::reverse(reversed.begin(), reversed.end());
  Array other = make_array(LocalStore::open(dir.path() / "y"), "a", {32, 32}, {16, 32});
  other.write({}, view_of(reversed, {32, 32}, other.dtype()));
  std::filesystem::remove_all(dir.path() / "x" / "a");
  std::filesystem::rename(dir.path() / "y" / "a", dir.path() / "x" / "a");
  const Array b = Array::open(LocalStore::open(dir.path() / "x"), "a");
  EXPECT_EQ(read(b, 0, 32, 0, 32), reversed);
}

TEST_F(CachedReads, ShardedArraysCacheInnerChunksAndReadOnlyTheMissingOnes) {
  auto counted = std::make_shared<FaultInjectionStore>(std::make_shared<MemoryStore>());
  const Array a = make_array(counted, "s", {64, 64}, {32, 32}, Shape{8, 8});
  // A corner of one shard: inner chunks (0..1, 0..1).
  EXPECT_EQ(read(a, 0, 16, 0, 16), expected(64, 0, 16, 0, 16));
  const ChunkCacheStats first = stats();
  EXPECT_EQ(first.entries, 4u);
  const std::uint64_t gets = counted->calls(Op::kGet);
  // Inside those inner chunks: nothing read, not even the index.
  EXPECT_EQ(read(a, 2, 14, 3, 11), expected(64, 2, 14, 3, 11));
  EXPECT_EQ(counted->calls(Op::kGet), gets);
  // Overlapping: the four cached ones come from the cache, two more are fetched.
  EXPECT_EQ(read(a, 4, 20, 0, 16), expected(64, 4, 20, 0, 16));
  const ChunkCacheStats after = stats();
  EXPECT_EQ(after.misses, first.misses + 2);
  EXPECT_EQ(after.entries, 6u);
  EXPECT_GT(counted->calls(Op::kGet), gets);
  // Writing one inner chunk drops the shard's entries; the read sees the new values.
  std::vector<std::int32_t> zero(8 * 8, 0);
  Array(a).write({Slice{8, 16}, Slice{0, 8}}, view_of(zero, {8, 8}, a.dtype()));
  std::vector<std::int32_t> want = expected(64, 0, 16, 0, 16);
  for (int r = 8; r < 16; ++r) {
    for (int c = 0; c < 8; ++c) want[to_size(r * 16 + c)] = 0;
  }
  EXPECT_EQ(read(a, 0, 16, 0, 16), want);
  // A whole shard, then any part of it from the cache.
  EXPECT_EQ(read(a, 32, 64, 32, 64), expected(64, 32, 64, 32, 64));
  const std::uint64_t whole = counted->calls(Op::kGet);
  EXPECT_EQ(read(a, 40, 50, 33, 63), expected(64, 40, 50, 33, 63));
  EXPECT_EQ(counted->calls(Op::kGet), whole);
}

// Rows in chunks of 10 10 5 5 (29 rows: the last chunk cut to 4), columns in chunks of 3 9 9:
// every chunk shape differs from the largest, which the cache must not assume.
Array make_rectilinear(const std::shared_ptr<Store>& store, const std::string& path, std::optional<Shape> inner) {
  const std::vector<ChunkRun> rows{{10, 2}, {5, 2}};
  const std::vector<ChunkRun> columns{{3, 1}, {9, 2}};
  ArraySpec spec;
  spec.shape = {29, 21};
  spec.dtype = DataType::int_(32);
  spec.rectilinear_chunks = ChunkGrid({AxisGrid::explicit_runs(rows), AxisGrid::explicit_runs(columns)});
  if (inner) spec.codecs = sharded_codecs(*inner);
  Array a = Array::create(store, path, make_array_metadata(spec, CodecRegistry::builtin()), /*overwrite=*/true);
  std::vector<std::int32_t> values(29 * 21);
  std::iota(values.begin(), values.end(), 0);
  a.write({}, view_of(values, spec.shape, a.dtype()));
  return a;
}

TEST_F(CachedReads, RectilinearGridsCacheEachChunkInItsOwnShape) {
  for (const bool sharded : {false, true}) {
    SCOPED_TRACE(sharded ? "sharded" : "plain");
    clear_chunk_caches();
    auto counted = std::make_shared<FaultInjectionStore>(std::make_shared<MemoryStore>());
    // Shards of 10 or 5 rows hold inner chunks of 5 x 3.
    const Array a = make_rectilinear(counted, "r", sharded ? std::optional<Shape>(Shape{5, 3}) : std::nullopt);
    EXPECT_EQ(read(a, 0, 29, 0, 21), expected(21, 0, 29, 0, 21));
    const std::uint64_t gets = counted->calls(Op::kGet);
    EXPECT_GT(stats().entries, 0u);
    // Windows across chunks of every shape: all from the cache.
    EXPECT_EQ(read(a, 7, 26, 2, 19), expected(21, 7, 26, 2, 19));
    EXPECT_EQ(read(a, 24, 29, 0, 4), expected(21, 24, 29, 0, 4));
    EXPECT_EQ(counted->calls(Op::kGet), gets);
    // Points too, where they go through the cache (those of sharded arrays read past it).
    const CoordinateSelection points{CoordinateArray{0, 12, 28, 21}, CoordinateArray{20, 3, 11, 2}};
    EXPECT_EQ(values_of<std::int32_t>(a.read_coordinates(points)), (std::vector<std::int32_t>{20, 255, 599, 443}));
    if (!sharded) {
      EXPECT_EQ(counted->calls(Op::kGet), gets);
    }
    // A write drops what it changes; the next read sees it.
    std::vector<std::int32_t> minus(3 * 5, -1);
    Array(a).write({Slice{20, 23}, Slice{1, 6}}, view_of(minus, {3, 5}, a.dtype()));
    std::vector<std::int32_t> want = expected(21, 18, 26, 0, 8);
    for (int r = 20; r < 23; ++r) {
      for (int c = 1; c < 6; ++c) want[to_size((r - 18) * 8 + c)] = -1;
    }
    EXPECT_EQ(read(a, 18, 26, 0, 8), want);
  }
}

TEST_F(CachedReads, TwoArraysWithOnePathOnTwoStoresAreKeptApart) {
  auto one = std::make_shared<MemoryStore>();
  auto two = std::make_shared<MemoryStore>();
  const Array a = make_array(one, "x", {16, 16}, {16, 16});
  Array b = make_array(two, "x", {16, 16}, {16, 16});
  std::vector<std::int32_t> sevens(16 * 16, 7);
  b.write({}, view_of(sevens, {16, 16}, b.dtype()));
  EXPECT_EQ(read(a, 0, 16, 0, 16), expected(16, 0, 16, 0, 16));
  EXPECT_EQ(read(b, 0, 16, 0, 16), sevens);
  EXPECT_EQ(read(a, 0, 16, 0, 16), expected(16, 0, 16, 0, 16));
  EXPECT_EQ(stats().entries, 2u);
}

TEST_F(CachedReads, AnArrayOpenedWithABudgetOfItsOwnLeavesTheProcessCacheAlone) {
  auto store = std::make_shared<MemoryStore>();
  make_array(store, "a", {32, 32}, {16, 16});
  global_config().cache.array_bytes = 1 << 20;
  auto counted = std::make_shared<FaultInjectionStore>(store);
  const Array own = Array::open(counted, "a");
  global_config().cache.array_bytes = 0;
  EXPECT_EQ(read(own, 0, 32, 0, 32), expected(32, 0, 32, 0, 32));
  const std::uint64_t gets = counted->calls(Op::kGet);
  EXPECT_EQ(read(own, 0, 32, 0, 32), expected(32, 0, 32, 0, 32));
  EXPECT_EQ(counted->calls(Op::kGet), gets);
  EXPECT_EQ(stats().entries, 0u);  // the process's cache saw none of it
  // Its copies share it, and writes through other handles reach it.
  Array writer = Array::open(store, "a");
  std::vector<std::int32_t> one{-3};
  writer.write({std::int64_t{0}, std::int64_t{0}}, view_of(one, {}, writer.dtype()));
  const Array copy = own;
  EXPECT_EQ(read(copy, 0, 1, 0, 2), (std::vector<std::int32_t>{-3, 1}));
}

TEST_F(CachedReads, PointSelectionsGoThroughTheCache) {
  auto counted = std::make_shared<FaultInjectionStore>(std::make_shared<MemoryStore>());
  const Array a = make_array(counted, "a", {32, 32}, {16, 16});
  const CoordinateSelection points{CoordinateArray{1, 20, 31}, CoordinateArray{2, 17, 0}};
  EXPECT_EQ(values_of<std::int32_t>(a.read_coordinates(points)), (std::vector<std::int32_t>{34, 657, 992}));
  const std::uint64_t gets = counted->calls(Op::kGet);
  EXPECT_EQ(values_of<std::int32_t>(a.read_coordinates(points)), (std::vector<std::int32_t>{34, 657, 992}));
  EXPECT_EQ(read(a, 0, 16, 0, 16), expected(32, 0, 16, 0, 16));  // a chunk the points decoded
  EXPECT_EQ(counted->calls(Op::kGet), gets);
}

TEST_F(CachedReads, ConcurrentReadersAndAWriterAlwaysSeeWholeValues) {
  // Readers of random windows under a budget smaller than the array (constant evictions),
  // while a writer rewrites chunks with values that say which version they are: every
  // element a reader sees is its position plus a multiple of 1,000,000 from one version.
  auto store = std::make_shared<MemoryStore>();
  const Array a = make_array(store, "a", {128, 128}, {16, 16});
  use_budget(20 * (16 * 16 * 4 + 512));
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 6; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      for (int i = 0; i < 300; ++i) {
        const std::int64_t r0 = rng() % 100, c0 = rng() % 100;
        const std::int64_t r1 = r0 + 1 + rng() % 28, c1 = c0 + 1 + rng() % 28;
        const std::vector<std::int32_t> got = read(a, r0, r1, c0, c1);
        std::size_t k = 0;
        for (std::int64_t r = r0; r < r1; ++r) {
          for (std::int64_t c = c0; c < c1; ++c, ++k) {
            if ((got[k] - static_cast<std::int32_t>(r * 128 + c)) % 1000000 != 0) ++wrong;
          }
        }
      }
    });
  }
  std::thread writer([&] {
    Array w = a;
    std::vector<std::int32_t> chunk(16 * 16);
    for (int version = 1; version < 40; ++version) {
      const std::int64_t r0 = 16 * (version % 8), c0 = 16 * ((version * 3) % 8);
      for (int r = 0; r < 16; ++r) {
        for (int c = 0; c < 16; ++c) chunk[to_size(r * 16 + c)] = static_cast<std::int32_t>((r0 + r) * 128 + c0 + c + version * 1000000);
      }
      w.write({Slice{r0, r0 + 16}, Slice{c0, c0 + 16}}, view_of(chunk, {16, 16}, w.dtype()));
    }
  });
  writer.join();
  for (auto& r : readers) r.join();
  EXPECT_EQ(wrong.load(), 0);
  const ChunkCacheStats s = stats();
  EXPECT_LE(s.bytes, s.budget);
  EXPECT_GT(s.hits, 0u);
  EXPECT_GT(s.evictions, 0u);
  // After the writer is done, every read sees its last values.
  const std::vector<std::int32_t> all = read(a, 0, 128, 0, 128);
  const std::vector<std::int32_t> direct = [&] {
    ScopedConfig off([](Config& c) { c.cache.host_bytes = 0; });
    return read(a, 0, 128, 0, 128);
  }();
  EXPECT_EQ(all, direct);
}

}  // namespace
}  // namespace zarrkit
