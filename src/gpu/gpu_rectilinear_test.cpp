// Arrays on a rectilinear chunk grid through device memory: reads (every selection kind,
// into contiguous and strided device views, sharded or not) equal the CPU's, and writes from
// device memory store what the same write from host memory stores. The device batches hold
// chunks of one shape, so these arrays are decoded and encoded on the host, each chunk with
// the chain prepared for its own shape, and the values cross once.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "engine/selection_testing.h"
#include "gpu/device_read.h"
#include "gpu/gpu_testing.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/gpu.h"
#include "zarrkit/multi_device.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

const Shape kShape{30, 24};

// Rows in chunks of 10 10 5 5, columns in chunks of 4 8 12 (multiples of the sharded case's
// inner chunks, 5 x 4).
ChunkGrid varying_grid() {
  const std::vector<ChunkRun> rows{{10, 2}, {5, 2}};
  const std::vector<ChunkRun> columns{{4, 1}, {8, 1}, {12, 1}};
  return ChunkGrid({AxisGrid::explicit_runs(rows), AxisGrid::explicit_runs(columns)});
}

json blosc_codecs() {
  return json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                      {{"name", "blosc"},
                       {"configuration",
                        {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 4}, {"blocksize", 0}}}}});
}

json sharded_codecs() {
  return json::array({{{"name", "sharding_indexed"},
                       {"configuration",
                        {{"chunk_shape", {5, 4}},
                         {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                                 {{"name", "zstd"}, {"configuration", {{"level", 1}}}}})},
                         {"index_codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                                       {{"name", "crc32c"}}})},
                         {"index_location", "end"}}}}});
}

Array make(const std::shared_ptr<Store>& store, const std::string& path, const json& codecs) {
  ArraySpec spec;
  spec.shape = kShape;
  spec.dtype = DataType::float_(32);
  spec.fill_value = 7;
  spec.rectilinear_chunks = varying_grid();
  spec.codecs = codecs;
  return Array::create(store, path, make_array_metadata(spec, CodecRegistry::builtin()), true);
}

std::vector<float> ramp(std::size_t n, float from) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

NDView host_view(std::vector<float>& v, const Shape& shape) {
  return {reinterpret_cast<std::byte*>(v.data()), shape, NDView::c_strides(shape, 4), DataType::float_(32),
          MemoryKind::kHost};
}

class GpuRectilinear : public ::testing::TestWithParam<bool> {
 protected:
  json codecs() const { return GetParam() ? sharded_codecs() : blosc_codecs(); }
};

TEST_P(GpuRectilinear, ReadsIntoDeviceMemoryEqualTheCpu) {
  REQUIRE_GPU();
  auto store = MemoryStore::create();
  Array array = make(store, "a", codecs());
  // The last rows stay unwritten: their chunks are missing and read as the fill value.
  std::vector<float> values = ramp(22 * 24, 1.5f);
  array.write({Slice{0, 22, 1}, Slice{0, 24, 1}}, host_view(values, {22, 24}));
  const std::uint64_t on_cpu_before = gpu::read_stats().device_reads_on_cpu.load();
  expect_same_read(array, {}, "whole array");
  EXPECT_GT(gpu::read_stats().device_reads_on_cpu.load(), on_cpu_before) << "not read through the host";
  std::mt19937_64 rng(41);
  for (int k = 0; k < 40; ++k) {
    const Selection sel = testing::random_selection(rng, kShape);
    expect_same_read(array, sel, testing::describe_selection(sel));
    if (HasFatalFailure()) return;
  }
}

TEST_P(GpuRectilinear, ReadsIntoAStridedDeviceView) {
  REQUIRE_GPU();
  auto store = MemoryStore::create();
  Array array = make(store, "a", codecs());
  std::vector<float> values = ramp(30 * 24, -3.0f);
  array.write({}, host_view(values, kShape));
  // Every second column of a device array twice as wide, around a sentinel.
  std::vector<float> sentinel(30 * 48, -99.0f);
  Buffer wide = to_device(ByteView{reinterpret_cast<const std::byte*>(sentinel.data()), sentinel.size() * 4});
  NDView out{wide.data(), kShape, {48 * 4, 8}, DataType::float_(32), MemoryKind::kDevice};
  array.read_into({}, out);
  const Buffer back = to_host(wide);
  const auto* got = reinterpret_cast<const float*>(back.data());
  for (std::size_t r = 0; r < 30; ++r) {
    for (std::size_t c = 0; c < 48; ++c) {
      const float want = c % 2 == 0 ? values[r * 24 + c / 2] : -99.0f;
      ASSERT_EQ(got[r * 48 + c], want) << "row " << r << " column " << c;
    }
  }
}

