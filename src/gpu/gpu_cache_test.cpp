// Reads into device memory through the device's decoded-chunk cache
// (Config::cache.device_bytes): a second read of the same chunks fetches and decodes
// nothing, inner chunks of shards are kept one by one, layouts the scatter folds (byte
// order, transposes) come back right from the cached copy, writes drop what they change,
// the budget holds, and a budget of 0 is no cache. Reads need a GPU (the tests skip without).
#include <atomic>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/checked_math.h"
#include "gpu/device_read.h"
#include "gpu/gpu_testing.h"
#include "stores/wrappers/fault_injection_store.h"
#include "zarrkit/chunk_cache.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/config.h"
#include "zarrkit/gpu.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;
using Op = FaultInjectionStore::Operation;

const json kLittle = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
const json kZstd = {{"name", "zstd"}, {"configuration", {{"level", 1}}}};
const json kLz4 = {{"name", "numcodecs.lz4"}};

json sharding(const Shape& inner, const json& codecs) {
  return json::array({{{"name", "sharding_indexed"},
                       {"configuration",
                        {{"chunk_shape", inner},
                         {"codecs", codecs},
                         {"index_codecs", json::array({kLittle, {{"name", "crc32c"}}})}}}}});
}

// A 2-D int32 array holding 0, 1, 2, ... (C order), with a block left at the fill value (7).
Array make_array(const std::shared_ptr<Store>& store, const Shape& shape, const Shape& chunks, const json& codecs) {
  ArraySpec spec;
  spec.shape = shape;
  spec.chunks = chunks;
  spec.dtype = DataType::int_(32);
  spec.codecs = codecs;
  spec.fill_value = json(7);
  Array a = Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()), true);
  std::vector<std::int32_t> values(to_size(shape[0] * shape[1]));
  std::iota(values.begin(), values.end(), 0);
  for (std::size_t r = 0; r < 8; ++r) {
    for (std::size_t c = 0; c < 8; ++c) values[r * shape[1] + c] = 7;
  }
  a.write({}, NDView{reinterpret_cast<std::byte*>(values.data()), shape, NDView::c_strides(shape, 4), a.dtype(),
                     MemoryKind::kHost});
  return a;
}

// The device cache on, with `bytes` (the host's off, so the CPU reads compared with go to
// the store).
class GpuCache : public testing::Test {
 protected:
  void SetUp() override { clear_chunk_caches(); }
  void TearDown() override { clear_chunk_caches(); }
  static std::function<void(Config&)> device_budget(std::uint64_t bytes) {
    return [bytes](Config& c) {
      c.cache.device_bytes = bytes;
      c.cache.host_bytes = 0;
    };
  }
};

TEST_F(GpuCache, DevicesThatReadNothingReportNothing) {
  // Runs everywhere: no cache is made for a device before it reads with a budget.
  const ChunkCacheStats s = device_chunk_cache_stats(97);
  EXPECT_EQ(s.entries, 0u);
  EXPECT_EQ(s.budget, 0u);
}

TEST_F(GpuCache, ASecondReadFetchesAndDecodesNothing) {
  REQUIRE_GPU();
  ScopedConfig budget(device_budget(64 << 20));
  for (const json& codecs : {json::array({kLittle, kZstd}), json::array({kLittle, kLz4}), json::array({kLittle})}) {
    auto counted = std::make_shared<FaultInjectionStore>(MemoryStore::create());
    const Array a = make_array(counted, {64, 96}, {16, 32}, codecs);
    const Selection window{Slice{4, 40}, Slice{10, 70}};
    expect_same_read(a, window, codecs.dump() + ": first");
    const std::uint64_t gets = counted->calls(Op::kGet);
    const std::uint64_t from_cache = gpu::read_stats().chunks_from_cache.load();
    const std::uint64_t decoded = gpu::read_stats().chunks_decoded_on_gpu.load() + gpu::read_stats().chunks_decoded_on_cpu.load();
    expect_same_read(a, window, codecs.dump() + ": again");
    // The CPU read of expect_same_read fetches its 9 chunks; the device read none.
    EXPECT_EQ(counted->calls(Op::kGet), gets + 9) << codecs.dump();
    EXPECT_EQ(gpu::read_stats().chunks_from_cache.load(), from_cache + 9) << codecs.dump();
    EXPECT_EQ(gpu::read_stats().chunks_decoded_on_gpu.load() + gpu::read_stats().chunks_decoded_on_cpu.load(), decoded)
        << codecs.dump();
    // Overlapping windows, some chunks cached and some not.
    expect_same_read(a, {Slice{0, 64}, Slice{0, 96, 3}}, codecs.dump() + ": all, every third column");
    expect_same_read(a, {Slice{30, 33}, Slice{}}, codecs.dump() + ": rows");
  }
  EXPECT_GT(device_chunk_cache_stats(0).hits, 0u);
}

TEST_F(GpuCache, LayoutsTheScatterFoldsComeBackRightFromTheCachedCopy) {
  REQUIRE_GPU();
  ScopedConfig budget(device_budget(64 << 20));
  const json big = {{"name", "bytes"}, {"configuration", {{"endian", "big"}}}};
  const json transpose = {{"name", "transpose"}, {"configuration", {{"order", json::array({1, 0})}}}};
  for (const json& codecs : {json::array({big, kLz4}), json::array({transpose, kLittle, kZstd}),
                             json::array({transpose, big})}) {
    const Array a = make_array(MemoryStore::create(), {48, 40}, {16, 16}, codecs);
    for (int round = 0; round < 2; ++round) {
      expect_same_read(a, {}, codecs.dump() + ": all");
      expect_same_read(a, {Slice{5, 30}, Slice{3, 39, 2}}, codecs.dump() + ": a strided window");
    }
  }
}

