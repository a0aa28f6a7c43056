#include "zarrkit/stores/local_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "stores/local_store_internal.h"
#include "stores/testing/temp_dir.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

std::string read_string(Store& store, std::string_view key,
                        std::optional<ByteRange> range = std::nullopt) {
  auto value = store.get(key, BufferPrototype::host(), range);
  if (!value) return "<absent>";
  return std::string(as_chars(value->view()));
}

// Every file below `dir`, as paths relative to it (temporary files included).
std::vector<std::string> files_below(const fs::path& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_directory()) files.push_back(fs::relative(entry.path(), dir).string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(LocalStore, RoundTripWritesPlainFiles) {
  TempDir dir;
  LocalStore store(dir / "data.zarr");
  EXPECT_TRUE(fs::is_directory(dir / "data.zarr"));  // created
  EXPECT_EQ(store.get("zarr.json"), std::nullopt);

  store.set("zarr.json", as_bytes("{}"));
  store.set("group/array/c/0/1", as_bytes("chunk bytes"));
  EXPECT_EQ(read_file(dir / "data.zarr/zarr.json"), "{}");
  EXPECT_EQ(read_file(dir / "data.zarr/group/array/c/0/1"), "chunk bytes");
  EXPECT_EQ(read_string(store, "group/array/c/0/1"), "chunk bytes");

  store.set("zarr.json", as_bytes("{\"zarr_format\": 3}"));
  EXPECT_EQ(read_string(store, "zarr.json"), "{\"zarr_format\": 3}");
  store.set("empty", {});
  EXPECT_EQ(read_string(store, "empty"), "");
  EXPECT_EQ(store.size("empty"), 0u);
  EXPECT_TRUE(store.exists("empty"));

  EXPECT_EQ(store.size("zarr.json"), 18u);
  EXPECT_EQ(store.size("nothing"), std::nullopt);
  EXPECT_FALSE(store.exists("nothing"));
  EXPECT_FALSE(store.exists("zarr.json/below"));  // a file is not a directory
  EXPECT_EQ(store.get("zarr.json/below"), std::nullopt);

  // A key that names a directory has no value.
  EXPECT_EQ(store.get("group/array"), std::nullopt);
  EXPECT_FALSE(store.exists("group"));
  EXPECT_EQ(store.size("group"), std::nullopt);

  // Values written by someone else are read as they are.
  write_file(dir / "data.zarr/external/.zattrs", "{\"a\": 1}");
  EXPECT_EQ(read_string(store, "external/.zattrs"), "{\"a\": 1}");

  EXPECT_EQ(store.describe(), "file://" + fs::canonical(dir / "data.zarr").string());
  EXPECT_TRUE(store.capabilities().writable);
  EXPECT_EQ(files_below(dir.path() / "data.zarr"),
            (std::vector<std::string>{"empty", "external/.zattrs", "group/array/c/0/1", "zarr.json"}));
}

TEST(LocalStore, LargeValueRoundTrip) {
  TempDir dir;
  LocalStore store(dir.path());
  std::string big(5 << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 7919) >> 3);
  store.set("big", as_bytes(big));
  EXPECT_EQ(read_string(store, "big"), big);
}

TEST(LocalStore, ByteRanges) {
  TempDir dir;
  LocalStore store(dir.path());
  store.set("k", as_bytes("0123456789"));
  EXPECT_EQ(read_string(store, "k", ByteRange::range(2, 5)), "234");
  EXPECT_EQ(read_string(store, "k", ByteRange::from_offset(7)), "789");
  EXPECT_EQ(read_string(store, "k", ByteRange::last(4)), "6789");
  EXPECT_EQ(read_string(store, "k", ByteRange::range(8, 100)), "89");
  EXPECT_EQ(read_string(store, "k", ByteRange::range(100, 200)), "");
  EXPECT_EQ(read_string(store, "k", ByteRange::from_offset(10)), "");
  EXPECT_EQ(read_string(store, "k", ByteRange::last(100)), "0123456789");
  EXPECT_EQ(read_string(store, "k", ByteRange::range(0, 0)), "");
  EXPECT_EQ(read_string(store, "missing", ByteRange::range(0, 1)), "<absent>");
}

