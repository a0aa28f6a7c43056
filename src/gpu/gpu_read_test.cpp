// Reads into device memory compared with reads into host memory, over a generated matrix
// (data types x codec chains x ragged chunk grids x selections), v2 arrays, missing and
// corrupt chunks, and the interop corpus. Tests that need a GPU skip without one; the
// typed errors of a machine without one are checked there.
#include <filesystem>
#include <fstream>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/settings_env.h"
#include "engine/selection_testing.h"
#include "gpu/gpu_testing.h"
#include "gpu/device_chain.h"
#include "gpu/device_read.h"
#include "gpu/device_settings.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/gpu.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/stores/memory_store.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// ---- Without a GPU: typed errors, everything else works -----------------------------------

TEST(GpuWithoutDevice, AskingForDeviceMemoryIsATypedError) {
  if (gpu_available()) GTEST_SKIP() << "a CUDA device is present: this test is for machines without one";
  install_gpu_support();  // works without a device
  EXPECT_FALSE(gpu_unavailable_reason().empty());
  EXPECT_THROW(enable_gpu(), UnsupportedError);
  EXPECT_EQ(global_config().memory, MemoryKind::kHost);
  EXPECT_THROW(ScopedGpu(), UnsupportedError);
  EXPECT_THROW(device_allocator().allocate(16), UnsupportedError);
  EXPECT_THROW(pinned_host_allocator().allocate(16), UnsupportedError);
  try {
    device_allocator().allocate(16);
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
  // A read that asks for device memory fails cleanly; host reads still work.
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {10};
  spec.chunks = {4};
  spec.dtype = DataType::int_(32);
  Array array = Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()));
  {
    ScopedConfig device([](Config& c) { c.memory = MemoryKind::kDevice; });
    EXPECT_THROW(array.read(), UnsupportedError);
  }
  EXPECT_EQ(array.read().nbytes(), 40u);
}

// ---- The generated matrix ---------------------------------------------------------------

struct ChainCase {
  std::string name;
  json codecs;  // v3 codecs list; "{T}" in a blosc typesize is replaced by the item size
};

json blosc(const std::string& cname, const std::string& shuffle, std::size_t typesize) {
  return {{"name", "blosc"},
          {"configuration", {{"cname", cname}, {"clevel", 5}, {"shuffle", shuffle}, {"typesize", typesize}, {"blocksize", 0}}}};
}

std::vector<ChainCase> chains(std::size_t itemsize, std::size_t ndim) {
  json reversed = json::array();
  for (std::size_t i = ndim; i-- > 0;) reversed.push_back(i);
  const json little = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
  const json big = {{"name", "bytes"}, {"configuration", {{"endian", "big"}}}};
  const json transpose = {{"name", "transpose"}, {"configuration", {{"order", reversed}}}};
  const json lz4 = {{"name", "numcodecs.lz4"}, {"configuration", {{"acceleration", 1}}}};
  const json crc = {{"name", "crc32c"}};
  const json crc_first = {{"name", "numcodecs.crc32c"}, {"configuration", {{"location", "start"}}}};
  const json zstd = {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}};
  const json gzip = {{"name", "gzip"}, {"configuration", {{"level", 1}}}};
  return {
      {"bytes", json::array({little})},
      {"bytes-big", json::array({big})},
      {"transpose", json::array({transpose, little})},
      {"blosc-lz4-shuffle", json::array({little, blosc("lz4", "shuffle", itemsize)})},
      {"blosc-lz4-bitshuffle", json::array({little, blosc("lz4", "bitshuffle", itemsize)})},
      {"blosc-blosclz", json::array({little, blosc("blosclz", "noshuffle", itemsize)})},
      {"blosc-blosclz-shuffle", json::array({big, blosc("blosclz", "shuffle", itemsize)})},
      {"blosc-zstd", json::array({little, blosc("zstd", "shuffle", itemsize)})},
      {"lz4", json::array({little, lz4})},
      {"crc32c", json::array({little, crc})},
      {"blosc-crc32c", json::array({little, blosc("lz4", "shuffle", itemsize), crc})},
      {"big-crc32c-first", json::array({big, crc_first})},
      {"zstd", json::array({little, zstd})},
      {"gzip-crc32c", json::array({little, gzip, crc})},
      {"transpose-big-blosc-crc", json::array({transpose, big, blosc("lz4", "bitshuffle", itemsize), crc})},
      {"sharding",
       json::array({{{"name", "sharding_indexed"},
                     {"configuration",
                      {{"chunk_shape", json::array()},  // filled in by the caller
                       {"codecs", json::array({little, blosc("lz4", "shuffle", itemsize)})},
                       {"index_codecs", json::array({little, crc})}}}}})},
  };
}

