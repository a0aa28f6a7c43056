// zstd and gzip chunks decoded by nvCOMP (opt-in, loaded at run time) compared with the CPU
// read; a chunk nvCOMP decodes to the wrong size goes back to the CPU codec, whose error
// names the chunk. Skips without a GPU or without nvCOMP.
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/selection_testing.h"
#include "gpu/gpu_testing.h"
#include "gpu/device_read.h"
#include "gpu/nvcomp_runtime.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/gpu.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

#define REQUIRE_GPU_AND_NVCOMP()                                                                  \
  do {                                                                                            \
    REQUIRE_GPU();                                                                                \
    if (gpu::Nvcomp::get() == nullptr) GTEST_SKIP() << gpu::Nvcomp::reason();                     \
  } while (0)

// Switches nvCOMP decoding on for one test (also for the tests' few chunks).
struct NvcompOn {
  ScopedConfig scoped{[](Config& c) {
    c.gpu.nvcomp_decode = true;
    c.gpu.nvcomp_min_chunks = 1;
  }};
};

Array make_array(const std::shared_ptr<Store>& store, const std::string& path, const Shape& chunks, const json& codecs,
                 const DataType& dtype) {
  ArraySpec spec;
  spec.shape = {200, 300};
  spec.chunks = chunks;
  spec.dtype = dtype;
  spec.codecs = codecs;
  spec.fill_value = json(5);
  return Array::create(store, path, make_array_metadata(spec, CodecRegistry::builtin()));
}

void fill(Array& array, std::uint64_t seed) {
  const std::size_t itemsize = array.dtype().size();
  std::vector<std::byte> values(200 * 300 * itemsize);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<std::byte>(i % itemsize == 0 ? (i / 40 + rng() % 3) : (i / 4096));
  }
  array.write({}, NDView{values.data(), array.shape(), NDView::c_strides(array.shape(), itemsize), array.dtype(),
                         MemoryKind::kHost});
}


const json kLittle = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
const json kBig = {{"name", "bytes"}, {"configuration", {{"endian", "big"}}}};

TEST(GpuNvcompRead, ZstdAndGzipMatchCpu) {
  REQUIRE_GPU_AND_NVCOMP();
  NvcompOn on;
  const std::vector<std::pair<std::string, json>> chains = {
      {"zstd 1", json::array({kLittle, {{"name", "zstd"}, {"configuration", {{"level", 1}}}}})},
      {"zstd 7 big-endian", json::array({kBig, {{"name", "zstd"}, {"configuration", {{"level", 7}}}}})},
      {"gzip 1", json::array({kLittle, {{"name", "gzip"}, {"configuration", {{"level", 1}}}}})},
      {"sharded zstd",
       json::array({{{"name", "sharding_indexed"},
                     {"configuration",
                      {{"chunk_shape", json::array({32, 32})},
                       {"codecs", json::array({kLittle, {{"name", "zstd"}, {"configuration", {{"level", 3}}}}})},
                       {"index_codecs", json::array({kLittle, {{"name", "crc32c"}}})}}}}})},
  };
  std::mt19937_64 rng(11);
  for (const auto& [name, codecs] : chains) {
    for (const DataType& dtype : {DataType::float_(32), DataType::uint_(16)}) {
      auto store = MemoryStore::create();
      Array array = make_array(store, "a", {64, 96}, codecs, dtype);
      fill(array, rng());
      store->erase("a/c/1/1");  // missing: the fill value
      const std::string what = fmt::format("{} {}", name, dtype.name());
      const std::uint64_t by_nvcomp = gpu::read_stats().chunks_decoded_by_nvcomp.load();
      const std::uint64_t recovered = gpu::read_stats().gpu_rejections_recovered.load();
      expect_same_read(array, {}, what + ": all");
      EXPECT_GT(gpu::read_stats().chunks_decoded_by_nvcomp.load(), by_nvcomp) << what << ": nvCOMP was not used";
      for (int k = 0; k < 4; ++k) {
        const Selection sel = testing::random_selection(rng, array.shape());
        expect_same_read(array, sel, what + " [" + testing::describe_selection(sel) + "]");
      }
      EXPECT_EQ(gpu::read_stats().gpu_rejections_recovered.load(), recovered) << what << ": nvCOMP refused chunks";
    }
  }
}

TEST(GpuNvcompRead, WrongSizeGoesBackToTheCpu) {
  REQUIRE_GPU_AND_NVCOMP();
  NvcompOn on;
  const json codecs = json::array({kLittle, {{"name", "zstd"}, {"configuration", {{"level", 1}}}}});
  auto store = MemoryStore::create();
  Array array = make_array(store, "a", {64, 96}, codecs, DataType::float_(32));
  Array small = make_array(store, "small", {16, 16}, codecs, DataType::float_(32));
  fill(array, 1);
  fill(small, 2);
  // A well-formed zstd frame of a smaller chunk under a key of the big array.
  const auto frame = store->get("small/c/0/0");
  ASSERT_TRUE(frame.has_value());
  store->set("a/c/2/1", frame->view());
  std::string cpu_error;
  try {
    array.read();
  } catch (const DataLossError& e) {
    cpu_error = e.what();
  }
  ASSERT_FALSE(cpu_error.empty());
  ScopedGpu device;
  try {
    array.read();
    ADD_FAILURE() << "the wrong-size chunk was not reported";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("c/2/1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zarrkit
