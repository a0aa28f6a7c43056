// zarrkit's deflate kernel on the device (gpu/codecs/deflate_device.h) against zlib and the
// same code run on the host with an emulated warp (gpu/deflate/deflate_host_decoder.h): the
// differential set of deflate_test_streams.h in one batch, many small chunks and a few large
// ones, damaged streams (the device fuzz test, meant to run under compute-sanitizer
// memcheck), and reads through the engine with Config::gpu.deflate_kernels on. Every output
// slot is preceded and followed by guard bytes that must stay untouched. Skips without a
// GPU; ZARRKIT_GPU_TEST_QUICK=1 keeps smaller sets (for the sanitizers),
// ZARRKIT_DEFLATE_DEVICE_MUTATIONS sets how many damaged streams.
#include <cstdlib>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/settings_env.h"
#include "engine/selection_testing.h"
#include "gpu/codecs/deflate_device_runner.h"
#include "gpu/deflate/deflate_host_decoder.h"
#include "gpu/deflate/deflate_mutations.h"
#include "gpu/device_codec.h"
#include "gpu/device_read.h"
#include "gpu/gpu_testing.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using gpu::DeflateDeviceRunner;
using gpu::deflate::testing::Bytes;
namespace dt = gpu::deflate::testing;
namespace df = gpu::deflate;

bool quick() { return environment_variable("ZARRKIT_GPU_TEST_QUICK") == "1"; }

struct Batch {
  std::vector<Bytes> inputs;
  std::vector<std::uint64_t> sizes;
  std::vector<df::Format> formats;
  std::vector<std::string> names;
  std::vector<const Bytes*> expected;  // the right bytes, where known
  void add(const Bytes& in, std::uint64_t size, df::Format f, std::string name, const Bytes* want) {
    inputs.push_back(in);
    sizes.push_back(size);
    formats.push_back(f);
    names.push_back(std::move(name));
    expected.push_back(want);
  }
};

// Decodes the batch on the device and checks each chunk: where its right bytes are known
// (streams the host tests decode to them), those; else against the host's run of the same
// code (an emulated warp, slow on large chunks): the same verdict, the same bytes.
void expect_device_equals_host(const Batch& b) {
  DeflateDeviceRunner runner(b.inputs, b.sizes, b.formats);
  runner.launch();
  const std::vector<std::int32_t> status = runner.statuses();
  EXPECT_TRUE(runner.guards_intact()) << "the kernel wrote outside an output slot";
  for (std::size_t i = 0; i < b.inputs.size(); ++i) {
    if (b.expected[i] != nullptr) {
      ASSERT_EQ(status[i], df::kOk) << b.names[i] << ": " << df::error_name(status[i]);
      ASSERT_TRUE(runner.output(i) == *b.expected[i]) << b.names[i] << ": wrong bytes";
      continue;
    }
    Bytes host(b.sizes[i]);
    df::HostDecodeResult h = df::decode_on_host(b.formats[i], b.inputs[i].data(), b.inputs[i].size(), host.data(), b.sizes[i]);
    if (h.error == df::kOk && h.size != b.sizes[i]) h.error = df::kErrOutputSize;
    const std::string what = fmt::format("{}: device {}, host {}", b.names[i], df::error_name(status[i]), df::error_name(h.error));
    ASSERT_EQ(status[i], h.error) << what;
    if (h.error != df::kOk) continue;
    const Bytes device = runner.output(i);
    ASSERT_TRUE(device == host) << what << ": the device's bytes differ from the host's";
  }
}

TEST(GpuDeflateKernels, DifferentialSetInOneBatch) {
  REQUIRE_GPU();
  const std::vector<dt::Stream> streams = dt::standard_streams(quick());
  Batch b;
  for (const auto& s : streams) b.add(s.bytes, s.original.size(), s.format, s.name, &s.original);
  // The same streams with one byte too many and too few of output: each refused.
  for (const auto& s : streams) {
    b.add(s.bytes, s.original.size() + 1, s.format, s.name + ", output one byte larger", nullptr);
    if (!s.original.empty()) b.add(s.bytes, s.original.size() - 1, s.format, s.name + ", output one byte smaller", nullptr);
  }
  expect_device_equals_host(b);
}