TEST_P(GpuRectilinear, WritesFromDeviceMemoryStoreWhatHostWritesStore) {
  REQUIRE_GPU();
  auto store = MemoryStore::create();
  Array from_device = make(store, "d", codecs());
  Array from_host = make(store, "h", codecs());
  // A whole write, then parts that cut chunks of every shape.
  std::vector<float> all = ramp(30 * 24, 0.25f);
  Buffer all_on_device = to_device(ByteView{reinterpret_cast<const std::byte*>(all.data()), all.size() * 4});
  from_device.write({}, NDView{all_on_device.data(), kShape, NDView::c_strides(kShape, 4), DataType::float_(32),
                               MemoryKind::kDevice});
  from_host.write({}, host_view(all, kShape));
  const std::vector<Selection> parts = {{Slice{7, 26, 1}, Slice{2, 13, 1}},
                                        {Slice{0, 30, 3}, Slice{20, 24, 1}},
                                        {Slice{29, 30, 1}, Slice{0, 24, 2}}};
  float next = 1000.0f;
  for (const Selection& part : parts) {
    const Shape shape = from_host.selection_shape(part);
    std::vector<float> values = ramp(checked_num_elements(shape), next);
    next += 1000.0f;
    Buffer on_device = to_device(ByteView{reinterpret_cast<const std::byte*>(values.data()), values.size() * 4});
    const std::uint64_t on_cpu_before = gpu::read_stats().device_writes_on_cpu.load();
    from_device.write(part, NDView{on_device.data(), shape, NDView::c_strides(shape, 4), DataType::float_(32),
                                   MemoryKind::kDevice});
    EXPECT_GT(gpu::read_stats().device_writes_on_cpu.load(), on_cpu_before);
    from_host.write(part, host_view(values, shape));
  }
  const NDBuffer got = from_device.read();
  const NDBuffer want = from_host.read();
  ASSERT_EQ(got.nbytes(), want.nbytes());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.nbytes()), 0);
  // Chunk for chunk the same stored bytes (same codecs, same values).
  for (const std::string& key : store->list("h/c/")) {
    const auto h = store->get(key);
    const auto d = store->get("d" + key.substr(1));
    ASSERT_TRUE(h && d) << key;
    ASSERT_EQ(h->size(), d->size()) << key;
    EXPECT_EQ(std::memcmp(h->data(), d->data(), h->size()), 0) << key;
  }
}

TEST_P(GpuRectilinear, ReadsAndWritesOverSeveralDevicePartsUseTheGrid) {
  REQUIRE_GPU();
  auto store = MemoryStore::create();
  Array array = make(store, "a", codecs());
  std::vector<float> values = ramp(30 * 24, 5.0f);
  Buffer source = to_device(ByteView{reinterpret_cast<const std::byte*>(values.data()), values.size() * 4});
  // Two parts on the current device, split between the rows of one chunk (9|21: inside the
  // first chunk of 10 rows), so the write's waves must keep them apart.
  const Shape top{9, 24}, bottom{21, 24};
  const std::vector<DevicePart> writes = {
      {{Slice{0, 9, 1}, Slice{0, 24, 1}}, NDView{source.data(), top, NDView::c_strides(top, 4), DataType::float_(32), MemoryKind::kDevice}},
      {{Slice{9, 30, 1}, Slice{0, 24, 1}},
       NDView{source.data() + 9 * 24 * 4, bottom, NDView::c_strides(bottom, 4), DataType::float_(32), MemoryKind::kDevice}}};
  write_from_devices(array, writes);
  const NDBuffer host = array.read();
  ASSERT_EQ(std::memcmp(host.data(), values.data(), values.size() * 4), 0);
  Buffer target = Buffer::allocate(values.size() * 4, device_allocator());
  const std::vector<DevicePart> reads = {
      {{Slice{0, 9, 1}, Slice{0, 24, 1}}, NDView{target.data(), top, NDView::c_strides(top, 4), DataType::float_(32), MemoryKind::kDevice}},
      {{Slice{9, 30, 1}, Slice{0, 24, 1}},
       NDView{target.data() + 9 * 24 * 4, bottom, NDView::c_strides(bottom, 4), DataType::float_(32), MemoryKind::kDevice}}};
  read_into_devices(array, reads);
  const Buffer back = to_host(target);
  EXPECT_EQ(std::memcmp(back.data(), values.data(), values.size() * 4), 0);
}

INSTANTIATE_TEST_SUITE_P(Chains, GpuRectilinear, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "sharded" : "blosc"; });

}  // namespace
}  // namespace zarrkit