TEST(LocalStore, OpenReaderReadsTheValueAsItWasWhenOpened) {
  TempDir dir;
  LocalStore store(dir.path());
  store.set("a/k", as_bytes("0123456789"));
  const std::unique_ptr<ByteSource> reader = store.open_reader("a/k");
  ASSERT_NE(reader, nullptr);
  EXPECT_FALSE(reader->in_memory().has_value());  // read from the file, a part at a time
  EXPECT_EQ(reader->size(), 10u);
  store.set("a/k", as_bytes("replaced by a longer value"));  // a new file under the same name
  std::string part(4, '.');
  auto view = [&] { return MutableByteView(reinterpret_cast<std::byte*>(part.data()), part.size()); };
  EXPECT_EQ(reader->read(6, view()), 4u);
  EXPECT_EQ(part, "6789");
  EXPECT_EQ(reader->read(8, view()), 2u);  // the value ends first
  EXPECT_EQ(part.substr(0, 2), "89");
  EXPECT_EQ(reader->read(10, view()), 0u);
  EXPECT_EQ(store.open_reader("a/missing"), nullptr);
  EXPECT_EQ(store.open_reader("a"), nullptr);  // a directory
  EXPECT_THROW(store.open_reader("../escape"), InvalidArgumentError);
}

TEST(LocalStore, GetRanges) {
  TempDir dir;
  LocalStore store(dir.path());
  store.set("shard", as_bytes("abcdefghijklmnopqrstuvwxyz"));
  const ByteRange ranges[] = {ByteRange::last(4), ByteRange::range(0, 3), ByteRange::range(10, 12),
                              ByteRange::from_offset(30)};
  auto parts = store.get_ranges("shard", ranges);
  ASSERT_TRUE(parts);
  ASSERT_EQ(parts->size(), 4u);
  EXPECT_EQ(as_chars((*parts)[0].view()), "wxyz");
  EXPECT_EQ(as_chars((*parts)[1].view()), "abc");
  EXPECT_EQ(as_chars((*parts)[2].view()), "kl");
  EXPECT_EQ(as_chars((*parts)[3].view()), "");
  EXPECT_EQ(store.get_ranges("missing", ranges), std::nullopt);
  auto none = store.get_ranges("shard", {});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST(LocalStore, ListingIsSortedAndSkipsTemporaryAndUnnamableFiles) {
  TempDir dir;
  LocalStore store(dir.path());
  for (const char* key : {"b/zarr.json", "a/c/1", "a/c/0", "a.x", "a/zarr.json", "ab/c", "a0"}) {
    store.set(key, as_bytes("x"));
  }
  write_file(dir / "a/.zarr.json.zarrkit-tmp.0123456789abcdef", "half");  // a writer in flight
  write_file(dir / "a/back\\slash", "unreachable by any valid key");
  fs::create_directories(dir / "empty_dir");

  EXPECT_EQ(store.list(), (std::vector<std::string>{"a.x", "a/c/0", "a/c/1", "a/zarr.json", "a0",
                                                     "ab/c", "b/zarr.json"}));
  EXPECT_EQ(store.list("a"), (std::vector<std::string>{"a/c/0", "a/c/1", "a/zarr.json"}));
  EXPECT_EQ(store.list("a/"), store.list("a"));
  EXPECT_EQ(store.list("a/c"), (std::vector<std::string>{"a/c/0", "a/c/1"}));
  EXPECT_TRUE(store.list("nothing").empty());
  EXPECT_TRUE(store.list("a.x").empty());  // a value, not a directory

  DirListing a = store.list_dir("a");
  EXPECT_EQ(a.keys, (std::vector<std::string>{"zarr.json"}));
  EXPECT_EQ(a.prefixes, (std::vector<std::string>{"c"}));
  DirListing root = store.list_dir("");
  EXPECT_EQ(root.keys, (std::vector<std::string>{"a.x", "a0"}));
  EXPECT_EQ(root.prefixes, (std::vector<std::string>{"a", "ab", "b", "empty_dir"}));
  DirListing missing = store.list_dir("nothing/");
  EXPECT_TRUE(missing.keys.empty() && missing.prefixes.empty());
}

TEST(LocalStore, EraseLeavesDirectoriesAndErasePrefixRemovesTrees) {
  TempDir dir;
  LocalStore store(dir.path());
  for (const char* key : {"a/c/0", "a/c/1", "a/zarr.json", "ab/c", "a0", "b"}) store.set(key, as_bytes("x"));

  store.erase("a/c/0");
  store.erase("a/c/0");        // already gone: no error
  store.erase("never/there");  // nor here
  store.erase("a");            // a directory, not a value: nothing happens
  EXPECT_FALSE(store.exists("a/c/0"));
  EXPECT_TRUE(fs::is_directory(dir / "a/c"));
  store.erase("a/c/1");
  EXPECT_TRUE(fs::is_directory(dir / "a/c"));  // left in place, now empty

  store.erase_prefix("a");
  EXPECT_FALSE(fs::exists(dir / "a"));
  EXPECT_EQ(store.list(), (std::vector<std::string>{"a0", "ab/c", "b"}));
  store.erase_prefix("a0");  // a value named like the prefix is not below it
  EXPECT_TRUE(store.exists("a0"));
  store.erase_prefix("not/there");

  store.erase_prefix("");
  EXPECT_TRUE(store.list().empty());
  EXPECT_TRUE(fs::is_directory(dir.path()));  // the root itself stays
}

TEST(LocalStore, RejectsBadKeysEverywhere) {
  TempDir dir;
  LocalStore store(dir / "root");
  write_file(dir / "x", "outside");
  const std::string bad[] = {"",   "../x", "/abs", "/",    "a\\b",  "a\0b"s, "a//b", ".",
                             "..", "a/..", "./a",  "a/./b", "a/",  "..\\x", "a\nb"};
  for (const std::string& key : bad) {
    SCOPED_TRACE(::testing::Message() << "key of " << key.size() << " bytes");
    EXPECT_THROW(store.get(key), InvalidArgumentError);
    EXPECT_THROW(store.set(key, as_bytes("evil")), InvalidArgumentError);
    EXPECT_THROW(store.erase(key), InvalidArgumentError);
    EXPECT_THROW(store.exists(key), InvalidArgumentError);
    EXPECT_THROW(store.size(key), InvalidArgumentError);
    EXPECT_THROW(store.get_ranges(key, {}), InvalidArgumentError);
  }
  for (const std::string& prefix : {"../"s, "/"s, "a//"s, ".."s}) {
    EXPECT_THROW(store.list(prefix), InvalidArgumentError);
    EXPECT_THROW(store.list_dir(prefix), InvalidArgumentError);
    EXPECT_THROW(store.erase_prefix(prefix), InvalidArgumentError);
  }
  EXPECT_EQ(read_file(dir / "x"), "outside");
  EXPECT_TRUE(files_below(dir / "root").empty());
}

TEST(LocalStore, OpenFileChecksKeysAsReadsDo) {
  TempDir dir;
  write_file(dir / "outside/secret", "secret");
  LocalStore store(dir / "root");
  store.set("a/value", as_bytes("twelve bytes"));
  fs::create_symlink(dir / "outside/secret", dir / "root/secret_link");

  const std::optional<LocalFile> file = store.open_file("a/value");
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->size(), 12u);
  char head[6] = {};
  EXPECT_EQ(::pread(file->fd(), head, 6, 0), 6);
  EXPECT_EQ(std::string(head, 6), "twelve");
  // The open file keeps the value it was opened on, whatever is written after.
  store.set("a/value", as_bytes("new"));
  EXPECT_EQ(::pread(file->fd(), head, 6, 6), 6);
  EXPECT_EQ(std::string(head, 6), " bytes");

  EXPECT_FALSE(store.open_file("a/missing").has_value());
  EXPECT_FALSE(store.open_file("a").has_value());  // a directory
  EXPECT_THROW(store.open_file("secret_link"), InvalidArgumentError);
  EXPECT_THROW(store.open_file("../outside/secret"), InvalidArgumentError);
}

