// Reads from stores that batch gets (fetched_reads.h): chunks are read as they arrive, not
// once their batch is complete; the number of chunks on the way stays within the budget;
// failures stop the read without hanging it.
#include "engine/fetched_reads.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/selection.h"
#include "zarrkit/stores/memory_store.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const json kBytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
const json kZstd = {{"name", "zstd"}, {"configuration", {{"level", 1}}}};
const json kCrc = {{"name", "crc32c"}};

json sharding(const Shape& inner) {
  return {{"name", "sharding_indexed"},
          {"configuration",
           {{"chunk_shape", inner},
            {"codecs", json::array({kBytes, kZstd})},
            {"index_codecs", json::array({kBytes, kCrc})},
            {"index_location", "end"}}}};
}

// A store that says it batches gets (as the remote stores do), counting how it is asked.
// Its get_each hands values over one at a time through `before_each` (tests hook in there).
class BatchingStore : public MemoryStore {
 public:
  explicit BatchingStore(std::size_t requests_in_flight = 0) : requests_in_flight_(requests_in_flight) {}

  std::function<void(const std::string& key)> before_each;
  std::function<void(std::size_t keys)> on_batch;
  std::function<void()> on_single_get;
  std::atomic<std::size_t> single_gets{0};
  std::atomic<std::size_t> keys_requested{0};
  std::atomic<bool> fail{false};
  std::atomic<bool> drop_last{false};  // hand over one value too few

  StoreCapabilities capabilities() const override {
    StoreCapabilities c = MemoryStore::capabilities();
    c.batched_gets = true;
    c.requests_in_flight = requests_in_flight_;
    return c;
  }
  void get_each(std::span<const std::string> keys, const BufferPrototype& prototype,
                const ValueHandler& on_value) override {
    {
      std::lock_guard lock(mutex_);  // batches are fetched concurrently
      batch_sizes_.push_back(keys.size());
    }
    keys_requested += keys.size();
    if (on_batch) on_batch(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (fail) fail_io("the server went away");
      if (drop_last && i + 1 == keys.size()) return;
      if (before_each) before_each(keys[i]);
      on_value(i, MemoryStore::get(keys[i], prototype, std::nullopt));
    }
  }
  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype,
                            std::optional<ByteRange> range) override {
    ++single_gets;
    if (on_single_get) on_single_get();
    return MemoryStore::get(key, prototype, range);
  }
  std::vector<std::size_t> sorted_batch_sizes() {
    std::lock_guard lock(mutex_);
    std::vector<std::size_t> sizes = batch_sizes_;
    std::sort(sizes.begin(), sizes.end());
    return sizes;
  }

 private:
  std::size_t requests_in_flight_;
  std::mutex mutex_;
  std::vector<std::size_t> batch_sizes_;
};

// A small array for driving read_fetched_as_they_arrive directly with a reader of the
// test's own: its metadata and an output region (the test's readers do not write there).
struct Fixture {
  explicit Fixture(std::size_t num_chunks) {
    ArraySpec spec;
    spec.shape = {num_chunks * 4};
    spec.chunks = {4};
    spec.dtype = DataType::uint_(8);
    spec.codecs = json::array({kBytes});
    metadata = std::make_shared<ArrayMetadata>(make_array_metadata(spec, CodecRegistry::builtin()));
    out.resize(num_chunks * 4);
    region = NDView{out.data(), spec.shape, {1}, spec.dtype};
  }
  std::shared_ptr<ArrayMetadata> metadata;
  std::vector<std::byte> out;
  NDView region;
};

std::string key_of_chunk(std::size_t i) { return "c/" + std::to_string(i); }

void put_chunks(MemoryStore& store, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) store.set(key_of_chunk(i), as_bytes("chunk" + std::to_string(i)));
}

// Pins the size of the shared pool that reads from this thread run on: batch sizes depend on
// it (each batch on the way holds a thread), and must not depend on this machine's cores.
class PoolOf : public ScopedConfig {
 public:
  explicit PoolOf(std::size_t threads) : ScopedConfig([threads](Config& c) { c.num_threads = threads; }) {}
};

