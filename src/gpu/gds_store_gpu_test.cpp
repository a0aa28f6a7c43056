// GdsStore's device reads on a GPU, through both paths (cuFile where it loads, the compat
// path forced): values, ranges and read_into equal the host bytes for sizes around the
// piece and staging sizes; truncated files and EIO are typed errors; arrays on a GdsStore
// read on the device equal CPU reads. cuFile loading and the typed errors without a device
// run everywhere.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "core/settings_env.h"
#include "engine/selection_testing.h"
#include "gpu/cufile_runtime.h"
#include "gpu/device_read.h"
#include "gpu/gpu_testing.h"
#include "stores/file_io.h"
#include "stores/testing/temp_dir.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/gpu.h"
#include "zarrkit/stores/gds_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;
using testing::TempDir;

std::string pattern(std::size_t n, std::uint64_t seed) {
  std::string s(n, '\0');
  std::mt19937_64 rng(seed);
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

std::string host_text(const Buffer& b) {
  const Buffer host = to_host(b);
  return {reinterpret_cast<const char*>(host.data()), host.size()};
}

BufferPrototype device() { return BufferPrototype(device_allocator()); }

TEST(CufileRuntime, LoadsOrSaysWhy) {
  const detail::CufileProbe& probe = gpu::Cufile::probe();
  std::cout << "[ cuFile ] " << (probe.loaded ? gpu::Cufile::get() ? "loaded, driver open" : "loaded" : "not loaded")
            << (probe.gds_driver ? ", nvidia-fs driver" : "") << " " << probe.version << " " << probe.reason << "\n";
  if (probe.loaded && probe.driver_opened) {
    ASSERT_NE(gpu::Cufile::get(), nullptr);
    EXPECT_FALSE(gpu::Cufile::get()->path.empty());
  } else {
    EXPECT_EQ(gpu::Cufile::get(), nullptr);
    EXPECT_FALSE(probe.reason.empty());
    EXPECT_TRUE(probe.reason.find("cuFile") != std::string::npos || probe.reason.find("CUDA") != std::string::npos)
        << probe.reason;
  }
  EXPECT_EQ(&gpu::Cufile::probe(), &probe);  // loaded once
  EXPECT_NE(gpu::cufile_error_text(5020).find("O_DIRECT"), std::string::npos);
  EXPECT_EQ(gpu::cufile_error_text(4242), "cuFile error 4242");
}

TEST(GdsStoreGpu, WithoutADeviceDeviceReadsAreTypedErrors) {
  if (gpu_available()) GTEST_SKIP() << "this machine has a usable GPU";
  install_gpu_support();
  TempDir dir;
  auto store = GdsStore::open(dir / "s");
  store->set("k", as_bytes("value"));
  try {
    store->get("k", device());
    FAIL() << "a device read succeeded without a device";
  } catch (const UnsupportedError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("no CUDA device: ", 0), 0u) << e.what();
  }
  EXPECT_THROW(store->device_path(), UnsupportedError);
  EXPECT_EQ(host_text(*store->get("k")), "value");
}

// ---- Device reads, per path --------------------------------------------------------------

class GdsDeviceReads : public ::testing::TestWithParam<GdsMode> {
 protected:
  void SetUp() override {
    REQUIRE_GPU();
    if (GetParam() == GdsMode::kCufile && gpu::Cufile::get() == nullptr) {
      GTEST_SKIP() << "cuFile cannot be used here: " << gpu::Cufile::probe().reason;
    }
  }
  // Small pieces and few threads, so that values span many pieces and outgrow the staging
  // ring (3 threads x 2 buffers x 64 KiB = 384 KiB).
  std::shared_ptr<GdsStore> open(const std::filesystem::path& root, LocalStoreOptions local = {}) {
    GdsOptions options;
    options.mode = GetParam();
    options.threads = 3;
    options.piece_bytes = 64u << 10;
    return GdsStore::open(root, std::move(local), options);
  }
};