TEST(LocalStore, RefusesSymlinksLeadingOutsideTheRoot) {
  TempDir dir;
  write_file(dir / "outside/secret", "secret");
  LocalStore store(dir / "root");
  store.set("real/value", as_bytes("inside"));
  fs::create_directory_symlink(dir / "outside", dir / "root/escape");
  fs::create_symlink(dir / "outside/secret", dir / "root/secret_link");
  fs::create_directory_symlink("../outside", dir / "root/real/relative_escape");
  fs::create_symlink(dir / "outside/nothing", dir / "root/dangling");

  EXPECT_THROW(store.get("escape/secret"), InvalidArgumentError);
  EXPECT_THROW(store.get("secret_link"), InvalidArgumentError);
  EXPECT_THROW(store.get("real/relative_escape/secret"), InvalidArgumentError);
  EXPECT_THROW(store.exists("escape/secret"), InvalidArgumentError);
  EXPECT_THROW(store.set("escape/planted", as_bytes("x")), InvalidArgumentError);
  EXPECT_THROW(store.set("escape/new_dir/planted", as_bytes("x")), InvalidArgumentError);
  EXPECT_THROW(store.erase("escape/secret"), InvalidArgumentError);
  EXPECT_THROW(store.erase_prefix("escape"), InvalidArgumentError);
  EXPECT_THROW(store.list("escape"), InvalidArgumentError);
  EXPECT_THROW(store.get("dangling"), InvalidArgumentError);
  EXPECT_EQ(read_file(dir / "outside/secret"), "secret");
  EXPECT_FALSE(fs::exists(dir / "outside/planted"));
  EXPECT_FALSE(fs::exists(dir / "outside/new_dir"));

  // Listings skip them. Symlinks that stay inside work for reads and writes; listings show
  // those to files and do not descend into those to directories.
  fs::create_directory_symlink(dir / "root/real", dir / "root/alias");
  fs::create_symlink(dir / "root/real/value", dir / "root/file_alias");
  EXPECT_EQ(read_string(store, "alias/value"), "inside");
  EXPECT_EQ(read_string(store, "file_alias"), "inside");
  store.set("alias/through", as_bytes("written via the alias"));
  EXPECT_EQ(read_file(dir / "root/real/through"), "written via the alias");
  EXPECT_EQ(store.list(), (std::vector<std::string>{"file_alias", "real/through", "real/value"}));
  EXPECT_EQ(store.list_dir("").prefixes, (std::vector<std::string>{"real"}));
  EXPECT_EQ(store.list_dir("").keys, (std::vector<std::string>{"file_alias"}));
}