TEST(GpuDeflateKernels, ManySmallChunksAndFewLargeOnes) {
  REQUIRE_GPU();
  const std::size_t small = quick() ? 200 : 3000;
  std::vector<Bytes> originals;
  std::vector<Bytes> encoded;
  std::vector<df::Format> formats;
  for (std::size_t i = 0; i < small; ++i) {
    originals.push_back(dt::float_field(65536, i));
    const df::Format f = static_cast<df::Format>(i % 3);
    const int bits = f == df::kRaw ? -15 : f == df::kZlib ? 15 : 31;
    encoded.push_back(dt::zlib_deflate(originals.back(), static_cast<int>(i % 10), bits));
    formats.push_back(f);
  }
  for (int k = 0; k < (quick() ? 2 : 4); ++k) {
    const std::size_t size = (quick() ? 2u : 8u) << 20;
    originals.push_back(k % 2 ? dt::text_like(size, 90 + static_cast<std::uint64_t>(k)) : dt::float_field(size, 80));
    encoded.push_back(dt::zlib_deflate(originals.back(), k == 0 ? 1 : 6, 31));
    formats.push_back(df::kGzip);
  }
  Batch b;
  for (std::size_t i = 0; i < originals.size(); ++i) {
    b.add(encoded[i], originals[i].size(), formats[i], fmt::format("chunk {} ({} bytes)", i, originals[i].size()),
          &originals[i]);
  }
  expect_device_equals_host(b);
}

// The device fuzz test: damaged streams decode on the device as on the host, or fail; no
// access outside the buffers (compute-sanitizer memcheck); guards untouched.
TEST(GpuDeflateKernels, DamagedStreamsFailAloneAndNeverDecodeWrong) {
  REQUIRE_GPU();
  std::vector<dt::Stream> streams;
  for (auto& s : dt::standard_streams(true)) {
    if (s.original.size() <= 50000) streams.push_back(std::move(s));
  }
  const char* env = std::getenv("ZARRKIT_DEFLATE_DEVICE_MUTATIONS");
  const int n = env ? std::atoi(env) : quick() ? 600 : 6000;
  std::mt19937 rng(777);
  for (int round = 0; round * 1000 < n; ++round) {
    Batch b;
    for (int i = round * 1000; i < std::min(n, (round + 1) * 1000); ++i) {
      const auto& s = streams[static_cast<std::size_t>(i) % streams.size()];
      b.add(dt::mutate(s.bytes, rng), dt::mutated_capacity(s.original.size(), rng), s.format,
            fmt::format("{}, mutation {}", s.name, i), nullptr);
    }
    // Some undamaged streams among them: they must decode whatever their neighbours do.
    for (std::size_t k = 0; k < streams.size(); k += 5) {
      b.add(streams[k].bytes, streams[k].original.size(), streams[k].format, streams[k].name + ", undamaged",
            &streams[k].original);
    }
    expect_device_equals_host(b);
    if (HasFatalFailure()) return;
  }
}

// ---- Through the engine -----------------------------------------------------------------------

using json = nlohmann::json;

struct DeflateKernelsOn {
  ScopedConfig scoped{[](Config& c) { c.gpu.deflate_kernels = KernelUse::kOn; }};
};

const json kLittle = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};

