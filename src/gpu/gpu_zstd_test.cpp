// zarrkit's zstd kernels on the device (gpu/codecs/zstd_device.h) against libzstd and the
// same stages run on the host (gpu/zstd/zstd_host_decoder.h): the differential set of
// zstd_test_frames.h in one batch, many small chunks, few large frames, damaged frames
// (the device fuzz test, meant to run under compute-sanitizer memcheck), and reads through
// the engine with Config::gpu.zstd_kernels on. Every output slot is followed by guard bytes
// that must stay untouched. Skips without a GPU; ZARRKIT_GPU_TEST_QUICK=1 keeps smaller sets
// (for the sanitizers), ZARRKIT_ZSTD_DEVICE_MUTATIONS sets how many damaged frames.
#include <cstdlib>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/settings_env.h"
#include "engine/selection_testing.h"
#include "gpu/codecs/zstd_device_runner.h"
#include "gpu/device_read.h"
#include "gpu/gpu_testing.h"
#include "gpu/zstd/zstd_host_decoder.h"
#include "gpu/zstd/zstd_mutations.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using gpu::ZstdDeviceRunner;
using gpu::zstd::testing::Bytes;
namespace zt = gpu::zstd::testing;

bool quick() { return environment_variable("ZARRKIT_GPU_TEST_QUICK") == "1"; }

// Decodes `inputs` on the device and checks each chunk against the host stages: the same
// verdict, the same bytes where it decodes; `expected` (when given) are the right bytes.
void expect_device_equals_host(const std::vector<Bytes>& inputs, const std::vector<std::uint64_t>& sizes,
                               const std::vector<std::string>& names, const std::vector<const Bytes*>& expected = {}) {
  ZstdDeviceRunner runner(inputs, sizes);
  runner.launch();
  const std::vector<std::int32_t> status = runner.statuses();
  EXPECT_TRUE(runner.guards_intact()) << "a kernel wrote outside an output slot";
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Bytes host(sizes[i]);
    const gpu::zstd::HostDecodeResult h = gpu::zstd::decode_on_host(inputs[i].data(), inputs[i].size(), host.data(), sizes[i]);
    const bool host_ok = h.error == gpu::zstd::kOk && h.size == sizes[i];
    const std::string what = fmt::format("{}: device {}, host {}", names[i], gpu::zstd::error_name(status[i]),
                                         host_ok ? "ok" : gpu::zstd::error_name(h.error));
    ASSERT_EQ(status[i] == gpu::zstd::kOk, host_ok) << what;
    if (!host_ok) continue;
    const Bytes device = runner.output(i);
    ASSERT_TRUE(device == host) << what << ": the device's bytes differ from the host's";
    if (!expected.empty() && expected[i] != nullptr) {
      ASSERT_TRUE(device == *expected[i]) << what << ": wrong bytes";
    }
  }
}

TEST(GpuZstdKernels, DifferentialSetInOneBatch) {
  REQUIRE_GPU();
  const std::vector<zt::Frame> frames = zt::standard_frames(quick());
  std::vector<Bytes> inputs;
  std::vector<std::uint64_t> sizes;
  std::vector<std::string> names;
  std::vector<const Bytes*> expected;
  for (const auto& f : frames) {
    inputs.push_back(f.bytes);
    sizes.push_back(f.original.size());
    names.push_back(f.name);
    expected.push_back(&f.original);
  }
  // The same frames with one byte too many and too few of output: each refused.
  for (const auto& f : frames) {
    inputs.push_back(f.bytes);
    sizes.push_back(f.original.size() + 1);
    names.push_back(f.name + ", output one byte larger");
    expected.push_back(nullptr);
    if (f.original.empty()) continue;
    inputs.push_back(f.bytes);
    sizes.push_back(f.original.size() - 1);
    names.push_back(f.name + ", output one byte smaller");
    expected.push_back(nullptr);
  }
  expect_device_equals_host(inputs, sizes, names, expected);
}

TEST(GpuZstdKernels, ManySmallChunksAndFewLargeFrames) {
  REQUIRE_GPU();
  const std::size_t small = quick() ? 200 : 2000;
  std::vector<Bytes> inputs, originals;
  std::vector<std::uint64_t> sizes;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < small; ++i) {
    zt::Settings s;
    s.level = static_cast<int>(i % 9) - 2;
    s.checksum = i % 3 == 0;
    originals.push_back(zt::family_n(65536, static_cast<std::uint32_t>(i)));
    inputs.push_back(zt::compress(originals.back(), s));
    names.push_back(fmt::format("64 KiB chunk {} (level {})", i, s.level));
  }
  // Frames of many blocks: the blocks of one frame wait for each other's bytes.
  for (int k = 0; k < (quick() ? 2 : 6); ++k) {
    zt::Settings s;
    s.level = k % 2 ? 1 : 9;
    s.checksum = k % 3 == 0;
    s.long_distance = k == 4;
    const std::size_t size = (quick() ? 3u : 12u) << 20;
    originals.push_back(k == 5 ? zt::text(size, 90) : zt::family_n(size, 80 + static_cast<std::uint32_t>(k)));
    inputs.push_back(zt::compress(originals.back(), s));
    names.push_back(fmt::format("{} MiB frame {}", size >> 20, k));
  }
  for (const auto& o : originals) sizes.push_back(o.size());
  std::vector<const Bytes*> expected;
  for (const auto& o : originals) expected.push_back(&o);
  expect_device_equals_host(inputs, sizes, names, expected);
}