TEST(LocalStore, SymlinkLoopInsideTheRootEndsTheListing) {
  TempDir dir;
  LocalStore store(dir.path());
  store.set("a/value", as_bytes("x"));
  fs::create_directory_symlink(dir / "a", dir / "a/loop");
  EXPECT_EQ(store.list(), (std::vector<std::string>{"a/value"}));
  EXPECT_EQ(read_string(store, "a/loop/loop/loop/value"), "x");
}

TEST(LocalStore, SpecialFilesNeitherHangNorList) {
  TempDir dir;
  LocalStore store(dir.path());
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_THROW(store.get("fifo"), IoError);  // opening it must not block
  EXPECT_THROW(store.exists("fifo"), IoError);
  EXPECT_TRUE(store.list().empty());
}

TEST(LocalStore, ReadOnlyStoreRefusesWrites) {
  TempDir dir;
  LocalStore(dir.path()).set("a/b", as_bytes("value"));
  LocalStore store(dir.path(), LocalStoreOptions{.read_only = true, .io = nullptr});
  EXPECT_FALSE(store.capabilities().writable);
  EXPECT_EQ(read_string(store, "a/b"), "value");
  EXPECT_EQ(store.list(), (std::vector<std::string>{"a/b"}));
  EXPECT_THROW(store.set("a/b", as_bytes("new")), InvalidArgumentError);
  EXPECT_THROW(store.set("c", as_bytes("new")), InvalidArgumentError);
  EXPECT_THROW(store.erase("a/b"), InvalidArgumentError);
  EXPECT_THROW(store.erase_prefix("a"), InvalidArgumentError);
  EXPECT_THROW(store.erase_prefix(""), InvalidArgumentError);
  EXPECT_EQ(read_string(store, "a/b"), "value");
  EXPECT_EQ(files_below(dir.path()), (std::vector<std::string>{"a/b"}));
}