Array make_array(const std::shared_ptr<Store>& store, const std::string& path, const json& codecs, const DataType& dtype,
                 Shape chunks = {128, 256}) {
  ArraySpec spec;
  spec.shape = {300, 500};
  spec.chunks = std::move(chunks);
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

json gzip(int level) { return {{"name", "gzip"}, {"configuration", {{"level", level}}}}; }
json zlib(int level) { return {{"name", "numcodecs.zlib"}, {"configuration", {{"level", level}}}}; }

// Blosc with the inner codec of this file's kernels: its blocks decode through them.
json blosc(const std::string& cname, const std::string& shuffle, int blocksize, int clevel = 5) {
  return {{"name", "blosc"},
          {"configuration",
           {{"cname", cname}, {"clevel", clevel}, {"shuffle", shuffle}, {"typesize", 4}, {"blocksize", blocksize}}}};
}

TEST(GpuDeflateKernels, ReadsEqualTheCpuAndUseTheKernels) {
  REQUIRE_GPU();
  DeflateKernelsOn on;
  const std::vector<std::pair<std::string, json>> chains = {
      {"gzip 1", json::array({kLittle, gzip(1)})},
      {"gzip 9", json::array({kLittle, gzip(9)})},
      {"gzip 0 (stored)", json::array({kLittle, gzip(0)})},
      {"zlib 6", json::array({kLittle, zlib(6)})},
      {"gzip then crc32c", json::array({kLittle, gzip(5), {{"name", "crc32c"}}})},
      {"sharded gzip",
       json::array({{{"name", "sharding_indexed"},
                     {"configuration",
                      {{"chunk_shape", json::array({32, 64})},
                       {"codecs", json::array({kLittle, gzip(3)})},
                       {"index_codecs", json::array({kLittle, {{"name", "crc32c"}}})}}}}})},
      {"blosc zlib shuffle", json::array({kLittle, blosc("zlib", "shuffle", 0)})},
      {"blosc zlib bitshuffle, blocks of 10000", json::array({kLittle, blosc("zlib", "bitshuffle", 10000)})},
      {"blosc zlib noshuffle, clevel 1", json::array({kLittle, blosc("zlib", "noshuffle", 0, 1)})},
  };
  std::mt19937_64 rng(5);
  for (const auto& [name, codecs] : chains) {
    for (const DataType& dtype : {DataType::float_(32), DataType::uint_(8)}) {
      auto store = MemoryStore::create();
      Array array = make_array(store, "a", codecs, dtype);
      fill(array, rng());
      store->erase("a/c/1/1");
      const std::string what = fmt::format("{} {}", name, dtype.name());
      const std::uint64_t by_kernels = gpu::read_stats().chunks_decoded_by_deflate_kernels.load();
      const std::uint64_t recovered = gpu::read_stats().gpu_rejections_recovered.load();
      expect_same_read(array, {}, what + ": all");
      EXPECT_GT(gpu::read_stats().chunks_decoded_by_deflate_kernels.load(), by_kernels) << what << ": kernel not used";
      for (int k = 0; k < 3; ++k) {
        const Selection sel = testing::random_selection(rng, array.shape());
        expect_same_read(array, sel, what + " [" + testing::describe_selection(sel) + "]");
      }
      EXPECT_EQ(gpu::read_stats().gpu_rejections_recovered.load(), recovered) << what << ": the kernel refused chunks";
    }
  }
}

// By default (KernelUse::kAuto) a small read, where one warp's pace would show, decodes on
// the host.
TEST(GpuDeflateKernels, SmallReadsDecodeOnTheHostByDefault) {
  REQUIRE_GPU();
  auto store = MemoryStore::create();
  Array array = make_array(store, "a", json::array({kLittle, gzip(3)}), DataType::float_(32));
  fill(array, 9);
  const std::uint64_t by_kernels = gpu::read_stats().chunks_decoded_by_deflate_kernels.load();
  expect_same_read(array, {}, "gzip, kernels auto");
  EXPECT_EQ(gpu::read_stats().chunks_decoded_by_deflate_kernels.load(), by_kernels);
}

// A warp decodes a chunk, so a read with the kernels keeps thousands of chunks in a batch
// (kChunksToFillTheDevice) where reads that decode on the host split into small batches to
// overlap their host phases.
TEST(GpuDeflateKernels, ReadsKeepBatchesLargeEnoughToFillTheDevice) {
  REQUIRE_GPU();
  auto store = MemoryStore::create();
  Array array = make_array(store, "a", json::array({kLittle, gzip(1)}), DataType::float_(32), {8, 8});
  fill(array, 6);
  const std::uint64_t chunks = 38 * 63;
  auto batches_of_a_read = [&](const std::string& what) {
    const std::uint64_t before = gpu::read_stats().batches.load();
    expect_same_read(array, {}, what);
    return gpu::read_stats().batches.load() - before;
  };
  const std::uint64_t on_host = batches_of_a_read("kernels auto: a small read, on the host");
  DeflateKernelsOn on;
  const std::uint64_t by_kernels = batches_of_a_read("kernels on");
  EXPECT_EQ(by_kernels, (chunks + gpu::kChunksToFillTheDevice - 1) / gpu::kChunksToFillTheDevice);
  EXPECT_GT(on_host, by_kernels);
}

// A damaged chunk fails with the host's error, naming its key; the others read.
TEST(GpuDeflateKernels, DamagedChunkGivesTheCpuError) {
  REQUIRE_GPU();
  DeflateKernelsOn on;
  auto store = MemoryStore::create();
  Array array = make_array(store, "a", json::array({kLittle, gzip(3)}), DataType::float_(32));
  fill(array, 4);
  auto chunk = store->get("a/c/1/0");
  ASSERT_TRUE(chunk.has_value());
  std::vector<std::byte> damaged(chunk->data(), chunk->data() + chunk->size());
  damaged[damaged.size() - 6] ^= std::byte{0x10};  // the crc32
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