// Which part of a chain the GPU takes, as the device halves in the registry decide (no GPU
// needed: the halves register without one).
TEST(GpuChainPlan, SplitsChainsBetweenCpuAndGpu) {
  install_gpu_support();
  auto plan_for = [](const json& codecs, DataType dtype = DataType::float_(32)) {
    ArraySpec spec;
    spec.shape = {10, 20};
    spec.chunks = {5, 4};
    spec.dtype = dtype;
    spec.codecs = codecs;
    const ArrayMetadata m = make_array_metadata(spec, CodecRegistry::builtin());
    return gpu::DeviceChain(m.codecs->prepare(m.chunk_spec()), 1);
  };
  auto kinds = [](const gpu::DeviceChain& p) {
    std::string out;
    for (const auto& s : p.device_stages()) out += std::string(s.codec->name()) + " ";
    return out;
  };
  const auto cases = chains(4, 2);
  auto chain = [&](const std::string& name) {
    for (const auto& c : cases) {
      if (c.name == name) return c.codecs;
    }
    throw std::runtime_error(name);
  };
  {
    const auto p = plan_for(chain("bytes"));
    EXPECT_FALSE(p.host_whole_chain());
    EXPECT_TRUE(p.device_stages().empty() && p.host_stages().empty());
    EXPECT_TRUE(p.stored_as_laid_out());
    EXPECT_EQ(p.swap_unit(), 1u);
    EXPECT_EQ(p.stored_strides(), (std::vector<std::int64_t>{16, 4}));
  }
  EXPECT_EQ(plan_for(chain("transpose")).stored_strides(), (std::vector<std::int64_t>{4, 20}));  // stored as 4 x 5, F order
  EXPECT_EQ(plan_for(chain("bytes-big")).swap_unit(), 4u);
  EXPECT_EQ(plan_for(chain("bytes-big"), DataType::complex_(128)).swap_unit(), 8u);
  EXPECT_EQ(kinds(plan_for(chain("blosc-lz4-shuffle"))), "blosc ");
  EXPECT_EQ(kinds(plan_for(chain("lz4"))), "numcodecs.lz4 ");
  EXPECT_EQ(kinds(plan_for(chain("blosc-crc32c"))), "crc32c blosc ");
  EXPECT_EQ(kinds(plan_for(chain("transpose-big-blosc-crc"))), "crc32c blosc ");
  {
    const auto p = plan_for(chain("zstd"));  // nvCOMP is off unless asked for
    EXPECT_TRUE(p.device_stages().empty());
    EXPECT_EQ(p.host_stages().size(), 1u);
  }
  {
    const auto p = plan_for(chain("gzip-crc32c"));  // crc32c on the GPU would need the gzip output: all CPU
    EXPECT_EQ(kinds(p), "");
    EXPECT_EQ(p.host_stages().size(), 2u);
  }
  json sharding = chain("sharding");
  sharding[0]["configuration"]["chunk_shape"] = json::array({5, 2});
  EXPECT_TRUE(plan_for(sharding).host_whole_chain());
  {
    // A filter the GPU lacks, after the compressor in decode order, keeps everything on the CPU.
    const auto p = plan_for(json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                         {{"name", "numcodecs.shuffle"}, {"configuration", {{"elementsize", 4}}}},
                                         {{"name", "numcodecs.lz4"}}}));
    EXPECT_EQ(kinds(p), "");
    EXPECT_EQ(p.host_stages().size(), 2u);
  }
  // An array->array codec without a device half (delta) decodes the whole chain on the host.
  EXPECT_TRUE(plan_for(json::array({{{"name", "numcodecs.delta"}, {"configuration", {{"dtype", "<f4"}}}},
                                    {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}}))
                  .host_whole_chain());
}

