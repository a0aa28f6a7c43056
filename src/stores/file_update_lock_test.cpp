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
  LocalStore read_only(dir / "s.zarr", LocalStoreOptions{.read_only = true});
  EXPECT_EQ(read_only.lock_for_update("a"), nullptr);
  EXPECT_EQ(MemoryStore().lock_for_update("a"), nullptr);
  LocalStore store(dir / "s.zarr");
  EXPECT_THROW(store.lock_for_update("../escape"), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