TEST(FetchedReads, BudgetIsTwiceTheRequestsInFlightWithinTheMemoryLimit) {
  const FetchBudget plain = fetch_budget(64, 512 << 10, 16);
  EXPECT_EQ(plain.chunks, 128u);
  EXPECT_EQ(plain.batch, 32u);
  EXPECT_EQ(plain.requested, 128u);  // small chunks: all of the budget may be requested at once
  EXPECT_EQ(fetch_budget(0, 512 << 10, 16).chunks, 128u);  // a store that does not say: 64 in flight
  EXPECT_EQ(fetch_budget(2, 100, 16).chunks, 8u);          // never fewer than 8 ...
  EXPECT_EQ(fetch_budget(2, 100, 16).batch, 2u);
  const FetchBudget big = fetch_budget(64, 8 << 20, 16);   // ... unless they would exceed 256 MiB decoded
  EXPECT_EQ(big.chunks, 32u);
  EXPECT_EQ(big.requested, 16u);  // and at most 128 MiB decoded requested at a time
  EXPECT_EQ(big.batch, 8u);
  const FetchBudget shards = fetch_budget(64, 4 << 20, 16);
  EXPECT_EQ(shards.chunks, 64u);
  EXPECT_EQ(shards.requested, 32u);
  EXPECT_EQ(shards.batch, 16u);
  const FetchBudget huge = fetch_budget(64, std::uint64_t{1} << 30, 16);
  EXPECT_EQ(huge.chunks, 1u);
  EXPECT_EQ(huge.batch, 1u);
  EXPECT_EQ(huge.requested, 1u);
  // Readers for the tasks that make their own requests: a quarter of the requests in flight.
  EXPECT_EQ(fetch_budget(64, 100, 16).own_readers, 16u);
  EXPECT_EQ(fetch_budget(32, 100, 16).own_readers, 8u);
  EXPECT_EQ(fetch_budget(2, 100, 16).own_readers, 4u);
  EXPECT_EQ(fetch_budget(1000, 100, 16).own_readers, 16u);
}

TEST(FetchedReads, OnSmallPoolsAllThatMayBeRequestedFitsInABatchPerThread) {
  // Each batch on the way holds a thread until it is handed over.
  EXPECT_EQ(fetch_budget(64, 512 << 10, 4).batch, 32u);  // 4 batches of 32: as on 16 threads
  EXPECT_EQ(fetch_budget(64, 512 << 10, 2).batch, 64u);
  EXPECT_EQ(fetch_budget(64, 512 << 10, 1).batch, 128u);
  EXPECT_EQ(fetch_budget(64, 512 << 10, 1).chunks, 128u);  // the rest of the budget stays
  EXPECT_EQ(fetch_budget(64, 512 << 10, 1).requested, 128u);
  EXPECT_EQ(fetch_budget(64, 8 << 20, 2).batch, 8u);  // 16 requested: 2 batches of 8 already
  EXPECT_EQ(fetch_budget(64, 8 << 20, 1).batch, 16u);
  EXPECT_EQ(fetch_budget(4, 100, 2).batch, 4u);
  EXPECT_EQ(fetch_budget(64, std::uint64_t{1} << 30, 1).batch, 1u);
  EXPECT_EQ(fetch_budget(64, 100, 0).batch, 128u);  // no threads said: one
}