// More blocks than the sequences stage's lanes in shared memory hold on any device so far
// (83 per multiprocessor on an H100 or H200): the lanes beyond them keep their tables in
// global memory, in the same pass.
TEST(GpuZstdKernels, MoreBlocksThanSharedMemoryLanes) {
  REQUIRE_GPU();
  constexpr std::size_t kChunks = 24000;
  std::vector<Bytes> inputs(kChunks), originals(kChunks);
  std::vector<std::uint64_t> sizes;
  std::vector<std::string> names;
  std::vector<const Bytes*> expected;
  for (std::size_t i = 0; i < kChunks; ++i) {
    zt::Settings s;
    s.level = static_cast<int>(i % 5) + 1;
    originals[i] = zt::family_n(2048 + 64 * (i % 16), static_cast<std::uint32_t>(i));
    inputs[i] = zt::compress(originals[i], s);
    sizes.push_back(originals[i].size());
    names.push_back(fmt::format("small chunk {}", i));
    expected.push_back(&originals[i]);
  }
  expect_device_equals_host(inputs, sizes, names, expected);
}

// The device fuzz test: damaged frames decode on the device as on the host, or fail; no
// access outside the buffers (compute-sanitizer memcheck); guards untouched.
TEST(GpuZstdKernels, DamagedFramesFailAloneAndNeverDecodeWrong) {
  REQUIRE_GPU();
  const std::vector<zt::Frame> frames = zt::standard_frames(true);
  std::vector<zt::HeaderSpots> spots;
  for (const auto& f : frames) spots.push_back(zt::header_spots(f.bytes));
  const char* env = std::getenv("ZARRKIT_ZSTD_DEVICE_MUTATIONS");
  const int n = env ? std::atoi(env) : quick() ? 600 : 6000;
  std::mt19937 rng(777);
  for (int round = 0; round * 1000 < n; ++round) {
    std::vector<Bytes> inputs;
    std::vector<std::uint64_t> sizes;
    std::vector<std::string> names;
    for (int i = round * 1000; i < std::min(n, (round + 1) * 1000); ++i) {
      const std::size_t k = static_cast<std::size_t>(i) % frames.size();
      inputs.push_back(zt::mutate(frames[k].bytes, frames[rng() % frames.size()].bytes, spots[k], rng));
      sizes.push_back(frames[k].original.size() + (rng() % 8 == 0 ? rng() % 64 : 0));
      names.push_back(fmt::format("{}, mutation {}", frames[k].name, i));
    }
    // Some undamaged frames among them: they must decode whatever their neighbours do.
    std::vector<const Bytes*> expected(inputs.size(), nullptr);
    for (std::size_t k = 0; k < frames.size(); k += 5) {
      inputs.push_back(frames[k].bytes);
      sizes.push_back(frames[k].original.size());
      names.push_back(frames[k].name + ", undamaged");
      expected.push_back(&frames[k].original);
    }
    expect_device_equals_host(inputs, sizes, names, expected);
    if (HasFatalFailure()) return;
  }
}

// ---- Through the engine -----------------------------------------------------------------------

using json = nlohmann::json;

struct ZstdKernelsOn {
  ScopedConfig scoped{[](Config& c) { c.gpu.zstd_kernels = KernelUse::kOn; }};
};

const json kLittle = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};

Array make_array(const std::shared_ptr<Store>& store, const std::string& path, const json& codecs, const DataType& dtype) {
  ArraySpec spec;
  spec.shape = {300, 500};
  spec.chunks = {128, 256};
  spec.dtype = dtype;
  spec.codecs = codecs;
  spec.fill_value = json(3);
  return Array::create(store, path, make_array_metadata(spec, CodecRegistry::builtin()));
}

void fill(Array& array, std::uint64_t seed) {
  const std::size_t itemsize = array.dtype().size();
  std::vector<std::byte> values(300 * 500 * itemsize);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<std::byte>(i % itemsize == 0 ? (i / 40 + rng() % 3) : (i / 4096));
  }
  array.write({}, NDView{values.data(), array.shape(), NDView::c_strides(array.shape(), itemsize), array.dtype(),
                         MemoryKind::kHost});
}

json zstd(int level, bool checksum) {
  json c = {{"level", level}};
  if (checksum) c["checksum"] = true;
  return {{"name", "zstd"}, {"configuration", c}};
}

// Blosc with the inner codec of this file's kernels: its blocks decode through them.
json blosc(const std::string& cname, const std::string& shuffle, int blocksize, int clevel = 5) {
  return {{"name", "blosc"},
          {"configuration",
           {{"cname", cname}, {"clevel", clevel}, {"shuffle", shuffle}, {"typesize", 4}, {"blocksize", blocksize}}}};
}

