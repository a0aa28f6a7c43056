// GdsStore on any machine: host reads, writes and listings are LocalStore's; device reads
// without the GPU module are a typed error; and, with a stand-in engine that "reads into
// device memory" that is host memory, the store's own part of device reads (opening,
// packing, ranges, sizes, errors naming the key, counts).
#include "zarrkit/stores/gds_store.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <numeric>
#include <string>

#include "stores/file_io.h"
#include "stores/gds_engine.h"
#include "stores/gds_plan.h"
#include "stores/testing/temp_dir.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using testing::TempDir;
using testing::write_file;

// The bytes of a buffer, also of the stand-in "device" memory below (host memory).
std::string text(const Buffer& b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }

// "Device" memory that is host memory, so that the store's device paths run here.
class StandInDeviceAllocator final : public Allocator {
 public:
  MemoryKind kind() const override { return MemoryKind::kDevice; }
  void* allocate(std::size_t bytes) override { return host_allocator().allocate(bytes); }
  void deallocate(void* p, std::size_t bytes) noexcept override { host_allocator().deallocate(p, bytes); }
};
StandInDeviceAllocator g_device;
BufferPrototype device() { return BufferPrototype(g_device); }

// An engine that plans pieces as the real one does and preads each segment into place.
class StandInEngine final : public detail::GdsEngine {
 public:
  explicit StandInEngine(const detail::GdsEngineSettings& s) : settings_(s) {
    report_.detail = "stand-in";
  }
  const GdsPathReport& path() const override { return report_; }
  detail::DeviceReadOutcome read(std::span<const detail::DeviceFileRead> reads, std::uint64_t max_gap) override {
    std::vector<detail::PlannedRead> planned;
    for (const auto& r : reads) planned.push_back({r.file_offset, r.length, reinterpret_cast<std::uint64_t>(r.dest)});
    detail::DeviceReadOutcome outcome;
    for (const detail::Piece& piece : detail::plan_pieces(planned, settings_.piece_bytes, max_gap)) {
      ++pieces;
      for (const detail::PieceSegment& s : piece.segments) {
        const auto& r = reads[s.read];
        auto* dst = reinterpret_cast<std::byte*>(piece.dest + s.staging_offset);
        if (auto failure = detail::pread_fully(*r.io, r.fd, dst, s.length, s.file_offset)) {
          outcome.failures.push_back({s.read, *failure});
        }
      }
    }
    for (const auto& r : reads) {
      ++outcome.reads_compat;
      outcome.bytes_compat += r.length;
    }
    return outcome;
  }
  static inline std::size_t pieces = 0;

 private:
  detail::GdsEngineSettings settings_;
  GdsPathReport report_;
};

std::shared_ptr<detail::GdsEngine> make_stand_in(const detail::GdsEngineSettings& s) {
  return std::make_shared<StandInEngine>(s);
}

// Installs the stand-in engine for one test.
struct WithStandInEngine {
  WithStandInEngine() { detail::set_gds_engine_factory(&make_stand_in); }
  ~WithStandInEngine() { detail::set_gds_engine_factory(nullptr); }
};

std::string pattern(std::size_t n, int seed) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + static_cast<std::size_t>(seed) * 7) % 251);
  return s;
}

