// Writes from device memory compared with writes from host memory: every chunk the GPU
// writes must read back (CPU and GPU) as the data, the same chunks must exist (empty ones
// erased), and chains or selections the device cannot encode go through the CPU path.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/settings_env.h"
#include "engine/selection_testing.h"
#include "gpu/gpu_testing.h"
#include "gpu/device_read.h"
#include "gpu/write_export_cases.h"
#include "gpu/write_plan.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/gpu.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

json blosc(const std::string& cname, const std::string& shuffle, std::size_t typesize, int clevel = 5) {
  return {{"name", "blosc"},
          {"configuration",
           {{"cname", cname}, {"clevel", clevel}, {"shuffle", shuffle}, {"typesize", typesize}, {"blocksize", 0}}}};
}

struct Chain {
  std::string name;
  json codecs;
  bool on_gpu;
};

std::vector<Chain> write_chains(std::size_t itemsize, std::size_t ndim) {
  json reversed = json::array();
  for (std::size_t i = ndim; i-- > 0;) reversed.push_back(i);
  const json little = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
  const json big = {{"name", "bytes"}, {"configuration", {{"endian", "big"}}}};
  const json transpose = {{"name", "transpose"}, {"configuration", {{"order", reversed}}}};
  const json lz4 = {{"name", "numcodecs.lz4"}};
  const json crc = {{"name", "crc32c"}};
  const json crc_first = {{"name", "numcodecs.crc32c"}, {"configuration", {{"location", "start"}}}};
  return {
      {"bytes", json::array({little}), true},
      {"bytes-big-crc-first", json::array({big, crc_first}), true},
      {"transpose", json::array({transpose, little}), true},
      {"blosc-lz4-shuffle", json::array({little, blosc("lz4", "shuffle", itemsize)}), true},
      {"blosc-lz4-bitshuffle", json::array({little, blosc("lz4", "bitshuffle", itemsize)}), true},
      {"blosc-lz4hc-noshuffle-crc", json::array({little, blosc("lz4hc", "noshuffle", itemsize), crc}), true},
      {"blosc-clevel0", json::array({little, blosc("lz4", "shuffle", itemsize, 0)}), true},
      {"lz4", json::array({little, lz4}), true},
      {"transpose-big-blosc-crc", json::array({transpose, big, blosc("lz4", "bitshuffle", itemsize), crc}), true},
      {"bytes-crc", json::array({little, crc}), true},
      {"lz4-crc-first-crc", json::array({little, lz4, crc_first, crc}), true},
      {"blosc-shuffle-crc-first", json::array({little, blosc("lz4", "shuffle", itemsize), crc_first}), true},
      {"blosc-clevel0-crc-crc", json::array({little, blosc("lz4", "noshuffle", itemsize, 0), crc, crc}), true},
      {"crc-before-lz4 (CPU)", json::array({little, crc, lz4}), false},
      {"zstd (CPU)", json::array({little, {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}}}),
       false},
      {"blosc-zstd (CPU)", json::array({little, blosc("zstd", "shuffle", itemsize)}), false},
  };
}

std::vector<std::byte> make_values(std::uint64_t bytes, std::size_t itemsize, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> out(bytes);
  for (std::uint64_t i = 0; i < bytes; ++i) {
    const std::uint64_t element = i / itemsize;
    const std::uint64_t byte = i % itemsize;
    out[i] = static_cast<std::byte>(byte == 0 ? ((element / 5) + rng() % 3) : (element / 11) >> byte);
  }
  return out;
}

NDView host_view(std::vector<std::byte>& data, const Shape& shape, const DataType& dtype) {
  return {data.data(), shape, NDView::c_strides(shape, dtype.size()), dtype, MemoryKind::kHost};
}

Array make_array(const std::shared_ptr<Store>& store, const Shape& shape, const Shape& chunks, const DataType& dtype,
                 const json& codecs, const json& fill) {
  ArraySpec spec;
  spec.shape = shape;
  spec.chunks = chunks;
  spec.dtype = dtype;
  spec.codecs = codecs;
  spec.fill_value = fill;
  return Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()));
}

// The chain's codecs up to and including "bytes": what it stores is a chunk in its stored
// layout and byte order, the input of the device's encoder.
json layout_codecs(const json& codecs) {
  json out = json::array();
  for (const json& c : codecs) {
    out.push_back(c);
    if (c["name"] == "bytes") break;
  }
  return out;
}