TEST(LocalStore, OpeningChecksTheRoot) {
  TempDir dir;
  EXPECT_THROW(LocalStore(dir / "missing", LocalStoreOptions{.read_only = true, .io = nullptr}), NotFoundError);
  EXPECT_THROW(LocalStore(dir / "missing", LocalStoreOptions{.create = false, .io = nullptr}), NotFoundError);
  EXPECT_FALSE(fs::exists(dir / "missing"));
  write_file(dir / "file", "x");
  EXPECT_THROW(LocalStore(dir / "file"), InvalidArgumentError);
  EXPECT_THROW(LocalStore(""), InvalidArgumentError);
  auto store = LocalStore::open(dir / "deep/new/root/");
  EXPECT_TRUE(fs::is_directory(dir / "deep/new/root"));
  EXPECT_EQ(store->root(), dir / "deep/new/root");
}

TEST(LocalStore, DurableWritesRoundTrip) {
  TempDir dir;
  LocalStore store(dir.path(), LocalStoreOptions{.durable = true, .io = nullptr});
  store.set("a/b/c", as_bytes("durable"));
  store.set("a/b/c", as_bytes("again"));
  EXPECT_EQ(read_string(store, "a/b/c"), "again");
  store.erase("a/b/c");
  EXPECT_FALSE(store.exists("a/b/c"));
  store.set("x/y", as_bytes("1"));
  store.erase_prefix("x");
  EXPECT_TRUE(store.list().empty());
}

TEST(LocalStore, WritingOverADirectoryFailsCleanly) {
  TempDir dir;
  LocalStore store(dir.path());
  store.set("a/b", as_bytes("x"));
  EXPECT_THROW(store.set("a", as_bytes("y")), IoError);        // "a" is a directory
  EXPECT_THROW(store.set("a/b/c", as_bytes("y")), IoError);    // "a/b" is a file
  EXPECT_EQ(files_below(dir.path()), (std::vector<std::string>{"a/b"}));  // no temp files left
}

TEST(LocalStore, ConcurrentReaderSeesOnlyWholeValues) {
  TempDir dir;
  LocalStore store(dir.path());
  constexpr std::size_t kSize = 2 << 20;
  constexpr int kWrites = 120;
  store.set("a/value", as_bytes(std::string(kSize, 'A')));

  std::atomic<bool> done{false};
  std::atomic<int> torn{0}, reads{0}, temp_listed{0};
  std::thread reader([&] {
    while (!done) {
      auto value = store.get("a/value");
      ++reads;
      if (!value || value->size() != kSize) {
        ++torn;
        continue;
      }
      auto bytes = as_chars(value->view());
      if (bytes.find_first_not_of(bytes.front()) != std::string_view::npos) ++torn;
    }
  });
  std::thread lister([&] {
    while (!done) {
      for (const std::string& key : store.list()) {
        if (key != "a/value") ++temp_listed;
      }
      if (!store.list_dir("a").prefixes.empty() || store.list_dir("a").keys.size() != 1) ++temp_listed;
    }
  });
  for (int i = 0; i < kWrites; ++i) {
    store.set("a/value", as_bytes(std::string(kSize, static_cast<char>('A' + i % 26))));
  }
  done = true;
  reader.join();
  lister.join();
  EXPECT_EQ(torn, 0);
  EXPECT_EQ(temp_listed, 0);
  EXPECT_GT(reads, 0);
  EXPECT_EQ(files_below(dir.path()), (std::vector<std::string>{"a/value"}));
}

TEST(LocalStore, ManyThreadsWritingDisjointKeys) {
  TempDir dir;
  auto store = LocalStore::open(dir.path());
  constexpr int kThreads = 8;
  constexpr int kKeys = 60;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kKeys; ++i) {
        // Threads share parent directories, which they create concurrently.
        std::string key = "array/c/" + std::to_string(i % 5) + "/" + std::to_string(t) + "." + std::to_string(i);
        store->set(key, as_bytes(key));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::vector<std::string> keys = store->list("array");
  ASSERT_EQ(keys.size(), static_cast<std::size_t>(kThreads * kKeys));
  for (const std::string& key : keys) EXPECT_EQ(read_string(*store, key), key);
  EXPECT_EQ(files_below(dir.path()).size(), keys.size());  // nothing else left behind
}