TEST(GdsStore, HostReadsWritesAndListingsAreLocalStores) {
  TempDir dir;
  auto gds = GdsStore::open(dir / "data.zarr");
  LocalStore local(dir / "data.zarr");
  EXPECT_EQ(gds->describe(), "gds://" + (dir / "data.zarr").string());
  EXPECT_EQ(gds->root(), local.root());

  gds->set("zarr.json", as_bytes("{}"));
  gds->set("a/c/0/0", as_bytes(pattern(1000, 1)));
  gds->set("a/c/0/1", as_bytes(""));
  local.set("b/x", as_bytes("written by the local store"));
  EXPECT_EQ(testing::read_file(dir / "data.zarr/a/c/0/0"), pattern(1000, 1));  // plain files

  for (const std::string key : {"zarr.json", "a/c/0/0", "a/c/0/1", "b/x"}) {
    EXPECT_EQ(text(*gds->get(key)), text(*local.get(key))) << key;
    EXPECT_EQ(gds->size(key), local.size(key));
    EXPECT_TRUE(gds->exists(key));
  }
  EXPECT_EQ(text(*gds->get("a/c/0/0", BufferPrototype::host(), ByteRange::range(10, 20))), pattern(1000, 1).substr(10, 10));
  EXPECT_EQ(text(*gds->get("a/c/0/0", BufferPrototype::host(), ByteRange::last(5000))), pattern(1000, 1));
  EXPECT_FALSE(gds->get("nothing").has_value());
  EXPECT_FALSE(gds->exists("a/c"));  // a directory

  const std::vector<std::string> keys = {"b/x", "missing", "a/c/0/0"};
  const auto many = gds->get_many(keys);
  ASSERT_EQ(many.size(), 3u);
  EXPECT_EQ(text(*many[0]), "written by the local store");
  EXPECT_FALSE(many[1].has_value());

  const std::vector<ByteRange> ranges = {ByteRange::range(0, 3), ByteRange::from_offset(998)};
  const auto parts = gds->get_ranges("a/c/0/0", ranges);
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(text((*parts)[1]), pattern(1000, 1).substr(998));

  std::string into(4, '.');
  const std::vector<MutableByteView> dests = {{reinterpret_cast<std::byte*>(into.data()), 4}};
  const std::vector<ByteRange> one = {ByteRange::range(8, 12)};
  EXPECT_EQ(gds->read_into("b/x", one, dests), 26u);
  EXPECT_EQ(into, "by t");
  EXPECT_EQ(gds->read_into("b/x", one, dests, MemoryKind::kHost), 26u);
  std::string buffer(30, '.');
  const std::vector<std::string> whole = {"b/x", "zarr.json", "nothing"};
  std::string small(1, '.'), other(30, '.');
  const std::vector<MutableByteView> value_dests = {{reinterpret_cast<std::byte*>(buffer.data()), 30},
                                                    {reinterpret_cast<std::byte*>(small.data()), 1},
                                                    {reinterpret_cast<std::byte*>(other.data()), 30}};
  const auto sizes = gds->read_values_into(whole, value_dests, MemoryKind::kHost);
  EXPECT_EQ(sizes, (std::vector<std::optional<std::uint64_t>>{26, 2, std::nullopt}));
  EXPECT_EQ(buffer.substr(0, 26), "written by the local store");
  EXPECT_EQ(small, ".");  // too small: not read

  EXPECT_EQ(gds->list(), local.list());
  EXPECT_EQ(gds->list("a"), (std::vector<std::string>{"a/c/0/0", "a/c/0/1"}));
  EXPECT_EQ(gds->list_dir("").keys, local.list_dir("").keys);
  EXPECT_EQ(gds->list_dir("").prefixes, (std::vector<std::string>{"a", "b"}));

  gds->erase("b/x");
  EXPECT_FALSE(local.exists("b/x"));
  gds->erase_prefix("a");
  EXPECT_EQ(local.list(), (std::vector<std::string>{"zarr.json"}));
  EXPECT_THROW(gds->set("../escape", as_bytes("x")), InvalidArgumentError);
  EXPECT_TRUE(gds->capabilities().writable);

  LocalStoreOptions read_only;
  read_only.read_only = true;
  auto ro = GdsStore::open(dir / "data.zarr", read_only);
  EXPECT_FALSE(ro->capabilities().writable);
  EXPECT_THROW(ro->set("k", as_bytes("v")), InvalidArgumentError);
  EXPECT_EQ(text(*ro->get("zarr.json")), "{}");
  EXPECT_THROW(GdsStore::open(dir / "absent", read_only), NotFoundError);
}

TEST(GdsStore, DeviceReadsWithoutTheGpuModuleAreTypedErrors) {
  detail::set_gds_engine_factory(nullptr);
  TempDir dir;
  auto gds = GdsStore::open(dir / "s");
  gds->set("k", as_bytes("value"));
  auto expect_no_device = [](auto&& call) {
    try {
      call();
      ADD_FAILURE() << "a device read succeeded without the GPU module";
    } catch (const UnsupportedError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("no CUDA device: ", 0), 0u) << e.what();
    }
  };
  expect_no_device([&] { gds->get("k", device()); });
  expect_no_device([&] { gds->get("absent", device()); });
  const std::vector<std::string> keys = {"k"};
  expect_no_device([&] { gds->get_many(keys, device()); });
  const std::vector<ByteRange> ranges = {ByteRange::range(0, 2)};
  expect_no_device([&] { gds->get_ranges("k", ranges, device()); });
  std::string out(2, '.');
  const std::vector<MutableByteView> dests = {{reinterpret_cast<std::byte*>(out.data()), 2}};
  expect_no_device([&] { gds->read_into("k", ranges, dests, MemoryKind::kDevice); });
  expect_no_device([&] { gds->read_values_into(keys, dests, MemoryKind::kDevice); });
  expect_no_device([&] { gds->device_path(); });
  // Everything else still works.
  EXPECT_EQ(text(*gds->get("k")), "value");
  EXPECT_EQ(gds->stats().values_compat, 0u);
}