TEST(FetchedReads, EachChunkIsReadAsSoonAsItArrivesNotWhenItsBatchIsComplete) {
  const PoolOf pool(4);
  // One batch of 4 (8 requests in flight: budget 16, batches of 4). The store hands over
  // one value, then waits for the reader to have read it before handing over the next:
  // a reader that waited for the whole batch would never see the first.
  auto store = std::make_shared<BatchingStore>(8);
  put_chunks(*store, 4);
  Fixture f(4);
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t handed = 0;
  std::size_t read = 0;
  bool waited_in_vain = false;
  store->before_each = [&](const std::string&) {
    std::unique_lock lock(mutex);
    if (!changed.wait_for(lock, 10s, [&] { return read == handed; })) waited_in_vain = true;
    ++handed;
  };
  std::set<std::size_t> tasks_read;
  read_fetched_as_they_arrive(store, *f.metadata, f.region, 4, "array 'x'", key_of_chunk,
                              [&](const ChunkReadRequest& request, std::size_t task) {
                                // The fetched bytes, not a second request to the store.
                                const auto value = request.store.get(key_of_chunk(task));
                                ASSERT_TRUE(value.has_value());
                                EXPECT_EQ(std::string(as_chars(value->view())), "chunk" + std::to_string(task));
                                std::lock_guard lock(mutex);
                                tasks_read.insert(task);
                                ++read;
                                changed.notify_all();
                              });
  EXPECT_FALSE(waited_in_vain);
  EXPECT_EQ(tasks_read, (std::set<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(store->sorted_batch_sizes(), (std::vector<std::size_t>{4}));
  EXPECT_EQ(store->single_gets.load(), 0u);
}

TEST(FetchedReads, ChunksOnTheWayStayWithinTheBudgetAndEveryTaskIsReadOnce) {
  const PoolOf pool(4);
  // 4 requests in flight: at most 8 chunks requested and not yet read, batches of 2.
  auto store = std::make_shared<BatchingStore>(4);
  put_chunks(*store, 101);
  Fixture f(101);
  std::mutex mutex;
  std::size_t requested = 0;
  std::size_t read = 0;
  std::size_t most_on_the_way = 0;
  std::vector<std::atomic<int>> times_read(101);
  store->on_batch = [&](std::size_t keys) {
    std::lock_guard lock(mutex);
    requested += keys;
    most_on_the_way = std::max(most_on_the_way, requested - read);
  };
  read_fetched_as_they_arrive(store, *f.metadata, f.region, 101, "array 'x'", key_of_chunk,
                              [&](const ChunkReadRequest&, std::size_t task) {
                                ++times_read[task];
                                std::lock_guard lock(mutex);
                                ++read;
                              });
  for (std::size_t i = 0; i < 101; ++i) EXPECT_EQ(times_read[i].load(), 1) << i;
  EXPECT_LE(most_on_the_way, 8u);
  EXPECT_GE(most_on_the_way, 2u);
  EXPECT_EQ(store->sorted_batch_sizes(), [] {
    std::vector<std::size_t> sizes(50, 2);
    sizes.insert(sizes.begin(), 1);
    return sizes;
  }());
}

TEST(FetchedReads, TasksWithoutAKeyReadFromTheStoreItself) {
  auto store = std::make_shared<BatchingStore>(4);
  put_chunks(*store, 10);
  Fixture f(10);
  std::atomic<std::size_t> from_store{0};
  std::atomic<std::size_t> from_fetched{0};
  read_fetched_as_they_arrive(
      store, *f.metadata, f.region, 10, "array 'x'",
      [](std::size_t i) { return i % 3 == 0 ? std::string() : key_of_chunk(i); },
      [&](const ChunkReadRequest& request, std::size_t) {
        ++(&request.store == store.get() ? from_store : from_fetched);
      });
  EXPECT_EQ(from_store.load(), 4u);  // tasks 0, 3, 6, 9
  EXPECT_EQ(from_fetched.load(), 6u);
  EXPECT_EQ(store->keys_requested.load(), 6u);
}

TEST(FetchedReads, AFailedFetchStopsTheReadAndIsReportedWithItsContext) {
  const PoolOf pool(4);  // batches of 2
  auto store = std::make_shared<BatchingStore>(4);
  put_chunks(*store, 200);
  Fixture f(200);
  std::atomic<std::size_t> read{0};
  store->before_each = [&](const std::string& key) {
    if (key == key_of_chunk(20)) store->fail = true;
  };
  std::atomic<std::size_t> requested_after_failure{0};
  store->on_batch = [&](std::size_t keys) {
    if (store->fail) requested_after_failure += keys;
  };
  try {
    read_fetched_as_they_arrive(store, *f.metadata, f.region, 200, "array 'x' in memory://test", key_of_chunk,
                                [&](const ChunkReadRequest&, std::size_t) { ++read; });
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("array 'x' in memory://test"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the server went away"), std::string::npos) << e.what();
  }
  // Once the store has failed, each of the other threads requests at most the batch it had
  // decided on, which fails at once: the rest is never asked for. (How far the others got
  // before the failing batch was handed over depends on the scheduler.)
  EXPECT_LE(requested_after_failure.load(), 3u * 2u);
  EXPECT_LT(read.load(), 200u);  // chunk 21 never arrives
}

TEST(FetchedReads, AFailedReadStopsTheFetchingAndIsRethrownAsItIs) {
  auto store = std::make_shared<BatchingStore>(4);
  put_chunks(*store, 200);
  Fixture f(200);
  EXPECT_THROW(read_fetched_as_they_arrive(store, *f.metadata, f.region, 200, "array 'x'", key_of_chunk,
                                           [&](const ChunkReadRequest&, std::size_t) {
                                             fail_data_loss("chunk damaged");
                                           }),
               DataLossError);
  EXPECT_LT(store->keys_requested.load(), 40u);
}

TEST(FetchedReads, AStoreThatHandsOverTooFewValuesIsAnErrorNotAHang) {
  auto store = std::make_shared<BatchingStore>(4);
  put_chunks(*store, 12);
  store->drop_last = true;
  Fixture f(12);
  EXPECT_THROW(read_fetched_as_they_arrive(store, *f.metadata, f.region, 12, "array 'x'", key_of_chunk,
                                           [&](const ChunkReadRequest&, std::size_t) {}),
               IoError);
}

TEST(FetchedReads, LargeChunksAreRequestedAFewAtATimeSoTheFirstArriveEarly) {
  const PoolOf pool(4);
  // Chunks of 16 MiB: 16 on the way (256 MiB decoded), of which at most 8 (128 MiB)
  // requested and not yet arrived, in batches of 4. The readers never touch the output, so
  // the region is a view of the array's shape over one byte.
  constexpr std::size_t kChunks = 40;
  constexpr std::uint64_t kChunkBytes = 16 << 20;
  ArraySpec spec;
  spec.shape = {kChunks * kChunkBytes};
  spec.chunks = {kChunkBytes};
  spec.dtype = DataType::uint_(8);
  spec.codecs = json::array({kBytes});
  const ArrayMetadata metadata = make_array_metadata(spec, CodecRegistry::builtin());
  std::byte unused{};
  const NDView region{&unused, spec.shape, {1}, spec.dtype};
  auto store = std::make_shared<BatchingStore>(64);
  put_chunks(*store, kChunks);
  std::mutex mutex;
  std::size_t requested = 0;
  std::size_t arrived = 0;
  std::size_t most_requested = 0;
  store->on_batch = [&](std::size_t keys) {
    std::lock_guard lock(mutex);
    requested += keys;
    most_requested = std::max(most_requested, requested - arrived);
  };
  store->before_each = [&](const std::string&) {
    std::this_thread::sleep_for(1ms);  // let other batches start if the budget allowed them
    std::lock_guard lock(mutex);
    ++arrived;
  };
  std::atomic<std::size_t> read{0};
  read_fetched_as_they_arrive(store, metadata, region, kChunks, "array 'x'", key_of_chunk,
                              [&](const ChunkReadRequest&, std::size_t) { ++read; });
  EXPECT_EQ(read.load(), kChunks);
  EXPECT_LE(most_requested, 8u);
  EXPECT_GE(most_requested, 4u);
  EXPECT_EQ(store->sorted_batch_sizes(), std::vector<std::size_t>(10, 4));
}

// Through Array::read: every layout of a batching store reads back what was written.

TEST(FetchedReads, ArraysAreReadInBatchesWithinTheBudget) {
  const PoolOf pool(4);
  for (const std::size_t in_flight : {0u, 4u}) {
    for (const char* chain : {"raw", "zstd"}) {
      SCOPED_TRACE(std::string(chain) + ", requests in flight " + std::to_string(in_flight));
      auto store = std::make_shared<BatchingStore>(in_flight);
      ArraySpec spec;
      spec.shape = {30, 100};
      spec.chunks = {1, 10};  // 300 chunks
      spec.dtype = DataType::int_(32);
      spec.codecs = std::string(chain) == "raw" ? json::array({kBytes}) : json::array({kBytes, kZstd});
      spec.fill_value = -1;
      Array array = Array::create(store, "x", make_array_metadata(spec, CodecRegistry::builtin()));
      std::vector<std::int32_t> data(3000);
      for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::int32_t>(i % 7 == 0 ? -1 : i);
      for (std::size_t i = 0; i < 100; ++i) data[5 * 100 + i] = -1;  // row 5: ten chunks never stored
      array.write(Selection{}, NDView{reinterpret_cast<std::byte*>(data.data()), spec.shape,
                                      NDView::c_strides(spec.shape, 4), spec.dtype});
      const Array opened = Array::open(store, "x");
      store->single_gets = 0;
      const NDBuffer whole = opened.read(Selection{});
      ASSERT_EQ(std::memcmp(whole.data(), data.data(), whole.nbytes()), 0);
      const std::vector<std::size_t> sizes = store->sorted_batch_sizes();
      EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), std::size_t{0}), 300u);
      EXPECT_EQ(sizes.back(), in_flight == 0 ? 32u : 2u);  // a quarter of twice the requests in flight
      EXPECT_EQ(store->single_gets.load(), 0u);

      store->fail = true;
      try {
        (void)Array::open(store, "x").read(Selection{});
        ADD_FAILURE() << "no error";
      } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find("array 'x' in memory://"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("the server went away"), std::string::npos) << e.what();
      }
    }
  }
}

