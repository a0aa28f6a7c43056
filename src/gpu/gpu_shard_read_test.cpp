// Sharded arrays read into device memory: inner chunks fetched per shard (whole shards or
// byte ranges) and decoded in batches on the GPU, compared with the CPU read; missing
// shards and inner chunks, the index at the start, nested sharding, CPU-only inner codecs,
// and a damaged inner chunk. Planning runs everywhere; reads need a GPU.
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/selection_testing.h"
#include "gpu/gpu_testing.h"
#include "gpu/device_read.h"
#include "core/partial_chunk_codec.h"
#include "gpu/device_chain.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/gpu.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

const json kLittle = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};

json blosc_lz4(std::size_t typesize) {
  return {{"name", "blosc"},
          {"configuration", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", typesize}, {"blocksize", 0}}}};
}

json sharding(const Shape& inner, const json& codecs, const std::string& location = "end") {
  return json::array({{{"name", "sharding_indexed"},
                       {"configuration",
                        {{"chunk_shape", inner},
                         {"codecs", codecs},
                         {"index_codecs", json::array({kLittle, {{"name", "crc32c"}}})},
                         {"index_location", location}}}}});
}

Array make_array(const std::shared_ptr<Store>& store, const Shape& shape, const Shape& shard, const json& codecs,
                 DataType dtype = DataType::float_(32)) {
  ArraySpec spec;
  spec.shape = shape;
  spec.chunks = shard;
  spec.dtype = dtype;
  spec.codecs = codecs;
  spec.fill_value = json(7);
  return Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()));
}

// Values with runs (so that blosc compresses) and a block left at the fill value, so that
// some inner chunks are not stored.
void fill(Array& array, std::uint64_t seed) {
  const Shape& shape = array.shape();
  const std::size_t n = static_cast<std::size_t>(shape[0] * shape[1]);
  std::vector<float> values(n);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<float>((i / 5) % 97) + static_cast<float>(rng() % 3);
  for (std::size_t r = 0; r < 10 && r < shape[0]; ++r) {
    for (std::size_t c = 0; c < 16 && c < shape[1]; ++c) values[r * shape[1] + c] = 7.0f;
  }
  array.write({}, NDView{reinterpret_cast<std::byte*>(values.data()), shape, NDView::c_strides(shape, 4),
                         array.dtype(), MemoryKind::kHost});
}


// The device reads inner chunks where the chain is sharding alone (its partial codec says
// where they are), and their chain is the one the device halves plan (no GPU needed).
TEST(GpuShardPlan, InnerChunksOfPlainShardingOnly) {
  install_gpu_support();
  auto store = MemoryStore::create();
  Array plain = make_array(store, {50, 70}, {20, 32}, sharding({10, 8}, json::array({kLittle, blosc_lz4(4)})));
  const PartialChunkCodec* partial = plain.metadata().prepared_chain().partial();
  ASSERT_NE(partial, nullptr);
  EXPECT_EQ(partial->inner_chain()->spec().shape, (Shape{10, 8}));
  EXPECT_EQ(partial->num_inner_chunks(), 8u);
  const gpu::DeviceChain inner(partial->inner_chain(), 1);
  EXPECT_FALSE(inner.host_whole_chain());
  ASSERT_EQ(inner.device_stages().size(), 1u);
  // Not sharded, or sharding with a codec around it: no inner chunks to read.
  Array unsharded = make_array(MemoryStore::create(), {50, 70}, {20, 32}, json::array({kLittle}));
  EXPECT_EQ(unsharded.metadata().prepared_chain().partial(), nullptr);
  json wrapped = sharding({10, 8}, json::array({kLittle}));
  wrapped.push_back({{"name", "crc32c"}});
  Array outer = make_array(MemoryStore::create(), {50, 70}, {20, 32}, wrapped);
  EXPECT_EQ(outer.metadata().prepared_chain().partial(), nullptr);
  EXPECT_TRUE(gpu::DeviceChain(outer.metadata().codecs->prepare(outer.metadata().chunk_spec()), 1).host_whole_chain());
}

TEST(GpuShardRead, MatchesCpu) {
  REQUIRE_GPU();
  const json inner_nested = sharding({5, 4}, json::array({kLittle, blosc_lz4(4)}));
  struct Case {
    std::string name;
    json codecs;
    bool on_gpu;
  };
  const std::vector<Case> cases = {
      {"blosc inner, index at the end", sharding({10, 8}, json::array({kLittle, blosc_lz4(4)})), true},
      {"lz4 + crc32c inner, index at the start",
       sharding({10, 8}, json::array({kLittle, {{"name", "numcodecs.lz4"}}, {{"name", "crc32c"}}}), "start"), true},
      {"raw inner", sharding({10, 8}, json::array({kLittle})), true},
      {"zstd inner (CPU stage)", sharding({10, 8}, json::array({kLittle, {{"name", "zstd"}, {"configuration", {{"level", 1}}}}})),
       false},
      {"nested sharding", sharding({10, 8}, inner_nested), false},
  };
  std::mt19937_64 rng(5);
  for (const Case& c : cases) {
    auto store = MemoryStore::create();
    Array array = make_array(store, {50, 70}, {20, 32}, c.codecs);
    fill(array, rng());
    ASSERT_TRUE(store->get("a/c/1/1").has_value()) << c.name;
    store->erase("a/c/1/1");  // a missing shard: its inner chunks read as the fill value
    const std::uint64_t on_gpu_before = gpu::read_stats().chunks_decoded_on_gpu.load();
    expect_same_read(array, {}, c.name + ": all");
    if (c.on_gpu) {
      EXPECT_GT(gpu::read_stats().chunks_decoded_on_gpu.load(), on_gpu_before) << c.name;
    }
    // One element, a column and random selections: few inner chunks per shard, read as ranges.
    expect_same_read(array, {Slice{33, 34, 1}, Slice{40, 41, 1}}, c.name + ": one element");
    expect_same_read(array, {Slice{0, 50, 1}, Slice{65, 66, 1}}, c.name + ": a column");
    for (int k = 0; k < 6; ++k) {
      const Selection sel = testing::random_selection(rng, array.shape());
      expect_same_read(array, sel, c.name + " [" + testing::describe_selection(sel) + "]");
    }
    // Several batches, each of a few inner chunks.
    {
      ScopedConfig small_batches([](Config& c) { c.gpu.batch_budget_bytes = 10 * 8 * 4 * 3; });
      expect_same_read(array, {}, c.name + ": small batches");
    }
  }
}

TEST(GpuShardRead, DamagedInnerChunkNamesItsShard) {
  REQUIRE_GPU();
  auto store = MemoryStore::create();
  Array array = make_array(store, {40, 64}, {20, 32}, sharding({10, 8}, json::array({kLittle, {{"name", "crc32c"}}})));
  fill(array, 9);
  auto shard = store->get("a/c/1/0");
  ASSERT_TRUE(shard.has_value());
  std::vector<std::byte> broken(shard->view().begin(), shard->view().end());
  broken[100] ^= std::byte{0x40};  // inside the first inner chunk's data
  store->set("a/c/1/0", {broken.data(), broken.size()});
  EXPECT_THROW(array.read(), DataLossError);
  ScopedGpu device;
  try {
    array.read();
    ADD_FAILURE() << "the damaged inner chunk was not reported";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("c/1/0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zarrkit