// Every value the GPU stored is byte for byte what the host runs of the device's own steps
// make of the same chunk (the warp encoder against its one-lane run, the device's CRC-32C
// against the host's): `layout` holds the chunks in stored layout, written by the CPU.
void expect_host_encoder_bytes(Store& gpu_store, Store& layout, const ArrayMetadata& m, const std::string& what) {
  const gpu::WritePlan plan = gpu::plan_write(m);
  ASSERT_TRUE(plan.on_gpu) << what;
  int compared = 0;
  for (const std::string& key : gpu_store.list()) {
    if (key.ends_with("zarr.json")) continue;
    const auto raw = layout.get(key);
    ASSERT_TRUE(raw.has_value()) << what << ": " << key << " is not in the layout array";
    const auto stored = gpu_store.get(key);
    const Buffer expected = gpu::encode_chunk_like_the_device(plan, raw->view());
    ASSERT_EQ(stored->size(), expected.size()) << what << ": " << key;
    ASSERT_EQ(std::memcmp(stored->data(), expected.data(), expected.size()), 0) << what << ": " << key << " differs";
    ++compared;
  }
  EXPECT_GT(compared, 0) << what;
}

void expect_same_array(const Array& a, const Array& b, const std::string& what) {
  const NDBuffer x = a.read();
  const NDBuffer y = b.read();
  ASSERT_EQ(x.nbytes(), y.nbytes()) << what;
  ASSERT_EQ(std::memcmp(x.data(), y.data(), x.nbytes()), 0) << what << ": CPU reads differ";
  NDBuffer g;
  {
    ScopedGpu device;
    g = a.read();
  }
  const Buffer back = to_host(g.buffer());
  ASSERT_EQ(std::memcmp(back.data(), y.data(), y.nbytes()), 0) << what << ": GPU read differs";
}

TEST(GpuWrite, MatrixMatchesCpuWrites) {
  REQUIRE_GPU();
  const std::uint64_t encoded_before = gpu::read_stats().chunks_encoded_on_gpu.load();
  // ZARRKIT_GPU_TEST_QUICK (for the sanitizer runs) keeps a quarter of the matrix.
  const bool quick = environment_variable("ZARRKIT_GPU_TEST_QUICK").has_value();
  std::vector<DataType> dtypes = {DataType::uint_(8), DataType::int_(16), DataType::float_(32), DataType::float_(64),
                                  DataType::complex_(64)};
  std::vector<std::pair<Shape, Shape>> geometries = {{{37, 53}, {16, 8}}, {{9, 10, 11}, {4, 5, 3}}, {{3000}, {512}}};
  if (quick) {
    dtypes = {DataType::uint_(8), DataType::float_(32)};
    geometries.resize(2);
  }
  std::mt19937_64 rng(99);
  int arrays = 0;
  for (const DataType& dtype : dtypes) {
    for (const auto& [shape, chunks] : geometries) {
      for (const Chain& chain : write_chains(dtype.size(), shape.size())) {
        const std::string what = fmt::format("{} {} {}", dtype.name(), chain.name, json(shape).dump());
        SCOPED_TRACE(what);
        const json fill = dtype.kind() == DataTypeKind::kComplex ? json::array({0, 0}) : json(0);
        auto gpu_store = MemoryStore::create();
        auto cpu_store = MemoryStore::create();
        Array on_gpu = make_array(gpu_store, shape, chunks, dtype, chain.codecs, fill);
        Array on_cpu = make_array(cpu_store, shape, chunks, dtype, chain.codecs, fill);
        EXPECT_EQ(gpu::plan_write(on_gpu.metadata()).on_gpu, chain.on_gpu);
        auto values = make_values(checked_nbytes(shape, dtype), dtype.size(), rng());
        // A block of fill values: its chunks must be erased, as the CPU path does.
        std::fill(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 3), std::byte{0});
        const Buffer device = to_device({values.data(), values.size()});
        on_gpu.write({}, NDView{const_cast<std::byte*>(device.data()), shape, NDView::c_strides(shape, dtype.size()),
                                dtype, MemoryKind::kDevice});
        on_cpu.write({}, host_view(values, shape, dtype));
        EXPECT_EQ(gpu_store->list(), cpu_store->list()) << what << ": different chunks stored";
        expect_same_array(on_gpu, on_cpu, what + " full write");
        if (chain.on_gpu) {
          auto layout_store = MemoryStore::create();
          make_array(layout_store, shape, chunks, dtype, layout_codecs(chain.codecs), fill).write({}, host_view(values, shape, dtype));
          expect_host_encoder_bytes(*gpu_store, *layout_store, on_gpu.metadata(), what);
        }
        // A partial write: chunks written in part are read, merged and re-encoded on the
        // device where the chain encodes there and each axis is selected in one run.
        const Selection sel = testing::random_selection(rng, shape);
        const Shape sel_shape = on_cpu.selection_shape(sel);
        auto part = make_values(checked_nbytes(sel_shape, dtype), dtype.size(), rng());
        if (!part.empty()) {
          const Buffer device_part = to_device({part.data(), part.size()});
          on_gpu.write(sel, NDView{const_cast<std::byte*>(device_part.data()), sel_shape,
                                   NDView::c_strides(sel_shape, dtype.size()), dtype, MemoryKind::kDevice});
          on_cpu.write(sel, host_view(part, sel_shape, dtype));
          expect_same_array(on_gpu, on_cpu, what + " [" + testing::describe_selection(sel) + "]");
        }
        ++arrays;
        if (HasFatalFailure()) return;
      }
    }
  }
  EXPECT_EQ(arrays, quick ? 64 : 240);
  EXPECT_GT(gpu::read_stats().chunks_encoded_on_gpu.load(), encoded_before);
}

