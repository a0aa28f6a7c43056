// Update locks of local stores (Store::lock_for_update): exclusive per key across open file
// descriptions (so across processes), none for read-only or memory stores. The test with
// several processes writing one shard is tests/python/test_concurrent_writers.py.
#include "stores/file_update_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "stores/testing/temp_dir.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using testing::TempDir;

TEST(FileUpdateLock, ASecondHolderWaitsForTheFirst) {
  TempDir dir;
  LocalStore store(dir / "s.zarr");
  auto first = store.lock_for_update("c/0");
  ASSERT_NE(first, nullptr);
  std::atomic<bool> second_held{false};
  // Another LocalStore on the same directory (another process would do the same): its own
  // file description, so the flock excludes it.
  std::thread other([&] {
    LocalStore again(dir / "s.zarr");
    auto second = again.lock_for_update("c/0");
    second_held = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(second_held.load());
  first.reset();
  other.join();
  EXPECT_TRUE(second_held.load());
}

TEST(FileUpdateLock, NothingAppearsInTheStore) {
  TempDir dir;
  LocalStore store(dir / "s.zarr");
  store.set("a", ByteView(reinterpret_cast<const std::byte*>("x"), 1));
  { auto lock = store.lock_for_update("a"); }
  EXPECT_EQ(store.list(), std::vector<std::string>{"a"});
}

TEST(FileUpdateLock, ReadOnlyAndMemoryStoresHaveNone) {
  TempDir dir;
  LocalStore creates(dir / "s.zarr");  // the directory, which a read-only store needs
  LocalStoreOptions options;
  options.read_only = true;
  LocalStore read_only(dir / "s.zarr", options);
  EXPECT_EQ(read_only.lock_for_update("a"), nullptr);
  EXPECT_EQ(MemoryStore().lock_for_update("a"), nullptr);
  LocalStore store(dir / "s.zarr");
  EXPECT_THROW(store.lock_for_update("../escape"), InvalidArgumentError);
}

// Store::update by default: the change sees the current value (nullopt where absent) and its
// result is stored (nullopt erases), under the update lock (the lost-update tests with
// several processes are tests/python/test_concurrent_writers.py and, on S3,
// tests/remote/test_python_package.py).
TEST(StoreUpdate, ReadsChangesAndWritesBackUnderTheLock) {
  TempDir dir;
  LocalStore store(dir / "s.zarr");
  auto text = [](std::string_view s) {
    return Buffer::copy_of(ByteView(reinterpret_cast<const std::byte*>(s.data()), s.size()));
  };
  std::vector<std::optional<std::string>> seen;
  auto append = [&](std::string_view suffix) {
    store.update("k", [&](std::optional<Buffer> current) -> std::optional<Buffer> {
      std::string value = current ? std::string(reinterpret_cast<const char*>(current->data()), current->size()) : "";
      seen.push_back(current ? std::optional(value) : std::nullopt);
      return text(value + std::string(suffix));
    });
  };
  append("a");
  append("b");
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], std::nullopt);
  EXPECT_EQ(seen[1], std::optional<std::string>("a"));
  const auto stored = store.get("k");
  ASSERT_TRUE(stored);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(stored->data()), stored->size()), "ab");
  store.update("k", [](std::optional<Buffer>) -> std::optional<Buffer> { return std::nullopt; });
  EXPECT_FALSE(store.get("k"));
}

}  // namespace
}  // namespace zarrkit