TEST_F(GpuCache, ShardsKeepTheirInnerChunksOneByOne) {
  REQUIRE_GPU();
  ScopedConfig budget(device_budget(64 << 20));
  for (const json& inner : {json::array({kLittle, kLz4}), json::array({kLittle, kZstd})}) {
    auto counted = std::make_shared<FaultInjectionStore>(MemoryStore::create());
    const Array a = make_array(counted, {64, 64}, {32, 32}, sharding({8, 8}, inner));
    expect_same_read(a, {Slice{0, 16}, Slice{0, 16}}, inner.dump() + ": a corner");
    const std::uint64_t from_cache = gpu::read_stats().chunks_from_cache.load();
    // The same inner chunks and two more: four from the cache.
    expect_same_read(a, {Slice{4, 20}, Slice{0, 16}}, inner.dump() + ": overlapping");
    EXPECT_EQ(gpu::read_stats().chunks_from_cache.load(), from_cache + 4) << inner.dump();
    // All cached now: the device read asks the store for nothing, not even the index.
    const std::uint64_t gets = counted->calls(Op::kGet);
    const NDBuffer cpu = a.read({Slice{2, 18}, Slice{1, 15}});
    const std::uint64_t cpu_gets = counted->calls(Op::kGet) - gets;
    expect_same_read(a, {Slice{2, 18}, Slice{1, 15}}, inner.dump() + ": inside what is cached");
    EXPECT_EQ(counted->calls(Op::kGet), gets + 2 * cpu_gets) << inner.dump();
    expect_same_read(a, {}, inner.dump() + ": all");
    expect_same_read(a, {}, inner.dump() + ": all, again");
  }
}

TEST_F(GpuCache, WritesDropWhatTheyChange) {
  REQUIRE_GPU();
  ScopedConfig budget(device_budget(64 << 20));
  for (const json& codecs : {json::array({kLittle, kZstd}), sharding({8, 8}, json::array({kLittle, kLz4}))}) {
    Array a = make_array(MemoryStore::create(), {32, 32}, {16, 16}, codecs);
    expect_same_read(a, {}, codecs.dump() + ": before");
    std::vector<std::int32_t> minus(4 * 4, -1);
    a.write({Slice{10, 14}, Slice{20, 24}}, NDView{reinterpret_cast<std::byte*>(minus.data()), {4, 4},
                                                   NDView::c_strides({4, 4}, 4), a.dtype(), MemoryKind::kHost});
    expect_same_read(a, {}, codecs.dump() + ": after a host write");
    // From device memory too.
    NDBuffer device_values;
    {
      ScopedGpu gpu;
      device_values = a.read({Slice{0, 16}, Slice{0, 16}});
    }
    a.write({Slice{16, 32}, Slice{16, 32}}, device_values.view());
    expect_same_read(a, {}, codecs.dump() + ": after a device write");
    a.resize({20, 20});
    a.resize({32, 32});
    expect_same_read(a, {}, codecs.dump() + ": after a resize");
  }
}

TEST_F(GpuCache, TheBudgetHoldsAndZeroIsNoCache) {
  REQUIRE_GPU();
  const Array a = make_array(MemoryStore::create(), {64, 64}, {16, 16}, json::array({kLittle, kZstd}));
  {
    ScopedConfig budget(device_budget(3 * (16 * 16 * 4 + 512)));
    expect_same_read(a, {}, "a budget of three chunks");
    expect_same_read(a, {}, "a budget of three chunks, again");
    const ChunkCacheStats s = device_chunk_cache_stats(0);
    EXPECT_LE(s.bytes, s.budget);
    EXPECT_LE(s.entries, 3u);
    EXPECT_GT(s.evictions, 0u);
  }
  ScopedConfig off(device_budget(0));
  const std::uint64_t from_cache = gpu::read_stats().chunks_from_cache.load();
  expect_same_read(a, {}, "no cache");
  expect_same_read(a, {}, "no cache, again");
  EXPECT_EQ(gpu::read_stats().chunks_from_cache.load(), from_cache);
  EXPECT_EQ(device_chunk_cache_stats(0).entries, 0u);
}

TEST_F(GpuCache, ConcurrentDeviceReadersSeeTheCpusValues) {
  REQUIRE_GPU();
  const Array a = make_array(MemoryStore::create(), {96, 96}, {16, 16}, json::array({kLittle, kLz4}));
  const NDBuffer cpu = a.read();
  const auto* reference = reinterpret_cast<const std::int32_t*>(cpu.data());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      ScopedConfig budget(device_budget(10 * (16 * 16 * 4 + 512)));  // pushed out all the time
      ScopedGpu gpu;
      std::mt19937 rng(static_cast<unsigned>(t));
      for (int i = 0; i < 50; ++i) {
        const std::int64_t r0 = rng() % 80, c0 = rng() % 80;
        const NDBuffer got = a.read({Slice{r0, r0 + 16}, Slice{c0, c0 + 16}});
        const Buffer back = to_host(got.buffer());
        const auto* v = reinterpret_cast<const std::int32_t*>(back.data());
        for (int r = 0; r < 16; ++r) {
          for (int c = 0; c < 16; ++c) {
            if (v[r * 16 + c] != reference[(r0 + r) * 96 + c0 + c]) ++wrong;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace zarrkit