TEST(FetchedReads, WholeShardsAreFetchedInBatchesAndPartsReadAlone) {
  const PoolOf pool(4);
  auto store = std::make_shared<BatchingStore>(2);  // budget 8, batches of 2
  ArraySpec spec;
  spec.shape = {40, 60};
  spec.chunks = {10, 20};  // 12 shards of 2x4 inner chunks
  spec.dtype = DataType::uint_(16);
  spec.codecs = json::array({sharding({5, 5})});
  spec.fill_value = 0;
  Array array = Array::create(store, "s", make_array_metadata(spec, CodecRegistry::builtin()));
  std::vector<std::uint16_t> data(40 * 60);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint16_t>(i < 600 ? 0 : i);  // 3 empty shards
  array.write(Selection{}, NDView{reinterpret_cast<std::byte*>(data.data()), spec.shape,
                                  NDView::c_strides(spec.shape, 2), spec.dtype});
  const Array opened = Array::open(store, "s");
  store->single_gets = 0;
  const NDBuffer whole = opened.read(Selection{});
  ASSERT_EQ(std::memcmp(whole.data(), data.data(), whole.nbytes()), 0);
  EXPECT_EQ(store->sorted_batch_sizes(), std::vector<std::size_t>(6, 2));
  EXPECT_EQ(store->single_gets.load(), 0u);

  // Shards read in part read their index and inner chunks themselves; the two shards inside
  // the selection are still fetched whole, in batches.
  store->keys_requested = 0;
  store->single_gets = 0;
  const Selection part{Slice{2, 38, 1}, Slice{3, 57, 1}};
  const NDBuffer got = opened.read(part);
  EXPECT_EQ(store->keys_requested.load(), 2u);
  EXPECT_GT(store->single_gets.load(), 0u);
  for (std::size_t r = 0; r < 36; ++r) {
    for (std::size_t c = 0; c < 54; ++c) {
      ASSERT_EQ(reinterpret_cast<const std::uint16_t*>(got.data())[r * 54 + c], data[(r + 2) * 60 + c + 3]);
    }
  }
}