// A codec with a pass over the decoded chunk (numcodecs.delta on integers) decodes on the
// device after the compressor; float deltas (whose sums depend on the order) stay on the host.
TEST(GpuChainPlan, IntegerDeltaIsADevicePass) {
  install_gpu_support();
  auto plan_for = [](const std::string& dtype_v2, DataType dtype, const json& more) {
    ArraySpec spec;
    spec.shape = {100};
    spec.chunks = {10};
    spec.dtype = dtype;
    json codecs = json::array({{{"name", "numcodecs.delta"}, {"configuration", {{"dtype", dtype_v2}}}},
                               {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
    for (const auto& c : more) codecs.push_back(c);
    spec.codecs = codecs;
    const ArrayMetadata m = make_array_metadata(spec, CodecRegistry::builtin());
    return gpu::DeviceChain(m.codecs->prepare(m.chunk_spec()), 1);
  };
  const auto ints = plan_for("<i4", DataType::int_(32), json::array({{{"name", "numcodecs.lz4"}}}));
  EXPECT_FALSE(ints.host_whole_chain());
  EXPECT_EQ(ints.passes().size(), 1u);
  EXPECT_EQ(ints.device_stages().size(), 1u);
  EXPECT_FALSE(ints.stored_as_laid_out());
  EXPECT_TRUE(plan_for("<f8", DataType::float_(64), json::array()).host_whole_chain());
}

// Blosc with zstd or zlib inside: with those kernels on, a chunk's blocks go to their works,
// and the shuffled blocks to the unshuffle after them; with them off, the host decodes it
// (no GPU needed).
TEST(GpuChainPlan, BloscWithZstdOrZlibInsidePlansIntoThoseKernels) {
  install_gpu_support();
  for (const char* cname : {"zstd", "zlib"}) {
    ArraySpec spec;
    spec.shape = {128, 256};
    spec.chunks = {128, 256};
    spec.dtype = DataType::float_(32);
    spec.codecs = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                               blosc(cname, "shuffle", 4)});
    const ArrayMetadata m = make_array_metadata(spec, CodecRegistry::builtin());
    NDBuffer chunk = NDBuffer::allocate(spec.chunks, spec.dtype);
    auto* f = reinterpret_cast<float*>(chunk.data());
    for (std::size_t i = 0; i < 128 * 256; ++i) f[i] = static_cast<float>(i % 1000) * 0.5f;
    const Buffer encoded = m.codecs->encode(chunk, m.chunk_spec());
    {
      gpu::DeviceSettings settings = gpu::device_settings();
      settings.zstd_kernels = settings.deflate_kernels = KernelUse::kOn;
      const gpu::DeviceChain chain(m.codecs->prepare(m.chunk_spec()), 1, settings);
      gpu::BatchWorks works;
      const auto where = chain.plan_chunk(0, encoded.view(), works);
      ASSERT_TRUE(where.has_value()) << cname;
      EXPECT_EQ(where->area, gpu::ChunkBytes::Area::kSlot);
      EXPECT_EQ(where->size, 128u * 256 * 4);
      const auto order = works.in_phase_order();
      ASSERT_EQ(order.size(), 2u) << cname;  // the inner codec's streams, then the unshuffle
      EXPECT_EQ(order[0]->phase(), gpu::BatchWork::kDecompress);
      EXPECT_EQ(order[1]->phase(), gpu::BatchWork::kAfterDecompress);
      EXPECT_EQ(chain.min_chunks_per_batch(), gpu::kChunksToFillTheDevice);
    }
    gpu::DeviceSettings off = gpu::device_settings();
    off.zstd_kernels = off.deflate_kernels = KernelUse::kOff;
    const gpu::DeviceChain chain(m.codecs->prepare(m.chunk_spec()), 1, off);
    gpu::BatchWorks works;
    EXPECT_FALSE(chain.plan_chunk(0, encoded.view(), works).has_value()) << cname;
  }
}

// Under KernelUse::kAuto (the default) zarrkit's zstd and deflate kernels take the reads
// their rules say they win: enough bytes for the host's threads, chunks not too large
// (device_codec.h, OwnKernelsRule; no GPU needed).
TEST(GpuChainPlan, OwnKernelsTakeTheReadsTheyWinByDefault) {
  install_gpu_support();
  const std::uint64_t threads = shared_thread_pool().size();
  const json little = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
  struct Case {
    std::string name;
    json codec;
    Shape chunks;                     // float32
    std::uint64_t bytes_per_thread;   // the rule's read size
    bool size_allowed;                // whether the chunk size passes the rule
  };
  const std::vector<Case> cases = {
      {"zstd 256 KiB", {{"name", "zstd"}, {"configuration", {{"level", 1}}}}, {256, 256}, 8u << 20, true},
      {"zstd 4 MiB", {{"name", "zstd"}, {"configuration", {{"level", 1}}}}, {1024, 1024}, 8u << 20, true},
      {"zstd 8 MiB", {{"name", "zstd"}, {"configuration", {{"level", 1}}}}, {1024, 2048}, 8u << 20, false},
      {"gzip 256 KiB", {{"name", "gzip"}, {"configuration", {{"level", 1}}}}, {256, 256}, 32u << 20, true},
      {"gzip 1 MiB", {{"name", "gzip"}, {"configuration", {{"level", 1}}}}, {512, 512}, 32u << 20, false},
      {"blosc zstd 16 MiB", blosc("zstd", "shuffle", 4), {2048, 2048}, 8u << 20, true},
      {"blosc zlib 256 KiB", blosc("zlib", "shuffle", 4), {256, 256}, 8u << 20, true},
  };
  for (const Case& c : cases) {
    ArraySpec spec;
    spec.shape = {c.chunks[0] * 4, c.chunks[1] * 4};
    spec.chunks = c.chunks;
    spec.dtype = DataType::float_(32);
    spec.codecs = json::array({little, c.codec});
    const ArrayMetadata m = make_array_metadata(spec, CodecRegistry::builtin());
    const std::uint64_t chunk_bytes = c.chunks[0] * c.chunks[1] * 4;
    const std::uint64_t enough = (c.bytes_per_thread * threads + chunk_bytes - 1) / chunk_bytes;
    // Whether the read's chain sends its chunks to zarrkit's kernels: a device stage that
    // wants the device filled (blosc's half takes part either way, for LZ4 inside).
    auto kernels_take = [&](std::uint64_t chunks_in_read, KernelUse use, bool nvcomp_asked_but_refuses = false) {
      gpu::DeviceSettings settings = gpu::device_settings(GpuConfig{});
      settings.zstd_kernels = settings.deflate_kernels = use;
      if (nvcomp_asked_but_refuses) {
        settings.nvcomp_decode = true;
        settings.nvcomp_min_chunks = std::uint64_t{1} << 40;  // no batch is large enough for it
      }
      const gpu::DeviceChain chain(m.codecs->prepare(m.chunk_spec()), std::min<std::uint64_t>(chunks_in_read, 512),
                                   settings, CodecRegistry::builtin(), chunks_in_read);
      return !chain.device_stages().empty() && chain.min_chunks_per_batch() == gpu::kChunksToFillTheDevice;
    };
    EXPECT_EQ(kernels_take(enough, KernelUse::kAuto), c.size_allowed) << c.name;
    EXPECT_FALSE(kernels_take(enough - 1, KernelUse::kAuto)) << c.name << ": one chunk short";
    // Asking for nvCOMP leaves a read to it only where nvCOMP takes the read.
    EXPECT_EQ(kernels_take(enough, KernelUse::kAuto, true), c.size_allowed) << c.name << ": nvCOMP refuses";
    EXPECT_FALSE(kernels_take(enough * 4, KernelUse::kOff)) << c.name;
    EXPECT_TRUE(kernels_take(1, KernelUse::kOn)) << c.name;
  }
}

// Planning a chunk: the device halves' jobs for well-formed headers, and the host for the
// rest (no GPU needed).
TEST(GpuChainPlan, PlansChunksFromTheirHeaders) {
  install_gpu_support();
  ArraySpec spec;
  spec.shape = {64};
  spec.chunks = {64};
  spec.dtype = DataType::uint_(32);
  spec.codecs = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                             {{"name", "numcodecs.lz4"}},
                             {{"name", "crc32c"}}});
  const ArrayMetadata m = make_array_metadata(spec, CodecRegistry::builtin());
  const gpu::DeviceChain chain(m.codecs->prepare(m.chunk_spec()), 1);
  std::vector<std::uint32_t> values(64);
  for (std::uint32_t i = 0; i < 64; ++i) values[i] = i * 7;
  NDBuffer chunk = NDBuffer::allocate({64}, spec.dtype);
  std::memcpy(chunk.data(), values.data(), 256);
  const Buffer encoded = m.codecs->encode(chunk, m.chunk_spec());
  gpu::BatchWorks works;
  const auto where = chain.plan_chunk(3, encoded.view(), works);
  ASSERT_TRUE(where.has_value());
  EXPECT_EQ(where->area, gpu::ChunkBytes::Area::kSlot);
  EXPECT_EQ(where->size, 256u);
  EXPECT_EQ(works.in_phase_order().size(), 2u);  // the checksum, then the LZ4 stream
  EXPECT_EQ(works.in_phase_order()[0]->phase(), gpu::BatchWork::kVerify);
  // A size prefix that disagrees with the chunk: the host decodes it (and reports it).
  Buffer lying = Buffer::copy_of(encoded.view());
  lying.data()[0] = std::byte{0x10};
  gpu::BatchWorks others;
  EXPECT_FALSE(chain.plan_chunk(0, lying.view(), others).has_value());
  EXPECT_FALSE(chain.plan_chunk(0, encoded.view().first(3), others).has_value());
  // The host's decode of the device stages gives the stored chunk.
  const Buffer stored = chain.decode_device_stages_on_host(encoded.view());
  ASSERT_EQ(stored.size(), 256u);
  EXPECT_EQ(std::memcmp(stored.data(), values.data(), 256), 0);
}