TEST(GpuZstdKernels, ReadsEqualTheCpuAndUseTheKernels) {
  REQUIRE_GPU();
  ZstdKernelsOn on;
  const std::vector<std::pair<std::string, json>> chains = {
      {"zstd 1", json::array({kLittle, zstd(1, false)})},
      {"zstd 19 with checksum", json::array({kLittle, zstd(19, true)})},
      {"zstd -5", json::array({kLittle, zstd(-5, false)})},
      {"zstd then crc32c", json::array({kLittle, zstd(3, false), {{"name", "crc32c"}}})},
      {"sharded zstd",
       json::array({{{"name", "sharding_indexed"},
                     {"configuration",
                      {{"chunk_shape", json::array({32, 64})},
                       {"codecs", json::array({kLittle, zstd(3, false)})},
                       {"index_codecs", json::array({kLittle, {{"name", "crc32c"}}})}}}}})},
      {"blosc zstd shuffle", json::array({kLittle, blosc("zstd", "shuffle", 0)})},
      {"blosc zstd bitshuffle, blocks of 10000", json::array({kLittle, blosc("zstd", "bitshuffle", 10000)})},
      {"blosc zstd noshuffle, blocks of 4096", json::array({kLittle, blosc("zstd", "noshuffle", 4096)})},
      {"sharded blosc zstd",
       json::array({{{"name", "sharding_indexed"},
                     {"configuration",
                      {{"chunk_shape", json::array({32, 64})},
                       {"codecs", json::array({kLittle, blosc("zstd", "shuffle", 0)})},
                       {"index_codecs", json::array({kLittle, {{"name", "crc32c"}}})}}}}})},
  };
  std::mt19937_64 rng(5);
  for (const auto& [name, codecs] : chains) {
    for (const DataType& dtype : {DataType::float_(32), DataType::uint_(8)}) {
      auto store = MemoryStore::create();
      Array array = make_array(store, "a", codecs, dtype);
      fill(array, rng());
      store->erase("a/c/1/1");
      const std::string what = fmt::format("{} {}", name, dtype.name());
      const std::uint64_t by_kernels = gpu::read_stats().chunks_decoded_by_zstd_kernels.load();
      const std::uint64_t recovered = gpu::read_stats().gpu_rejections_recovered.load();
      expect_same_read(array, {}, what + ": all");
      EXPECT_GT(gpu::read_stats().chunks_decoded_by_zstd_kernels.load(), by_kernels) << what << ": kernels not used";
      for (int k = 0; k < 3; ++k) {
        const Selection sel = testing::random_selection(rng, array.shape());
        expect_same_read(array, sel, what + " [" + testing::describe_selection(sel) + "]");
      }
      EXPECT_EQ(gpu::read_stats().gpu_rejections_recovered.load(), recovered) << what << ": the kernels refused chunks";
    }
  }
}

// By default (KernelUse::kAuto) a small read, where one warp's pace would show, decodes on
// the host.
TEST(GpuZstdKernels, SmallReadsDecodeOnTheHostByDefault) {
  REQUIRE_GPU();
  auto store = MemoryStore::create();
  Array array = make_array(store, "a", json::array({kLittle, zstd(3, false)}), DataType::float_(32));
  fill(array, 9);
  const std::uint64_t by_kernels = gpu::read_stats().chunks_decoded_by_zstd_kernels.load();
  expect_same_read(array, {}, "zstd, kernels auto");
  EXPECT_EQ(gpu::read_stats().chunks_decoded_by_zstd_kernels.load(), by_kernels);
}

// A damaged chunk fails with the host's error, naming its key; the others read.
TEST(GpuZstdKernels, DamagedChunkGivesTheCpuError) {
  REQUIRE_GPU();
  ZstdKernelsOn on;
  auto store = MemoryStore::create();
  Array array = make_array(store, "a", json::array({kLittle, zstd(3, true)}), DataType::float_(32));
  fill(array, 4);
  auto chunk = store->get("a/c/1/0");
  ASSERT_TRUE(chunk.has_value());
  std::vector<std::byte> damaged(chunk->data(), chunk->data() + chunk->size());
  damaged[damaged.size() / 2] ^= std::byte{0x10};
  store->set("a/c/1/0", ByteView(damaged.data(), damaged.size()));
  std::string cpu_error;
  try {
    array.read();
  } catch (const DataLossError& e) {
    cpu_error = e.what();
  }
  ASSERT_FALSE(cpu_error.empty());
  {
    ScopedGpu device;
    try {
      array.read();
      ADD_FAILURE() << "the damaged chunk was not reported";
    } catch (const DataLossError& e) {
      EXPECT_NE(std::string(e.what()).find("c/1/0"), std::string::npos) << e.what();
    }
  }
  expect_same_read(array, {Slice{0, 128, 1}, Slice{0, 500, 1}}, "the undamaged chunks");
}

}  // namespace
}  // namespace zarrkit
