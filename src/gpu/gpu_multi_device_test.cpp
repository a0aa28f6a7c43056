// Reads into, and writes from, several devices at once (multi_device.h), and reads into a
// device other than the current one: every part equals the host's read.
#include <cuda_runtime_api.h>

#include <cstring>
#include <numeric>

#include <gtest/gtest.h>

#include "gpu/device_read.h"
#include "gpu/gpu_testing.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/multi_device.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

// Device memory on `device`, freed at the end.
struct DeviceMemory {
  DeviceMemory(int device, std::size_t bytes) : device(device) {
    int before = 0;
    cudaGetDevice(&before);
    cudaSetDevice(device);
    EXPECT_EQ(cudaMalloc(&ptr, std::max<std::size_t>(bytes, 1)), cudaSuccess);
    cudaSetDevice(before);
  }
  ~DeviceMemory() { cudaFree(ptr); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  int device;
  void* ptr = nullptr;
};

NDView device_view(void* ptr, const Shape& shape, const DataType& dtype) {
  return NDView{static_cast<std::byte*>(ptr), shape, NDView::c_strides(shape, dtype.size()), dtype,
                MemoryKind::kDevice};
}

// 64x64x32 float32 in chunks of 8x64x32: blosc-lz4 (decoded on the device) or sharded zstd
// (decoded on the host, then on to the device).
Array test_array(bool sharded) {
  ArraySpec spec;
  spec.shape = {64, 64, 32};
  spec.chunks = sharded ? Shape{16, 64, 32} : Shape{8, 64, 32};
  spec.dtype = DataType::float_(32);
  const json bytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
  if (sharded) {
    spec.codecs = json::array({{{"name", "sharding_indexed"},
                                {"configuration",
                                 {{"chunk_shape", {4, 32, 32}},
                                  {"codecs", json::array({bytes, {{"name", "zstd"}, {"configuration", {{"level", 1}}}}})},
                                  {"index_codecs", json::array({bytes, {{"name", "crc32c"}}})}}}}});
  } else {
    spec.codecs = json::array({bytes, {{"name", "blosc"},
                                       {"configuration",
                                        {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 4},
                                         {"blocksize", 0}}}}});
  }
  Array a = Array::create(MemoryStore::create(), "a", make_array_metadata(spec, CodecRegistry::builtin()));
  std::vector<float> values(64 * 64 * 32);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 977) * 0.5f;
  a.write({}, NDView{reinterpret_cast<std::byte*>(values.data()), spec.shape, NDView::c_strides(spec.shape, 4),
                     spec.dtype});
  return a;
}

// Reads the parts of `whole` (split along axis 0) on `devices` (one part each) and checks
// each against the host's read of it.
void expect_parts_equal_host(const Array& a, const Selection& whole, const std::vector<int>& devices) {
  const auto pieces = split_selection(a.metadata(), whole, 0, devices.size());
  std::vector<std::unique_ptr<DeviceMemory>> memory;
  std::vector<DevicePart> parts;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const Shape shape = a.selection_shape(pieces[i]);
    memory.push_back(std::make_unique<DeviceMemory>(devices[i], checked_num_elements(shape) * 4));
    parts.push_back({pieces[i], device_view(memory.back()->ptr, shape, a.dtype())});
  }
  read_into_devices(a, parts);
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const NDBuffer host = a.read(pieces[i]);
    std::vector<std::byte> back(host.nbytes());
    ASSERT_EQ(cudaMemcpy(back.data(), memory[i]->ptr, back.size(), cudaMemcpyDefault), cudaSuccess);
    EXPECT_EQ(std::memcmp(back.data(), host.data(), back.size()), 0)
        << "part " << i << " on device " << devices[i] << ": " << format_selection(pieces[i]);
  }
}

TEST(GpuMultiDevice, OneDeviceListedTwice) {
  REQUIRE_GPU();
  for (const bool sharded : {false, true}) {
    const Array a = test_array(sharded);
    expect_parts_equal_host(a, {}, {0, 0});
    expect_parts_equal_host(a, {Slice{3, 61, 1}, Slice{5, 60, 3}}, {0, 0, 0});
  }
}

TEST(GpuMultiDevice, EveryDevice) {
  REQUIRE_GPU();
  const int n = device_count();
  if (n < 2) GTEST_SKIP() << "one CUDA device here: the multi-device read needs two (runs on the 2-GPU machine)";
  std::vector<int> devices(static_cast<std::size_t>(n));
  std::iota(devices.begin(), devices.end(), 0);
  for (const bool sharded : {false, true}) {
    const Array a = test_array(sharded);
    expect_parts_equal_host(a, {}, devices);
    // Devices listed in another order, and more parts than devices.
    std::vector<int> twice(devices.rbegin(), devices.rend());
    twice.insert(twice.end(), devices.begin(), devices.end());
    expect_parts_equal_host(a, {Slice{1, 63, 1}}, twice);
  }
}

// A read into memory of device 1 from a thread whose current device is 0: the output's
// device runs it, and the current device is the same afterwards.
TEST(GpuMultiDevice, ReadsIntoAnotherDeviceThanTheCurrentOne) {
  REQUIRE_GPU();
  if (device_count() < 2) GTEST_SKIP() << "one CUDA device here: needs two (runs on the 2-GPU machine)";
  const Array a = test_array(false);
  DeviceMemory out(1, 64 * 64 * 32 * 4);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  a.read_into({}, device_view(out.ptr, {64, 64, 32}, a.dtype()));
  int current = -1;
  cudaGetDevice(&current);
  EXPECT_EQ(current, 0);
  const NDBuffer host = a.read();
  std::vector<std::byte> back(host.nbytes());
  ASSERT_EQ(cudaMemcpy(back.data(), out.ptr, back.size(), cudaMemcpyDefault), cudaSuccess);
  EXPECT_EQ(std::memcmp(back.data(), host.data(), back.size()), 0);
}

TEST(GpuMultiDevice, WritesFromEveryDevice) {
  REQUIRE_GPU();
  const int n = std::max(device_count(), 2);  // one device: listed twice
  for (const bool sharded : {false, true}) {
    const Array source = test_array(sharded);
    Array target = Array::create(MemoryStore::create(), "t", source.metadata());
    const auto pieces = split_selection(source.metadata(), {}, 0, static_cast<std::size_t>(n));
    std::vector<std::unique_ptr<DeviceMemory>> memory;
    std::vector<DevicePart> parts;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      const Shape shape = source.selection_shape(pieces[i]);
      memory.push_back(
          std::make_unique<DeviceMemory>(static_cast<int>(i) % device_count(), checked_num_elements(shape) * 4));
      parts.push_back({pieces[i], device_view(memory.back()->ptr, shape, source.dtype())});
    }
    read_into_devices(source, parts);
    write_from_devices(target, parts);
    const NDBuffer expected = source.read(), got = target.read();
    ASSERT_EQ(got.nbytes(), expected.nbytes());
    EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.nbytes()), 0) << "sharded " << sharded;
  }
}

TEST(GpuMultiDevice, HostMemoryIsRefusedAsADeviceOutput) {
  REQUIRE_GPU();
  const Array a = test_array(false);
  std::vector<float> host(64 * 64 * 32);
  EXPECT_THROW(gpu::read_into_device(a, {}, device_view(host.data(), {64, 64, 32}, a.dtype())),
               InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