TEST(FetchedReads, ShardsReadInPartHaveTheirRequestsOnTheWayTogether) {
  // 16 requests in flight: 4 shards read in part at once, on the pool's threads (a pool of
  // 8 here, whatever this machine has). Each ranged get (a shard's index, its inner chunks)
  // waits until 4 are on the way at once; read one shard at a time, they would never be
  // (the wait gives up after 10 s, once).
  const PoolOf pool(8);
  auto store = std::make_shared<BatchingStore>(16);
  ArraySpec spec;
  spec.shape = {40, 60};
  spec.chunks = {10, 20};  // 12 shards of 2x4 inner chunks
  spec.dtype = DataType::uint_(16);
  spec.codecs = json::array({sharding({5, 5})});
  spec.fill_value = 0;
  Array array = Array::create(store, "s", make_array_metadata(spec, CodecRegistry::builtin()));
  std::vector<std::uint16_t> data(40 * 60);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint16_t>(i * 7);
  array.write(Selection{}, NDView{reinterpret_cast<std::byte*>(data.data()), spec.shape,
                                  NDView::c_strides(spec.shape, 2), spec.dtype});
  const Array opened = Array::open(store, "s");
  std::mutex mutex;
  std::condition_variable changed;
  int on_the_way = 0;
  int most_at_once = 0;
  bool released = false;
  store->on_single_get = [&] {
    std::unique_lock lock(mutex);
    most_at_once = std::max(most_at_once, ++on_the_way);
    if (on_the_way >= 4) released = true;
    changed.notify_all();
    if (!changed.wait_for(lock, 10s, [&] { return released; })) released = true;
    --on_the_way;
  };
  const Selection part{Slice{1, 39, 1}, Slice{1, 59, 1}};  // 10 shards in part, 2 whole
  const NDBuffer got = opened.read(part);
  EXPECT_GE(most_at_once, 4);
  EXPECT_EQ(store->keys_requested.load(), 2u);
  for (std::size_t r = 0; r < 38; ++r) {
    for (std::size_t c = 0; c < 58; ++c) {
      ASSERT_EQ(reinterpret_cast<const std::uint16_t*>(got.data())[r * 58 + c], data[(r + 1) * 60 + c + 1]);
    }
  }

  // A failure in one of them is reported, and the others stop.
  store->on_single_get = [&] { fail_io("the server went away"); };
  EXPECT_THROW((void)opened.read(part), IoError);
}