struct Geometry {
  Shape shape;
  Shape chunks;
};

// Values that compress (a smooth part) but are not trivial (noise in the low bits).
std::vector<std::byte> make_values(std::uint64_t bytes, std::size_t itemsize, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> out(bytes);
  for (std::uint64_t i = 0; i < bytes; ++i) {
    const std::uint64_t element = i / itemsize;
    const std::uint64_t byte = i % itemsize;
    const std::uint64_t smooth = (element / 7) >> (byte * 2);
    out[i] = static_cast<std::byte>(byte == 0 ? (smooth + rng() % 4) : smooth);
  }
  return out;
}

NDView host_view(std::vector<std::byte>& data, const Shape& shape, const DataType& dtype) {
  return {data.data(), shape, NDView::c_strides(shape, dtype.size()), dtype, MemoryKind::kHost};
}

// Reads `selection` on the CPU and on the GPU and compares the bytes; unlike gpu_testing.h's
// expect_same_read, also requires the GPU read to land in device memory.
void expect_same_read_in_device_memory(const Array& array, const Selection& selection, const std::string& what) {
  NDBuffer cpu = array.read(selection);
  NDBuffer gpu;
  {
    ScopedGpu device;
    gpu = array.read(selection);
  }
  ASSERT_EQ(gpu.kind(), MemoryKind::kDevice) << what;
  ASSERT_EQ(gpu.shape(), cpu.shape()) << what;
  const Buffer back = to_host(gpu.buffer());
  ASSERT_EQ(back.size(), cpu.nbytes()) << what;
  if (back.size() > 0) {
    ASSERT_EQ(std::memcmp(back.data(), cpu.data(), back.size()), 0)
        << what << ": the GPU read differs from the CPU read";
  }
}