TEST(LocalStore, StaleTemporaryFilesAreCleanedWhenOpenedForWriting) {
  TempDir dir;
  write_file(dir / "a/.c.zarrkit-tmp.00000000deadbeef", "stale");
  write_file(dir / ".zarr.json.zarrkit-tmp.00000000feedface", "stale");
  write_file(dir / "a/.d.zarrkit-tmp.0000000012345678", "fresh: a live writer's");
  write_file(dir / "a/c", "value");
  const auto two_hours_ago = fs::file_time_type::clock::now() - std::chrono::hours(2);
  fs::last_write_time(dir / "a/.c.zarrkit-tmp.00000000deadbeef", two_hours_ago);
  fs::last_write_time(dir / ".zarr.json.zarrkit-tmp.00000000feedface", two_hours_ago);

  LocalStore read_only(dir.path(), LocalStoreOptions{.read_only = true, .io = nullptr});  // never deletes anything
  EXPECT_EQ(files_below(dir.path()).size(), 4u);
  LocalStore no_cleanup(dir.path(), LocalStoreOptions{.clean_stale_temp_files = false, .io = nullptr});
  EXPECT_EQ(files_below(dir.path()).size(), 4u);

  LocalStore store(dir.path());
  EXPECT_EQ(files_below(dir.path()),
            (std::vector<std::string>{"a/.d.zarrkit-tmp.0000000012345678", "a/c"}));
  EXPECT_EQ(store.list(), (std::vector<std::string>{"a/c"}));
}

// The id of a process that has exited and been reaped: no process runs under it.
long pid_of_an_exited_process() {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return static_cast<long>(child);
}

TEST(LocalStore, TemporariesOfGoneWritersAreRemovedAtOnce) {
  TempDir dir;
  const long gone = pid_of_an_exited_process();
  const std::string own = std::to_string(::getpid());
  write_file(dir / fmt::format("a/.c.zarrkit-tmp.{}-00000000deadbeef", gone), "a killed writer's");
  write_file(dir / fmt::format(".arr.zarrkit-tmp.{}-0000000000000001/zarr.json", gone), "a killed node swap's");
  write_file(dir / ("a/.d.zarrkit-tmp." + own + "-0000000012345678"), "a live writer's (this process)");
  write_file(dir / "a/c", "value");

  LocalStore store(dir.path());
  EXPECT_EQ(files_below(dir.path()),
            (std::vector<std::string>{"a/.d.zarrkit-tmp." + own + "-0000000012345678", "a/c"}));
  EXPECT_FALSE(fs::exists(dir / fmt::format(".arr.zarrkit-tmp.{}-0000000000000001", gone)));
}

TEST(LocalStore, WritesLeaveNoTemporaryAndNameThisProcess) {
  TempDir dir;
  LocalStore store(dir.path());
  store.set("a/b", as_bytes("x"));
  EXPECT_EQ(files_below(dir.path()), (std::vector<std::string>{"a/b"}));
  // A name made now carries this process's id, and is not taken for an abandoned one.
  const std::string name = detail::temp_name_for("b");
  EXPECT_EQ(detail::temp_name_writer(name), static_cast<long>(::getpid()));
  EXPECT_FALSE(detail::temp_writer_is_gone(name));
  EXPECT_EQ(detail::temp_name_writer(".b.zarrkit-tmp.00000000deadbeef"), std::nullopt);  // an older name
}

TEST(LocalStore, ErasePrefixMovesTheTreeAsideInOneStep) {
  TempDir dir;
  LocalStore store(dir.path());
  store.set("g/arr/zarr.json", as_bytes("{}"));
  store.set("g/arr/c/0", as_bytes("chunk"));
  store.set("g/other", as_bytes("kept"));
  store.erase_prefix("g/arr");
  EXPECT_EQ(files_below(dir.path()), (std::vector<std::string>{"g/other"}));
  // The root cannot move: its entries go, metadata first, and nothing hidden stays.
  store.set("zarr.json", as_bytes("{}"));
  store.erase_prefix("");
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

class FakeDeviceAllocator final : public Allocator {
 public:
  MemoryKind kind() const override { return MemoryKind::kDevice; }
  void* allocate(std::size_t) override { throw std::logic_error("must not be called"); }
  void deallocate(void*, std::size_t) noexcept override {}
};

TEST(LocalStore, DeviceMemoryIsRefused) {
  TempDir dir;
  LocalStore store(dir.path());
  store.set("k", as_bytes("x"));
  FakeDeviceAllocator device;
  EXPECT_THROW(store.get("k", BufferPrototype(device)), UnsupportedError);
}

}  // namespace
}  // namespace zarrkit