// Running on the shared pool: no threads of the read's own, no deadlock on a pool of one
// thread or when the read is itself a task of the pool.

// The threads of this process now.
std::size_t thread_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// An array of 300 chunks of 10 int32 on `store` ("x", zstd, fill -1), holding `data`.
Array make_chunked_array(const std::shared_ptr<Store>& store, std::vector<std::int32_t>& data) {
  ArraySpec spec;
  spec.shape = {30, 100};
  spec.chunks = {1, 10};
  spec.dtype = DataType::int_(32);
  spec.codecs = json::array({kBytes, kZstd});
  spec.fill_value = -1;
  Array array = Array::create(store, "x", make_array_metadata(spec, CodecRegistry::builtin()));
  data.resize(3000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::int32_t>(i % 7 == 0 ? -1 : i);
  array.write(Selection{}, NDView{reinterpret_cast<std::byte*>(data.data()), spec.shape,
                                  NDView::c_strides(spec.shape, 4), spec.dtype});
  return Array::open(store, "x");
}

TEST(FetchedReads, NoThreadIsStartedForARead) {
  auto store = std::make_shared<BatchingStore>(4);  // batches of 2: many batches per read
  std::vector<std::int32_t> data;
  const Array array = make_chunked_array(store, data);
  (void)array.read(Selection{});  // the shared pool exists from here on
  const std::size_t before = thread_count();
  std::atomic<std::size_t> most_during{0};
  store->before_each = [&](const std::string&) {
    const std::size_t now = thread_count();
    for (std::size_t seen = most_during.load(); now > seen && !most_during.compare_exchange_weak(seen, now);) {
    }
  };
  for (int i = 0; i < 20; ++i) {
    const NDBuffer got = array.read(Selection{});
    ASSERT_EQ(std::memcmp(got.data(), data.data(), got.nbytes()), 0);
  }
  EXPECT_EQ(most_during.load(), before);  // while the values are handed over
  EXPECT_EQ(thread_count(), before);
}

TEST(FetchedReads, APoolOfOneThreadFetchesAndReadsOnTheCallingThread) {
  const PoolOf pool(1);
  ASSERT_EQ(shared_thread_pool().size(), 1u);
  const std::thread::id caller = std::this_thread::get_id();
  {
    // The one thread is inside get_each while the batch is handed over: it reads each value
    // as it comes (the store waits for that before handing over the next).
    auto store = std::make_shared<BatchingStore>(8);
    put_chunks(*store, 12);
    Fixture f(12);
    std::size_t handed = 0;
    std::size_t read = 0;
    bool handed_before_read = false;
    store->before_each = [&](const std::string&) {
      if (read != handed) handed_before_read = true;
      ++handed;
    };
    std::set<std::size_t> tasks_read;
    read_fetched_as_they_arrive(store, *f.metadata, f.region, 12, "array 'x'",
                                [](std::size_t i) { return i % 5 == 0 ? std::string() : key_of_chunk(i); },
                                [&](const ChunkReadRequest&, std::size_t task) {
                                  EXPECT_EQ(std::this_thread::get_id(), caller);
                                  tasks_read.insert(task);
                                  if (task % 5 != 0) ++read;
                                });
    EXPECT_FALSE(handed_before_read);
    EXPECT_EQ(tasks_read.size(), 12u);
    EXPECT_EQ(store->keys_requested.load(), 9u);  // tasks 0, 5, 10 read for themselves
  }
  // Whole arrays, and failures, the same way.
  auto store = std::make_shared<BatchingStore>(4);
  std::vector<std::int32_t> data;
  const Array array = make_chunked_array(store, data);
  const NDBuffer got = array.read(Selection{});
  ASSERT_EQ(std::memcmp(got.data(), data.data(), got.nbytes()), 0);
  EXPECT_EQ(store->sorted_batch_sizes().back(), 8u);  // all 8 that may be requested at once
  std::size_t values = 0;
  store->before_each = [&](const std::string&) {
    if (++values == 50) store->fail = true;
  };
  const std::size_t requested_before = store->keys_requested.load();
  EXPECT_THROW((void)array.read(Selection{}), IoError);
  EXPECT_LT(store->keys_requested.load() - requested_before, 60u);
}

TEST(FetchedReads, AReadMadeFromInsideAPoolTaskCompletes) {
  // More reads than the pool has threads, each a task of the pool: some run while every
  // thread is busy with another read, and their work waits for none of them.
  auto store = std::make_shared<BatchingStore>(4);
  std::vector<std::int32_t> data;
  const Array array = make_chunked_array(store, data);
  ThreadPool& pool = shared_thread_pool();
  const std::size_t reads = 4 * pool.size();
  std::vector<int> matches(reads, 0);
  pool.parallel_for(reads, [&](std::size_t i) {
    const NDBuffer got = array.read(Selection{});
    matches[i] = std::memcmp(got.data(), data.data(), got.nbytes()) == 0 ? 1 : 0;
  });
  EXPECT_EQ(std::count(matches.begin(), matches.end(), 1), static_cast<std::ptrdiff_t>(reads));
  // And on a pool of its own size, from inside a task of another pool (runs inline).
  ThreadPool outer(3);
  std::vector<int> outer_matches(6, 0);
  outer.parallel_for(6, [&](std::size_t i) {
    const NDBuffer got = array.read(Selection{});
    outer_matches[i] = std::memcmp(got.data(), data.data(), got.nbytes()) == 0 ? 1 : 0;
  });
  EXPECT_EQ(std::count(outer_matches.begin(), outer_matches.end(), 1), 6);
}

// Point selections, orthogonal selections with lists, and resize on a batching store:
// chunks are fetched in batches, never one get per chunk, and the results are those of an
// in-memory store.

// A batching store and a memory store holding the same array ("x", 300 chunks, zstd).
struct TwinArrays {
  TwinArrays() {
    batched = std::make_shared<BatchingStore>(4);
    plain = std::make_shared<MemoryStore>();
    on_batched.emplace(make_chunked_array(batched, data));
    on_plain.emplace(make_chunked_array(plain, data));
    batched->single_gets = 0;
    batched->keys_requested = 0;
  }
  std::shared_ptr<BatchingStore> batched;
  std::shared_ptr<MemoryStore> plain;
  std::vector<std::int32_t> data;
  std::optional<Array> on_batched;
  std::optional<Array> on_plain;
};

void expect_same(const NDBuffer& a, const NDBuffer& b) {
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.nbytes(), b.nbytes());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0);
}