// The matrix: every chain of chains() on every geometry, for one dtype per test (one test per
// dtype so that a sanitizer can take them one process at a time).
class GpuReadMatrix : public ::testing::TestWithParam<DataType> {};

TEST_P(GpuReadMatrix, MatchesCpu) {
  REQUIRE_GPU();
  const DataType dtype = GetParam();
  // ZARRKIT_GPU_TEST_QUICK (for the sanitizer runs) keeps a third of the matrix.
  const bool quick = environment_variable("ZARRKIT_GPU_TEST_QUICK").has_value();
  std::vector<Geometry> geometries = {
      {{37, 53}, {16, 8}}, {{9, 10, 11}, {4, 5, 3}}, {{1000}, {128}}, {{64, 64}, {32, 32}}};
  if (quick) {
    if (dtype.name() != "uint8" && dtype.name() != "float32" && dtype.name() != "complex64") {
      GTEST_SKIP() << "ZARRKIT_GPU_TEST_QUICK: only uint8, float32 and complex64";
    }
    geometries.resize(2);
  }
  const std::uint64_t recovered_before = gpu::read_stats().gpu_rejections_recovered.load();
  const std::uint64_t gpu_chunks_before = gpu::read_stats().chunks_decoded_on_gpu.load();
  std::mt19937_64 rng(2024 + dtype.size());
  std::size_t arrays = 0;
  std::size_t expected_arrays = 0;
  for (const Geometry& g : geometries) {
    const std::vector<ChainCase> cases = chains(dtype.size(), g.shape.size());
    expected_arrays += cases.size();
    for (ChainCase chain : cases) {
      if (chain.name == "sharding") {
        Shape inner = g.chunks;
        for (auto& d : inner) d = d % 2 == 0 ? d / 2 : d;
        chain.codecs[0]["configuration"]["chunk_shape"] = inner;
      }
      const std::string what = fmt::format("{} {} shape {} chunks {}", dtype.name(), chain.name,
                                           json(g.shape).dump(), json(g.chunks).dump());
      auto store = MemoryStore::create();
      ArraySpec spec;
      spec.shape = g.shape;
      spec.chunks = g.chunks;
      spec.dtype = dtype;
      spec.codecs = chain.codecs;
      spec.fill_value = dtype.kind() == DataTypeKind::kBool      ? json(true)
                        : dtype.kind() == DataTypeKind::kComplex ? json::array({3, -1})
                                                                 : json(3);
      Array array = Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()));
      auto values = make_values(checked_nbytes(g.shape, dtype), dtype.size(), rng());
      if (dtype.kind() == DataTypeKind::kBool) {
        for (auto& b : values) b = static_cast<std::byte>(static_cast<unsigned>(b) & 1u);
      }
      // Leave a corner unwritten so that some chunks are missing (fill value).
      Selection written;
      for (auto d : g.shape) written.push_back(Slice{0, static_cast<std::int64_t>(d - d / 3), 1});
      Shape written_shape = array.selection_shape(written);
      std::vector<std::byte> part(checked_nbytes(written_shape, dtype));
      std::memcpy(part.data(), values.data(), part.size());
      array.write(written, host_view(part, written_shape, dtype));
      ++arrays;
      SCOPED_TRACE(what);
      expect_same_read_in_device_memory(array, {}, what + " full");
      for (int k = 0; k < (quick ? 1 : 4); ++k) {
        const Selection sel = testing::random_selection(rng, g.shape);
        expect_same_read_in_device_memory(array, sel, what + " [" + testing::describe_selection(sel) + "]");
      }
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_EQ(arrays, expected_arrays);
  EXPECT_GE(arrays, geometries.size() * 16) << "the chain list shrank";
  EXPECT_GT(gpu::read_stats().chunks_decoded_on_gpu.load(), gpu_chunks_before);
  EXPECT_EQ(gpu::read_stats().gpu_rejections_recovered.load(), recovered_before)
      << "the GPU refused chunks the CPU decodes";
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuReadMatrix,
                         ::testing::Values(DataType::uint_(8), DataType::int_(16), DataType::float_(32),
                                           DataType::float_(64), DataType::complex_(64), DataType::boolean()),
                         [](const ::testing::TestParamInfo<DataType>& info) { return std::string(info.param.name()); });