TEST(GdsStore, OptionsComeFromTheSettingsUnlessGiven) {
  {
    ScopedConfig scoped([](Config& c) {
      c.gpu.gds_mode = GdsMode::kCompat;
      c.gpu.gds_threads = 3;
      c.gpu.gds_piece_bytes = 2u << 20;
    });
    GdsOptions resolved = resolve_gds_options({});
    EXPECT_EQ(resolved.mode, GdsMode::kCompat);
    EXPECT_EQ(resolved.threads, 3u);
    EXPECT_EQ(resolved.piece_bytes, 2u << 20);
    GdsOptions given;
    given.mode = GdsMode::kCufile;
    given.threads = 5;
    given.piece_bytes = 4096;
    resolved = resolve_gds_options(given);
    EXPECT_EQ(resolved.mode, GdsMode::kCufile);
    EXPECT_EQ(resolved.threads, 5u);
    EXPECT_EQ(resolved.piece_bytes, 4096u);
    given.piece_bytes = (1u << 30) + 1;
    EXPECT_THROW(resolve_gds_options(given), InvalidArgumentError);
  }
  const GdsOptions resolved = resolve_gds_options({});
  EXPECT_EQ(resolved.mode, global_config().gpu.gds_mode);
  EXPECT_EQ(resolved.threads, global_config().gpu.gds_threads);
  EXPECT_EQ(resolved.piece_bytes, global_config().gpu.gds_piece_bytes);
}

TEST(GdsStore, AStoreKeepsTheSettingsInForceWhenItWasMade) {
  TempDir dir;
  std::shared_ptr<GdsStore> gds;
  {
    ScopedConfig scoped([](Config& c) {
      c.gpu.gds_mode = GdsMode::kCompat;
      c.gpu.gds_threads = 2;
    });
    gds = GdsStore::open(dir / "data.zarr");
  }
  EXPECT_EQ(gds->options().mode, GdsMode::kCompat);
  EXPECT_EQ(gds->options().threads, 2u);
}

TEST(GdsStore, DeviceReadsThroughAnEngineGiveTheStoredBytes) {
  WithStandInEngine engine;
  TempDir dir;
  GdsOptions options;
  options.piece_bytes = 1000;  // values of several pieces, and values sharing one
  auto gds = GdsStore::open(dir / "s", {}, options);
  const std::vector<std::size_t> sizes = {0, 1, 999, 1000, 1001, 4567, 33};
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    keys.push_back("v/" + std::to_string(sizes[i]));
    gds->set(keys.back(), as_bytes(pattern(sizes[i], static_cast<int>(i))));
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const auto value = gds->get(keys[i], device());
    ASSERT_TRUE(value.has_value());
    EXPECT_EQ(value->kind(), MemoryKind::kDevice);
    EXPECT_EQ(text(*value), pattern(sizes[i], static_cast<int>(i))) << keys[i];
  }
  EXPECT_FALSE(gds->get("v/absent", device()).has_value());

  // get_many: one allocation, 256-byte aligned slices, absent keys nullopt.
  std::vector<std::string> many = keys;
  many.insert(many.begin() + 2, "v/absent");
  StandInEngine::pieces = 0;
  const auto values = gds->get_many(many, device());
  ASSERT_EQ(values.size(), many.size());
  EXPECT_FALSE(values[2].has_value());
  for (std::size_t i = 0, k = 0; i < many.size(); ++i) {
    if (i == 2) continue;
    EXPECT_EQ(text(*values[i]), pattern(sizes[k], static_cast<int>(k))) << many[i];
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(values[i]->data()) % 256, reinterpret_cast<std::uintptr_t>(values[0]->data()) % 256);
    ++k;
  }
  // The small values travel together: fewer pieces than values with bytes.
  EXPECT_LT(StandInEngine::pieces, 6u + 5u);

  // Ranges, past the end included (clamped), and zero-length ones.
  const std::string big = pattern(4567, 5);
  const std::vector<ByteRange> ranges = {ByteRange::range(0, 10), ByteRange::range(4000, 9000), ByteRange::last(7),
                                         ByteRange::from_offset(99999), ByteRange::range(5, 5)};
  const auto parts = gds->get_ranges("v/4567", ranges, device());
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(text((*parts)[0]), big.substr(0, 10));
  EXPECT_EQ(text((*parts)[1]), big.substr(4000));
  EXPECT_EQ(text((*parts)[2]), big.substr(4560));
  EXPECT_EQ((*parts)[3].size(), 0u);
  EXPECT_EQ((*parts)[4].size(), 0u);
  EXPECT_EQ(text(*gds->get("v/4567", device(), ByteRange::range(1234, 2345))), big.substr(1234, 1111));

  // read_into device destinations; the rest of a destination past the value stays.
  std::string a(10, '.'), b(20, '.');
  const std::vector<MutableByteView> dests = {{reinterpret_cast<std::byte*>(a.data()), 10},
                                              {reinterpret_cast<std::byte*>(b.data()), 20}};
  const std::vector<ByteRange> two = {ByteRange::range(100, 110), ByteRange::from_offset(4557)};
  EXPECT_EQ(gds->read_into("v/4567", two, dests, MemoryKind::kDevice), 4567u);
  EXPECT_EQ(a, big.substr(100, 10));
  EXPECT_EQ(b, big.substr(4557) + std::string(10, '.'));
  EXPECT_FALSE(gds->read_into("v/absent", two, dests, MemoryKind::kDevice).has_value());
  const std::vector<ByteRange> too_long = {ByteRange::range(0, 11), ByteRange::range(0, 1)};
  EXPECT_THROW(gds->read_into("v/4567", too_long, dests, MemoryKind::kDevice), InvalidArgumentError);

  // read_values_into: whole values; a value larger than its destination is not read.
  std::string one(1, '.'), small(5, '.');
  const std::vector<std::string> value_keys = {"v/1", "v/33", "v/0"};
  const std::vector<MutableByteView> value_dests = {{reinterpret_cast<std::byte*>(one.data()), 1},
                                                    {reinterpret_cast<std::byte*>(small.data()), 5},
                                                    {reinterpret_cast<std::byte*>(small.data()), 0}};
  EXPECT_EQ(gds->read_values_into(value_keys, value_dests, MemoryKind::kDevice),
            (std::vector<std::optional<std::uint64_t>>{1, 33, 0}));
  EXPECT_EQ(one, pattern(1, 1));
  EXPECT_EQ(small, ".....");

  const GdsStats stats = gds->stats();
  EXPECT_GT(stats.values_compat, 0u);
  EXPECT_EQ(stats.values_cufile, 0u);
  EXPECT_EQ(gds->device_path().detail, "stand-in");
}