TEST_P(GdsDeviceReads, EqualTheHostBytes) {
  TempDir dir;
  auto store = open(dir / "s");
  const std::vector<std::size_t> sizes = {0, 1, 4097, (64u << 10) * 5 + 3, (3u << 20) + 11};
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    keys.push_back("v/" + std::to_string(sizes[i]));
    store->set(keys.back(), as_bytes(pattern(sizes[i], i)));
  }
  for (int i = 0; i < 40; ++i) {  // small values that share pieces
    keys.push_back("small/" + std::to_string(i));
    store->set(keys.back(), as_bytes(pattern(100 + 47 * static_cast<std::size_t>(i), 100 + i)));
  }
  for (const std::string& key : keys) {
    const auto value = store->get(key, device());
    ASSERT_TRUE(value.has_value()) << key;
    EXPECT_EQ(value->kind(), MemoryKind::kDevice);
    ASSERT_EQ(host_text(*value), host_text(*store->get(key))) << key;
  }
  EXPECT_FALSE(store->get("absent", device()).has_value());

  std::vector<std::string> many = keys;
  many.insert(many.begin() + 3, "absent");
  const auto values = store->get_many(many, device());
  ASSERT_EQ(values.size(), many.size());
  for (std::size_t i = 0; i < many.size(); ++i) {
    if (many[i] == "absent") {
      EXPECT_FALSE(values[i].has_value());
      continue;
    }
    ASSERT_TRUE(values[i].has_value()) << many[i];
    ASSERT_EQ(host_text(*values[i]), host_text(*store->get(many[i]))) << many[i];
  }

  const std::string big = pattern(sizes[4], 4);
  const std::vector<ByteRange> ranges = {ByteRange::range(0, 1), ByteRange::range(70000, 900000),
                                         ByteRange::last(65537), ByteRange::range(big.size() - 3, big.size() + 100),
                                         ByteRange::from_offset(big.size() + 5)};
  const auto parts = store->get_ranges(keys[4], ranges, device());
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(host_text((*parts)[0]), big.substr(0, 1));
  EXPECT_EQ(host_text((*parts)[1]), big.substr(70000, 830000));
  EXPECT_EQ(host_text((*parts)[2]), big.substr(big.size() - 65537));
  EXPECT_EQ(host_text((*parts)[3]), big.substr(big.size() - 3));
  EXPECT_EQ((*parts)[4].size(), 0u);
  EXPECT_EQ(host_text(*store->get(keys[4], device(), ByteRange::range(123, 456789))), big.substr(123, 456666));

  // read_into device destinations (at odd offsets of one allocation), and whole values.
  Buffer target = Buffer::allocate(2u << 20, device_allocator());
  const std::vector<ByteRange> two = {ByteRange::range(5, 300005), ByteRange::range(1000000, 1000007)};
  const std::vector<MutableByteView> dests = {{target.data() + 3, 300000}, {target.data() + 400001, 7}};
  EXPECT_EQ(store->read_into(keys[4], two, dests, MemoryKind::kDevice), big.size());
  const std::string back = host_text(target);
  EXPECT_EQ(back.substr(3, 300000), big.substr(5, 300000));
  EXPECT_EQ(back.substr(400001, 7), big.substr(1000000, 7));
  const std::vector<std::string> whole = {keys[2], keys[1], "absent", keys[3]};
  const std::vector<MutableByteView> value_dests = {
      {target.data(), 4097}, {target.data() + 5000, 1}, {target.data() + 6000, 10}, {target.data() + 7000, 100}};
  const auto got = store->read_values_into(whole, value_dests, MemoryKind::kDevice);
  EXPECT_EQ(got, (std::vector<std::optional<std::uint64_t>>{4097, 1, std::nullopt, sizes[3]}));
  const std::string after = host_text(target);
  EXPECT_EQ(after.substr(0, 4097), pattern(4097, 2));
  EXPECT_EQ(after.substr(5000, 1), pattern(1, 1));

  const GdsPathReport report = store->device_path();
  const GdsStats stats = store->stats();
  std::cout << "[ path ] " << report.name() << ": " << report.detail << "; values through cuFile "
            << stats.values_cufile << ", compat " << stats.values_compat << ", refused by cuFile "
            << stats.cufile_refused << (stats.cufile_refusal.empty() ? "" : " (" + stats.cufile_refusal + ")") << "\n";
  if (GetParam() == GdsMode::kCompat) {
    EXPECT_EQ(report.name(), "compat");
    EXPECT_EQ(stats.values_cufile, 0u);
    EXPECT_GT(stats.values_compat, 0u);
  } else {
    EXPECT_EQ(report.path, GdsPath::kCufile);
    if (report.cufile_compat_mode && stats.values_cufile == 0) {
      // cuFile's compatibility mode (no nvidia-fs driver) may refuse to register any file
      // (on the H100 machine: error 5027 for every descriptor, O_DIRECT or not). Then every
      // value must have come through the compat path, with the refusal said, and the bytes
      // above are checked all the same.
      EXPECT_GT(stats.cufile_refused, 0u);
      EXPECT_FALSE(stats.cufile_refusal.empty());
      EXPECT_GT(stats.values_compat, 0u);
    } else {
      EXPECT_GT(stats.values_cufile, 0u) << report.detail << "; cuFile refused: " << stats.cufile_refusal;
    }
  }
}