// A write that covers chunks in part, on chains the device encodes: the old values are read
// into device memory and merged there (no round trip through the host's write), and the
// array equals the one the host writes, missing chunks and ragged edges included.
TEST(GpuWrite, PartialWritesMergeOnTheDevice) {
  REQUIRE_GPU();
  const Shape shape{50, 37};
  const Shape chunks{16, 10};
  for (const Chain& chain : write_chains(4, 2)) {
    if (!chain.on_gpu) continue;
    SCOPED_TRACE(chain.name);
    auto gpu_store = MemoryStore::create();
    auto cpu_store = MemoryStore::create();
    Array on_gpu = make_array(gpu_store, shape, chunks, DataType::float_(32), chain.codecs, json(-1));
    Array on_cpu = make_array(cpu_store, shape, chunks, DataType::float_(32), chain.codecs, json(-1));
    // Part of the array first (the rest stays missing), then a box across chunk borders.
    std::mt19937_64 rng(7);
    for (const Selection& sel : {Selection{Slice{0, 20, 1}, Slice{0, 25, 1}}, Selection{Slice{5, 45, 1}, Slice{3, 37, 1}},
                                 Selection{std::int64_t{49}, Slice{30, 37, 1}}}) {
      const Shape sel_shape = on_cpu.selection_shape(sel);
      auto part = make_values(checked_nbytes(sel_shape, DataType::float_(32)), 4, rng());
      const std::uint64_t on_cpu_before = gpu::read_stats().device_writes_on_cpu.load();
      const std::uint64_t merged_before = gpu::read_stats().chunks_merged_on_gpu.load();
      const Buffer device_part = to_device({part.data(), part.size()});
      on_gpu.write(sel, NDView{const_cast<std::byte*>(device_part.data()), sel_shape,
                               NDView::c_strides(sel_shape, 4), DataType::float_(32), MemoryKind::kDevice});
      on_cpu.write(sel, host_view(part, sel_shape, DataType::float_(32)));
      EXPECT_EQ(gpu::read_stats().device_writes_on_cpu.load(), on_cpu_before) << "went through the host's write";
      EXPECT_GT(gpu::read_stats().chunks_merged_on_gpu.load(), merged_before);
      expect_same_array(on_gpu, on_cpu, "[" + testing::describe_selection(sel) + "]");
      EXPECT_EQ(gpu_store->list(), cpu_store->list());
      if (HasFatalFailure()) return;
    }
  }
}