// Many chunks in several batches (a small batch budget), into a strided device view.
TEST(GpuRead, ManyBatchesIntoAStridedView) {
  REQUIRE_GPU();
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {300, 200};
  spec.chunks = {7, 9};
  spec.dtype = DataType::float_(32);
  spec.codecs = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                             blosc("lz4", "bitshuffle", 4), {{"name", "crc32c"}}});
  Array array = Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()));
  auto values = make_values(300 * 200 * 4, 4, 1);
  array.write({}, host_view(values, spec.shape, spec.dtype));
  // Every second column of a device array twice as wide.
  Buffer wide = Buffer::allocate(300 * 400 * 4, device_allocator());
  NDView out{wide.data(), {300, 200}, {400 * 4, 8}, spec.dtype, MemoryKind::kDevice};
  const std::uint64_t batches_before = gpu::read_stats().batches.load();
  {
    ScopedConfig fifty_chunks_a_batch([](Config& c) { c.gpu.batch_budget_bytes = 7 * 9 * 4 * 50; });
    array.read_into({}, out);
  }
  EXPECT_GT(gpu::read_stats().batches.load() - batches_before, 10u);
  const Buffer back = to_host(wide);
  for (std::size_t r = 0; r < 300; ++r) {
    for (std::size_t c = 0; c < 200; ++c) {
      ASSERT_EQ(std::memcmp(back.data() + r * 1600 + c * 8, values.data() + (r * 200 + c) * 4, 4), 0)
          << r << "," << c;
    }
  }
}