// pread that truncates the file before its first read (it changed size after the store
// opened it), or fails with EIO.
class TruncatingReads : public detail::FileIo {
 public:
  std::string path;
  int error = 0;  // 0: truncate to 10 bytes
  ssize_t pread(int fd, void* buffer, std::size_t count, off_t offset) override {
    if (error != 0) {
      errno = error;
      return -1;
    }
    if (::truncate(path.c_str(), 10) != 0) return -1;
    return FileIo::pread(fd, buffer, count, offset);
  }
};

TEST_P(GdsDeviceReads, ATruncatedFileOrEioIsATypedError) {
  if (GetParam() == GdsMode::kCufile) GTEST_SKIP() << "cuFile reads the file itself (not through the test's pread)";
  TempDir dir;
  auto io = std::make_shared<TruncatingReads>();
  LocalStoreOptions local;
  local.io = io;
  auto store = open(dir / "s", local);
  for (const int error : {0, EIO}) {
    store->set("a/chunk", as_bytes(pattern(200000, 9)));
    io->path = (dir / "s/a/chunk").string();
    io->error = error;
    try {
      store->get("a/chunk", device());
      ADD_FAILURE() << "a value read in part was returned";
    } catch (const IoError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(store->describe()), std::string::npos) << m;
      EXPECT_NE(m.find("\"a/chunk\""), std::string::npos) << m;
      EXPECT_NE(m.find(error == 0 ? "changed size while being read" : "Input/output error"), std::string::npos) << m;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, GdsDeviceReads, ::testing::Values(GdsMode::kCompat, GdsMode::kCufile),
                         [](const auto& info) { return info.param == GdsMode::kCompat ? "Compat" : "Cufile"; });

// ---- Arrays on a GdsStore ------------------------------------------------------------------

const json kLittle = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
const json kBig = {{"name", "bytes"}, {"configuration", {{"endian", "big"}}}};

Array make_array(const std::shared_ptr<Store>& store, const std::string& path, const json& codecs,
                 DataType dtype = DataType::float_(32)) {
  ArraySpec spec;
  spec.shape = {150, 97};
  spec.chunks = {32, 40};
  spec.dtype = dtype;
  spec.codecs = codecs;
  spec.fill_value = json(7);
  Array array = Array::create(store, path, make_array_metadata(spec, CodecRegistry::builtin()));
  std::vector<float> values(150 * 97);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i / 3) % 101) * 0.5f;
  const Shape shape = {150, 97};
  array.write({}, NDView{reinterpret_cast<std::byte*>(values.data()), shape, NDView::c_strides(shape, 4),
                         DataType::float_(32), MemoryKind::kHost});
  return array;
}