TEST(FetchedReads, CoordinateAndMaskSelectionsFetchTheirChunksInBatches) {
  const PoolOf pool(4);
  TwinArrays t;
  // 200 points over 100 chunks of rows 0-19 (and repeats), in no particular order.
  std::vector<std::int64_t> rows, cols;
  for (std::int64_t i = 0; i < 200; ++i) {
    rows.push_back((i * 7) % 20);
    cols.push_back((i * 37) % 100);
  }
  const CoordinateSelection coords{rows, cols};
  std::set<std::pair<std::int64_t, std::int64_t>> chunks;
  for (std::size_t i = 0; i < rows.size(); ++i) chunks.emplace(rows[i], cols[i] / 10);
  expect_same(t.on_batched->read_coordinates(coords), t.on_plain->read_coordinates(coords));
  EXPECT_EQ(t.batched->single_gets.load(), 0u);
  EXPECT_EQ(t.batched->keys_requested.load(), chunks.size());
  EXPECT_EQ(t.batched->sorted_batch_sizes().back(), 2u);  // a quarter of twice 4 in flight

  MaskSelection mask{{30, 100}, std::vector<std::uint8_t>(3000, 0)};
  for (std::size_t i = 0; i < 3000; i += 13) mask.mask[i] = 1;  // touches most chunks
  t.batched->keys_requested = 0;
  expect_same(t.on_batched->read_mask(mask), t.on_plain->read_mask(mask));
  EXPECT_EQ(t.batched->single_gets.load(), 0u);
  EXPECT_GT(t.batched->keys_requested.load(), 100u);

  // Orthogonal selections with index lists go through the plain read's batched fetch.
  const Selection orthogonal{IndexArray{{3, 17, 3, 29}}, IndexArray{{95, 0, 41}}};
  t.batched->keys_requested = 0;
  expect_same(t.on_batched->read(orthogonal), t.on_plain->read(orthogonal));
  EXPECT_EQ(t.batched->single_gets.load(), 0u);
  EXPECT_EQ(t.batched->keys_requested.load(), 9u);  // 3 rows x 3 chunks

  // A failed fetch is reported with the array.
  t.batched->fail = true;
  try {
    (void)t.on_batched->read_coordinates(coords);
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("array 'x' in memory://"), std::string::npos) << e.what();
  }
}