TEST(GpuRead, IntegerDeltaDecodesOnTheDevice) {
  REQUIRE_GPU();
  for (const auto& [dtype, v2] : std::vector<std::pair<DataType, std::string>>{
           {DataType::int_(8), "|i1"}, {DataType::uint_(16), "<u2"}, {DataType::int_(32), "<i4"},
           {DataType::int_(64), "<i8"}}) {
    for (const json& compressor : {json::array(), json::array({{{"name", "zstd"}, {"configuration", {{"level", 1}}}}}),
                                   json::array({{{"name", "numcodecs.lz4"}}})}) {
      auto store = MemoryStore::create();
      ArraySpec spec;
      spec.shape = {7000, 3};
      spec.chunks = {3001, 3};  // chunks of several tiles of the kernel, an edge chunk
      spec.dtype = dtype;
      json codecs = json::array({{{"name", "numcodecs.delta"}, {"configuration", {{"dtype", v2}}}},
                                 {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
      for (const auto& c : compressor) codecs.push_back(c);
      spec.codecs = codecs;
      Array array = Array::create(store, "d", make_array_metadata(spec, CodecRegistry::builtin()));
      auto values = make_values(7000 * 3 * dtype.size(), dtype.size(), 77);
      array.write({}, host_view(values, spec.shape, array.dtype()));
      const std::uint64_t on_gpu = gpu::read_stats().chunks_decoded_on_gpu.load();
      const std::string what = fmt::format("delta {} {}", dtype.name(), compressor.dump());
      expect_same_read_in_device_memory(array, {}, what);
      expect_same_read_in_device_memory(array, {Slice{2999, 6010, 3}}, what + " part");
      EXPECT_GT(gpu::read_stats().chunks_decoded_on_gpu.load(), on_gpu) << what;
    }
  }
}

TEST(GpuRead, V2BigEndianFortranOrderBlosc) {
  REQUIRE_GPU();
  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.zarr_format = 2;
  spec.shape = {33, 17, 5};
  spec.chunks = {8, 8, 2};
  spec.dtype = DataType::int_(32).with_storage_endian(Endian::kBig);
  spec.v2_order = 'F';
  spec.v2_compressor = json{{"id", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 2}, {"blocksize", 0}};
  Array array = Array::create(store, "v2", make_array_metadata(spec, CodecRegistry::builtin()));
  auto values = make_values(33 * 17 * 5 * 4, 4, 9);
  array.write({}, host_view(values, spec.shape, array.dtype()));
  const gpu::DeviceChain plan(array.metadata().codecs->prepare(array.metadata().chunk_spec()), 1);
  EXPECT_FALSE(plan.host_whole_chain());
  EXPECT_EQ(plan.swap_unit(), 4u);
  std::mt19937_64 rng(5);
  expect_same_read_in_device_memory(array, {}, "v2 full");
  for (int k = 0; k < 20; ++k) {
    const Selection sel = testing::random_selection(rng, spec.shape);
    expect_same_read_in_device_memory(array, sel, "v2 [" + testing::describe_selection(sel) + "]");
  }
}

// Damaged chunks: whatever the CPU read gives (the same values, or an error), the GPU read
// gives too; errors are DataLossError naming the chunk key, with the CPU's message.
TEST(GpuRead, CorruptChunksBehaveAsOnTheCpu) {
  REQUIRE_GPU();
  std::mt19937_64 rng(77);
  int errors = 0;
  for (const char* codec : {"blosc-lz4", "blosc-blosclz", "lz4", "crc32c"}) {
    for (int round = 0; round < 12; ++round) {
      auto store = MemoryStore::create();
      ArraySpec spec;
      spec.shape = {64, 64};
      spec.chunks = {16, 16};
      spec.dtype = DataType::uint_(16);
      const json little = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
      const std::string name = codec;
      if (name == "blosc-lz4") spec.codecs = json::array({little, blosc("lz4", "shuffle", 2)});
      if (name == "blosc-blosclz") spec.codecs = json::array({little, blosc("blosclz", "bitshuffle", 2)});
      if (name == "lz4") spec.codecs = json::array({little, {{"name", "numcodecs.lz4"}}});
      if (name == "crc32c") spec.codecs = json::array({little, {{"name", "crc32c"}}});
      Array array = Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()));
      auto values = make_values(64 * 64 * 2, 2, rng());
      array.write({}, host_view(values, spec.shape, spec.dtype));
      // Damage chunk c/2/1: a few bytes past the headers, or a cut.
      auto bytes = store->get("a/c/2/1");
      ASSERT_TRUE(bytes.has_value());
      std::vector<std::byte> broken(bytes->view().begin(), bytes->view().end());
      if (round % 4 == 3) {
        broken.resize(broken.size() - 1 - rng() % 8);
      } else {
        for (int k = 0; k < 1 + round % 3; ++k) {
          const std::size_t at = 32 + rng() % (broken.size() - 32);
          broken[at] = static_cast<std::byte>(rng());
        }
      }
      store->set("a/c/2/1", {broken.data(), broken.size()});
      std::string cpu_error;
      NDBuffer cpu;
      try {
        cpu = array.read();
      } catch (const DataLossError& e) {
        cpu_error = e.what();
      }
      const std::string what = fmt::format("{} round {}", codec, round);
      ScopedGpu device;
      try {
        NDBuffer gpu = array.read();
        ASSERT_TRUE(cpu_error.empty()) << what << ": the GPU read succeeded, the CPU said: " << cpu_error;
        const Buffer back = to_host(gpu.buffer());
        ASSERT_EQ(std::memcmp(back.data(), cpu.data(), cpu.nbytes()), 0) << what;
      } catch (const DataLossError& e) {
        ++errors;
        EXPECT_NE(std::string(e.what()).find("c/2/1"), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()), cpu_error) << what;
      }
    }
  }
  EXPECT_GT(errors, 10);
}