// Chunks of 512 KiB: LZ4 blocks of several segments, blosc splits of one and of two
// segments, in many small batches (the pipeline's three slots taking turns); every value
// byte for byte the host encoder's, and read back by the CPU.
TEST(GpuWrite, LargeChunksMatchTheHostEncoder) {
  REQUIRE_GPU();
  const Shape shape = {300, 700}, chunks = {256, 512};
  const DataType dtype = DataType::float_(32);
  const json little = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
  json big_blocks = blosc("lz4", "bitshuffle", 4);
  big_blocks["configuration"]["blocksize"] = 1 << 20;
  const std::vector<std::pair<std::string, json>> chains = {
      {"lz4-crc", json::array({little, {{"name", "numcodecs.lz4"}}, {{"name", "crc32c"}}})},
      {"blosc-shuffle", json::array({little, blosc("lz4", "shuffle", 4)})},
      {"blosc-bitshuffle-1MiB-blocks-crc", json::array({little, big_blocks, {{"name", "crc32c"}}})},
      {"bytes-crc", json::array({little, {{"name", "crc32c"}}})},
  };
  std::vector<float> values(300 * 700);
  std::mt19937 rng(4);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::size_t row = i / 700;
    // Rows 0-99 smooth and quantized, 100-199 noise, 200-299 constant: every kind of block.
    values[i] = row < 100 ? std::round(std::sin(static_cast<float>(i) * 1e-3f) * 640.0f) / 64.0f
                : row < 200 ? noise(rng)
                            : 3.5f;
  }
  const Buffer device = to_device({reinterpret_cast<const std::byte*>(values.data()), values.size() * 4});
  const NDView view{const_cast<std::byte*>(device.data()), shape, NDView::c_strides(shape, 4), dtype, MemoryKind::kDevice};
  ScopedConfig one_chunk_batches([](Config& c) { c.gpu.batch_budget_bytes = 1; });
  for (const auto& [name, codecs] : chains) {
    SCOPED_TRACE(name);
    auto gpu_store = MemoryStore::create();
    auto layout_store = MemoryStore::create();
    Array on_gpu = make_array(gpu_store, shape, chunks, dtype, codecs, json(0));
    on_gpu.write({}, view);
    make_array(layout_store, shape, chunks, dtype, layout_codecs(codecs), json(0))
        .write({}, NDView{reinterpret_cast<std::byte*>(values.data()), shape, NDView::c_strides(shape, 4), dtype,
                          MemoryKind::kHost});
    expect_host_encoder_bytes(*gpu_store, *layout_store, on_gpu.metadata(), name);
    const NDBuffer back = on_gpu.read();
    EXPECT_EQ(std::memcmp(back.data(), values.data(), values.size() * 4), 0) << name;
  }
}

// NaN fill values: chunks of NaNs are empty, as zarr-python and the CPU path decide.
TEST(GpuWrite, NanFillChunksAreErased) {
  REQUIRE_GPU();
  auto store = MemoryStore::create();
  Array array = make_array(store, {64}, {16}, DataType::float_(32),
                           json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                        blosc("lz4", "shuffle", 4)}),
                           json("NaN"));
  std::vector<float> values(64, std::nanf(""));
  for (int i = 32; i < 48; ++i) values[i] = static_cast<float>(i);
  const Buffer device = to_device({reinterpret_cast<const std::byte*>(values.data()), 256});
  array.write({}, NDView{const_cast<std::byte*>(device.data()), {64}, {4}, DataType::float_(32), MemoryKind::kDevice});
  EXPECT_EQ(store->list(), (std::vector<std::string>{"a/c/2", "a/zarr.json", "zarr.json"}));
}

// For zarr-python to read (tools/gpu_bench/check_gpu_written.py): the arrays of
// write_export_cases.h written from device memory into ZARRKIT_GPU_EXPORT_DIR.
TEST(GpuWrite, ExportForZarrPython) {
  REQUIRE_GPU();
  const std::optional<std::string> dir_variable = environment_variable("ZARRKIT_GPU_EXPORT_DIR");
  if (!dir_variable) GTEST_SKIP() << "ZARRKIT_GPU_EXPORT_DIR is not set";
  const std::string& dir = *dir_variable;
  std::filesystem::remove_all(dir);
  auto store = LocalStore::open(dir);
  const std::uint64_t before = gpu::read_stats().chunks_encoded_on_gpu.load();
  for (const gpu::testing::ExportCase& c : gpu::testing::export_cases()) {
    const std::vector<float> values = gpu::testing::export_values(c.spec.shape);
    const Buffer device = to_device({reinterpret_cast<const std::byte*>(values.data()), values.size() * 4});
    Array array = Array::create(store, c.name, make_array_metadata(c.spec, CodecRegistry::builtin()));
    EXPECT_TRUE(gpu::plan_write(array.metadata()).on_gpu) << c.name;
    array.write({}, NDView{const_cast<std::byte*>(device.data()), c.spec.shape, NDView::c_strides(c.spec.shape, 4),
                           array.dtype(), MemoryKind::kDevice});
  }
  EXPECT_GT(gpu::read_stats().chunks_encoded_on_gpu.load(), before);
}

}  // namespace
}  // namespace zarrkit