TEST(FetchedReads, CoordinateWritesFetchTheChunksTheyChangeInBatches) {
  TwinArrays t;
  const CoordinateSelection coords{{0, 5, 5, 29, 12}, {0, 99, 98, 50, 3}};
  std::vector<std::int32_t> values{1000, 1001, 1002, 1003, 1004};
  const NDView view{reinterpret_cast<std::byte*>(values.data()), {5}, {4}, DataType::int_(32)};
  t.on_batched->write_coordinates(coords, view);
  t.on_plain->write_coordinates(coords, view);
  EXPECT_EQ(t.batched->single_gets.load(), 0u);
  EXPECT_EQ(t.batched->keys_requested.load(), 4u);  // (5, 98) and (5, 99) share a chunk
  expect_same(t.on_batched->read(Selection{}), t.on_plain->read(Selection{}));
}

// Coordinate reads of a sharded array read each shard in part, as a read of part of a
// shard does: its index, then the inner chunks that hold points, as byte ranges (never the
// whole shard), the shards on the pool together.
TEST(FetchedReads, CoordinateReadsOfShardedArraysReadTheIndexAndTheTouchedInnerChunks) {
  const PoolOf pool(4);
  auto batched = std::make_shared<BatchingStore>(2);
  auto plain = std::make_shared<MemoryStore>();
  ArraySpec spec;
  spec.shape = {40, 60};
  spec.chunks = {10, 20};  // 12 shards of 2x4 inner chunks
  spec.dtype = DataType::uint_(16);
  spec.codecs = json::array({sharding({5, 5})});
  spec.fill_value = 0;
  std::vector<std::uint16_t> data(40 * 60);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint16_t>(i * 3);
  for (const std::shared_ptr<Store>& store : {std::shared_ptr<Store>(batched), std::shared_ptr<Store>(plain)}) {
    Array::create(store, "s", make_array_metadata(spec, CodecRegistry::builtin()))
        .write(Selection{}, NDView{reinterpret_cast<std::byte*>(data.data()), spec.shape,
                                   NDView::c_strides(spec.shape, 2), spec.dtype});
  }
  const Array on_batched = Array::open(batched, "s");
  batched->single_gets = 0;
  const CoordinateSelection coords{{0, 39, 12, 25, 7, 31}, {0, 59, 44, 3, 21, 33}};  // 6 shards
  expect_same(on_batched.read_coordinates(coords), Array::open(plain, "s").read_coordinates(coords));
  // 6 indexes and 6 inner chunks (each point in an inner chunk of its own), no whole value.
  EXPECT_EQ(batched->single_gets.load(), 12u);
  EXPECT_EQ(batched->keys_requested.load(), 0u);
}

TEST(FetchedReads, ResizeFetchesTheChunksItRewritesInBatches) {
  const PoolOf pool(4);
  TwinArrays t;
  // Shrinking to [25, 55]: rows 25-29 and, in rows 0-24, the chunks past column 59 are
  // erased (150 chunks, no fetch); in rows 0-24 the chunk of columns 50-59 is fetched and
  // rewritten with the fill value past column 54 (25 chunks).
  t.on_batched->resize({25, 55});
  t.on_plain->resize({25, 55});
  EXPECT_EQ(t.batched->single_gets.load(), 0u);
  EXPECT_EQ(t.batched->keys_requested.load(), 25u);
  EXPECT_EQ(t.batched->sorted_batch_sizes().back(), 2u);
  // Growing back: what was cut off reads as the fill value on both.
  t.on_batched->resize({30, 100});
  t.on_plain->resize({30, 100});
  expect_same(Array::open(t.batched, "x").read(Selection{}), Array::open(t.plain, "x").read(Selection{}));
  EXPECT_EQ(t.batched->list("x").size(), t.plain->list("x").size());
}

}  // namespace
}  // namespace zarrkit