TEST(GpuMemory, KindsAndSwitches) {
  REQUIRE_GPU();
  Buffer pinned = Buffer::allocate(1000, pinned_host_allocator());
  EXPECT_EQ(pinned.kind(), MemoryKind::kPinnedHost);
  std::memset(pinned.data(), 7, 1000);  // host-accessible
  Buffer device = to_device(pinned.view());
  EXPECT_EQ(device.kind(), MemoryKind::kDevice);
  EXPECT_THROW(device.view(), InvalidArgumentError);
  const Buffer back = to_host(device);
  EXPECT_EQ(std::memcmp(back.data(), pinned.data(), 1000), 0);

  auto store = MemoryStore::create();
  ArraySpec spec;
  spec.shape = {100};
  spec.chunks = {30};
  spec.dtype = DataType::int_(64);
  Array array = Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()));
  EXPECT_EQ(array.read().kind(), MemoryKind::kHost);
  {
    ScopedGpu scoped;
    EXPECT_EQ(array.read().kind(), MemoryKind::kDevice);
  }
  EXPECT_EQ(array.read().kind(), MemoryKind::kHost);
  enable_gpu();
  EXPECT_EQ(array.read().kind(), MemoryKind::kDevice);
  {
    ScopedConfig host([](Config& c) { c.memory = MemoryKind::kPinnedHost; });
    EXPECT_EQ(array.read().kind(), MemoryKind::kPinnedHost);  // the CPU path fills pinned memory
  }
  disable_gpu();
  EXPECT_EQ(array.read().kind(), MemoryKind::kHost);
}

// ---- The interop corpus ---------------------------------------------------------------------

fs::path corpus_root() {
  if (auto dir = environment_variable("ZARRKIT_CORPUS_DIR")) return *dir;
  return fs::path(ZARRKIT_SOURCE_DIR) / ".." / "shared" / "corpus";
}

TEST(GpuRead, CorpusMatchesCpu) {
  REQUIRE_GPU();
  if (!fs::is_directory(corpus_root())) GTEST_SKIP() << "no corpus at " << corpus_root();
  int compared = 0;
  for (const auto& entry : fs::recursive_directory_iterator(corpus_root())) {
    const std::string name = entry.path().filename().string();
    if (name != "zarr.json" && name != ".zarray") continue;
    const fs::path dir = entry.path().parent_path();
    std::shared_ptr<Store> store;
    std::optional<Array> array;
    NDBuffer cpu;
    try {
      LocalStoreOptions options;
      options.read_only = true;
      options.create = false;
      store = LocalStore::open(dir, options);
      array = Array::open(store);
      cpu = array->read();
    } catch (const Error&) {
      continue;  // a group, or something the CPU path does not read either
    }
    const std::string what = dir.string();
    NDBuffer gpu;
    try {
      ScopedGpu device;
      gpu = array->read();
    } catch (const Error& e) {
      ADD_FAILURE() << what << ": the CPU reads it, the GPU read failed: " << e.what();
      continue;
    }
    const Buffer back = to_host(gpu.buffer());
    ASSERT_EQ(back.size(), cpu.nbytes()) << what;
    EXPECT_TRUE(back.size() == 0 || std::memcmp(back.data(), cpu.data(), back.size()) == 0) << what;
    ++compared;
  }
  EXPECT_GT(compared, 20);
  std::cout << "corpus arrays compared: " << compared << "\n";
}

}  // namespace
}  // namespace zarrkit
