// GpuMemoryStore: values in device memory, read back to the host and into device memory,
// and arrays on it read and written through both the CPU and the GPU paths.
#include "zarrkit/stores/gpu_memory_store.h"

#include <cstring>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "gpu/gpu_testing.h"

#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/gpu.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

ByteView bytes_of(const std::string& s) { return {reinterpret_cast<const std::byte*>(s.data()), s.size()}; }

std::string host_string(const Buffer& b) {
  const Buffer host = to_host(b);
  return {reinterpret_cast<const char*>(host.data()), host.size()};
}

TEST(GpuMemoryStore, WithoutADeviceIsATypedError) {
  if (gpu_available()) GTEST_SKIP() << "this machine has a usable GPU";
  EXPECT_THROW(GpuMemoryStore(), UnsupportedError);
}

TEST(GpuMemoryStore, ValuesLiveInDeviceMemory) {
  REQUIRE_GPU();
  auto store = GpuMemoryStore::create();
  EXPECT_EQ(store->describe().rfind("gpu-memory://", 0), 0u);
  store->set("a/b", bytes_of("hello device"));
  store->set("a/c", bytes_of(""));

  const auto host = store->get("a/b");
  ASSERT_TRUE(host.has_value());
  EXPECT_EQ(host->kind(), MemoryKind::kHost);
  EXPECT_EQ(host_string(*host), "hello device");

  const auto device = store->get("a/b", BufferPrototype(device_allocator()), ByteRange::range(6, 12));
  ASSERT_TRUE(device.has_value());
  EXPECT_EQ(device->kind(), MemoryKind::kDevice);
  EXPECT_EQ(host_string(*device), "device");

  const auto pinned = store->get("a/b", BufferPrototype(pinned_host_allocator()), ByteRange::last(5));
  ASSERT_TRUE(pinned.has_value());
  EXPECT_EQ(pinned->kind(), MemoryKind::kPinnedHost);
  EXPECT_EQ(host_string(*pinned), "evice");

  EXPECT_EQ(store->get("a/c")->size(), 0u);
  EXPECT_EQ(store->size("a/b"), 12u);
  EXPECT_EQ(store->list("a"), (std::vector<std::string>{"a/b", "a/c"}));

  // A device view taken before an overwrite keeps the old bytes (values are immutable).
  store->set("a/b", bytes_of("replaced"));
  EXPECT_EQ(host_string(*device), "device");
  EXPECT_EQ(host_string(*store->get("a/b")), "replaced");

  const Buffer on_device = to_device(bytes_of("from the device"));
  store->set_device("d", on_device.data(), on_device.size());
  EXPECT_EQ(host_string(*store->get("d")), "from the device");

  store->erase_prefix("a");
  EXPECT_EQ(store->list(), (std::vector<std::string>{"d"}));
  EXPECT_FALSE(store->get("a/b").has_value());
  EXPECT_THROW(store->set("../x", bytes_of("x")), InvalidArgumentError);
}

TEST(GpuMemoryStore, ArraysReadAndWriteOnHostAndDevice) {
  REQUIRE_GPU();
  auto store = GpuMemoryStore::create();
  const json codecs = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                   {{"name", "blosc"},
                                    {"configuration",
                                     {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 4}, {"blocksize", 0}}}},
                                   {{"name", "crc32c"}}});
  ArraySpec spec;
  spec.shape = {100, 37};
  spec.chunks = {16, 16};
  spec.dtype = DataType::int_(32);
  spec.codecs = codecs;
  spec.fill_value = json(0);
  Array array = Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()));
  std::vector<std::int32_t> values(100 * 37);
  std::iota(values.begin(), values.end(), -500);
  const Shape shape = {100, 37};
  array.write({}, NDView{reinterpret_cast<std::byte*>(values.data()), shape, NDView::c_strides(shape, 4),
                         DataType::int_(32), MemoryKind::kHost});

  const NDBuffer on_host = array.read();
  ASSERT_EQ(on_host.nbytes(), values.size() * 4);
  EXPECT_EQ(std::memcmp(on_host.data(), values.data(), on_host.nbytes()), 0);

  NDBuffer on_device;
  {
    ScopedGpu gpu;
    on_device = Array::open(store, "a").read();
  }
  EXPECT_EQ(on_device.buffer().kind(), MemoryKind::kDevice);
  const NDBuffer back = to_host(on_device);
  EXPECT_EQ(std::memcmp(back.data(), values.data(), back.nbytes()), 0);

  // Written from device memory: read back the same.
  std::vector<std::int32_t> doubled(values);
  for (auto& v : doubled) v *= 2;
  const Buffer device = to_device({reinterpret_cast<const std::byte*>(doubled.data()), doubled.size() * 4});
  array.write({}, NDView{const_cast<std::byte*>(device.data()), shape, NDView::c_strides(shape, 4),
                         DataType::int_(32), MemoryKind::kDevice});
  const NDBuffer again = array.read();
  EXPECT_EQ(std::memcmp(again.data(), doubled.data(), again.nbytes()), 0);
}

}  // namespace
}  // namespace zarrkit