// pread that reports the end of the file at once, or fails with EIO.
class FailingReads : public detail::FileIo {
 public:
  int error = 0;  // 0: end of file
  ssize_t pread(int, void*, std::size_t, off_t) override {
    if (error == 0) return 0;
    errno = error;
    return -1;
  }
};

TEST(GdsStore, ShortAndFailingReadsAreIoErrorsNamingStoreAndKey) {
  WithStandInEngine engine;
  TempDir dir;
  auto io = std::make_shared<FailingReads>();
  LocalStoreOptions local;
  local.io = io;
  auto gds = GdsStore::open(dir / "s", local);
  gds->set("a/chunk", as_bytes(pattern(300, 2)));
  for (const int error : {0, EIO}) {
    io->error = error;
    try {
      gds->get("a/chunk", device());
      ADD_FAILURE() << "a failed read returned data";
    } catch (const IoError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(gds->describe()), std::string::npos) << m;
      EXPECT_NE(m.find("\"a/chunk\""), std::string::npos) << m;
      EXPECT_NE(m.find(error == 0 ? "ended at byte 0, 300 expected" : "Input/output error"), std::string::npos) << m;
    }
    const std::vector<std::string> keys = {"a/chunk"};
    EXPECT_THROW(gds->get_many(keys, device()), IoError);
  }
  io->error = EIO;
  // Host reads report it as LocalStore does.
  EXPECT_THROW(gds->get("a/chunk"), IoError);
}

TEST(GdsStore, PreadFullyContinuesShortReadsAndRetriesInterruptions) {
  class Stuttering : public detail::FileIo {
   public:
    int calls = 0;
    ssize_t pread(int fd, void* buffer, std::size_t count, off_t offset) override {
      if (++calls % 2 == 0) {
        errno = EINTR;
        return -1;
      }
      return FileIo::pread(fd, buffer, std::min<std::size_t>(count, 7), offset);
    }
  };
  TempDir dir;
  write_file(dir / "f", pattern(100, 3));
  const int fd = ::open((dir / "f").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  Stuttering io;
  std::string out(50, '.');
  EXPECT_EQ(detail::pread_fully(io, fd, reinterpret_cast<std::byte*>(out.data()), 50, 20), std::nullopt);
  EXPECT_EQ(out, pattern(100, 3).substr(20, 50));
  const auto failure = detail::pread_fully(io, fd, reinterpret_cast<std::byte*>(out.data()), 50, 80);
  ASSERT_TRUE(failure.has_value());
  EXPECT_NE(failure->find("ended at byte 100, 130 expected"), std::string::npos) << *failure;
  ::close(fd);
}

}  // namespace
}  // namespace zarrkit