TEST(GdsStoreArrays, ReadOnTheDeviceAsOnTheCpu) {
  REQUIRE_GPU();
  const json blosc = {{"name", "blosc"},
                      {"configuration", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 4}, {"blocksize", 0}}}};
  const json zstd = {{"name", "zstd"}, {"configuration", {{"level", 1}}}};
  const json sharded = json::array({{{"name", "sharding_indexed"},
                                     {"configuration",
                                      {{"chunk_shape", {8, 20}},
                                       {"codecs", json::array({kLittle, blosc})},
                                       {"index_codecs", json::array({kLittle, {{"name", "crc32c"}}})},
                                       {"index_location", "end"}}}}});
  struct Case {
    std::string name;
    json codecs;
    bool direct;  // chunks read straight into device memory
  };
  const std::vector<Case> cases = {
      {"uncompressed", json::array({kLittle}), true},
      {"uncompressed big-endian", json::array({kBig}), true},
      {"transposed", json::array({{{"name", "transpose"}, {"configuration", {{"order", {1, 0}}}}}, kLittle}), true},
      {"blosc", json::array({kLittle, blosc}), false},
      {"zstd", json::array({kLittle, zstd}), false},
      {"sharded blosc", sharded, false},
  };
  std::mt19937_64 rng(11);
  // ZARRKIT_GPU_TEST_QUICK (for the sanitizer runs): the compat path only, fewer selections.
  const bool quick = environment_variable("ZARRKIT_GPU_TEST_QUICK").has_value();
  const std::vector<GdsMode> modes = quick ? std::vector<GdsMode>{GdsMode::kCompat}
                                           : std::vector<GdsMode>{GdsMode::kCompat, GdsMode::kAuto};
  for (const GdsMode mode : modes) {
    TempDir dir;
    GdsOptions options;
    options.mode = mode;
    options.piece_bytes = 4096;  // chunks of 5 KiB: two pieces each, several chunks per copy
    auto store = GdsStore::open(dir / "data.zarr", {}, options);
    if (mode == GdsMode::kAuto && !gpu::nvidia_fs_driver_loaded()) {
      // Without the driver auto reads through the compat path and says why.
      EXPECT_EQ(store->device_path().name(), "compat");
      EXPECT_NE(store->device_path().detail.find("nvidia-fs"), std::string::npos) << store->device_path().detail;
    }
    for (const Case& c : cases) {
      const std::string what = c.name + (mode == GdsMode::kCompat ? " (compat)" : " (auto)");
      Array array = make_array(store, c.name, c.codecs);
      store->erase(c.name + "/c/1/1");  // a missing chunk (or shard)
      const std::uint64_t direct_before = gpu::read_stats().chunks_read_direct.load();
      expect_same_read(array, {}, what + ": all");
      const std::uint64_t direct = gpu::read_stats().chunks_read_direct.load() - direct_before;
      if (c.direct) {
        EXPECT_GT(direct, 0u) << what;
      } else {
        EXPECT_EQ(direct, 0u) << what;
      }
      for (int k = 0; k < (quick ? 1 : 4); ++k) {
        const Selection sel = testing::random_selection(rng, array.shape());
        expect_same_read(array, sel, what + " [" + testing::describe_selection(sel) + "]");
      }
      {
        ScopedConfig several_batches([](Config& c) { c.gpu.batch_budget_bytes = 3 * 32 * 40 * 4; });
        expect_same_read(array, {}, what + ": small batches");
      }
      {
        ScopedConfig no_direct_reads([](Config& c) { c.gpu.gds_direct = false; });
        expect_same_read(array, {}, what + ": through the pinned arena");
      }
    }
  }
}

TEST(GdsStoreArrays, AChunkOfTheWrongSizeFailsAsOnTheCpu) {
  REQUIRE_GPU();
  TempDir dir;
  auto store = GdsStore::open(dir / "data.zarr");
  Array array = make_array(store, "a", json::array({kLittle}));
  store->set("a/c/2/1", as_bytes("too short"));
  ErrorCode cpu_code = ErrorCode::kInternal;
  try {
    array.read();
    FAIL() << "the CPU read a damaged chunk";
  } catch (const Error& e) {
    cpu_code = e.code();
  }
  try {
    ScopedGpu device;
    array.read();
    FAIL() << "the GPU read a damaged chunk";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), cpu_code) << e.what();
    EXPECT_NE(std::string(e.what()).find("c/2/1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zarrkit
