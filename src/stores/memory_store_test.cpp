#include "zarrkit/stores/memory_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

#include "zarrkit/error.h"

namespace zarrkit {
namespace {

std::string read_string(Store& store, std::string_view key,
                        std::optional<ByteRange> range = std::nullopt) {
  auto value = store.get(key, BufferPrototype::host(), range);
  if (!value) return "<absent>";
  return std::string(as_chars(value->view()));
}

TEST(MemoryStore, RoundTripOverwriteErase) {
  MemoryStore store;
  EXPECT_FALSE(store.get("a/b"));
  store.set("a/b", as_bytes("hello"));
  EXPECT_EQ(read_string(store, "a/b"), "hello");
  store.set("a/b", as_bytes("bye"));
  EXPECT_EQ(read_string(store, "a/b"), "bye");
  store.set("empty", {});
  auto empty = store.get("empty");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->size(), 0u);
  EXPECT_TRUE(store.exists("empty"));
  EXPECT_EQ(store.size("a/b"), 3u);
  store.erase("a/b");
  store.erase("a/b");  // absent: no error
  EXPECT_FALSE(store.exists("a/b"));
  EXPECT_EQ(store.size("a/b"), std::nullopt);
}

TEST(MemoryStore, ByteRanges) {
  MemoryStore store;
  store.set("k", as_bytes("0123456789"));
  EXPECT_EQ(read_string(store, "k", ByteRange::range(2, 5)), "234");
  EXPECT_EQ(read_string(store, "k", ByteRange::from_offset(7)), "789");
  EXPECT_EQ(read_string(store, "k", ByteRange::last(4)), "6789");
  EXPECT_EQ(read_string(store, "k", ByteRange::range(8, 100)), "89");
  EXPECT_EQ(read_string(store, "k", ByteRange::range(100, 200)), "");
  EXPECT_EQ(read_string(store, "k", ByteRange::last(100)), "0123456789");
  EXPECT_EQ(read_string(store, "missing", ByteRange::range(0, 1)), "<absent>");
}

TEST(MemoryStore, GetSharesTheStoredBytesAndSurvivesOverwrite) {
  MemoryStore store;
  store.set("k", as_bytes("0123456789"));
  auto first = store.get("k");
  auto second = store.get("k");
  auto part = store.get("k", BufferPrototype::host(), ByteRange::range(3, 6));
  ASSERT_TRUE(first && second && part);
  EXPECT_EQ(first->data(), second->data());  // no copy per read
  EXPECT_EQ(part->data(), first->data() + 3);
  store.set("k", as_bytes("new"));
  store.erase("k");
  EXPECT_EQ(as_chars(first->view()), "0123456789");  // the old value stays alive
  EXPECT_EQ(as_chars(part->view()), "345");
}

TEST(MemoryStore, SetCopiesTheInput) {
  MemoryStore store;
  std::string source = "abc";
  store.set("k", as_bytes(source));
  source[0] = 'X';
  EXPECT_EQ(read_string(store, "k"), "abc");
}

TEST(MemoryStore, ListingIsSortedAndByDirectory) {
  MemoryStore store;
  for (const char* key : {"b/zarr.json", "a/c/1", "a/c/0", "a.x", "a/zarr.json", "ab/c", "a0"}) {
    store.set(key, as_bytes("x"));
  }
  EXPECT_EQ(store.list(), (std::vector<std::string>{"a.x", "a/c/0", "a/c/1", "a/zarr.json",
                                                     "a0", "ab/c", "b/zarr.json"}));
  EXPECT_EQ(store.list("a"), (std::vector<std::string>{"a/c/0", "a/c/1", "a/zarr.json"}));
  EXPECT_EQ(store.list("a/"), store.list("a"));
  EXPECT_EQ(store.list("a/c"), (std::vector<std::string>{"a/c/0", "a/c/1"}));
  EXPECT_TRUE(store.list("nothing").empty());
  DirListing a = store.list_dir("a");
  EXPECT_EQ(a.keys, (std::vector<std::string>{"zarr.json"}));
  EXPECT_EQ(a.prefixes, (std::vector<std::string>{"c"}));
  DirListing root = store.list_dir("");
  EXPECT_EQ(root.keys, (std::vector<std::string>{"a.x", "a0"}));
  EXPECT_EQ(root.prefixes, (std::vector<std::string>{"a", "ab", "b"}));
}

TEST(MemoryStore, ErasePrefixRemovesOnlyThatDirectory) {
  MemoryStore store;
  for (const char* key : {"a/c/0", "a/zarr.json", "ab/c", "a0", "b"}) store.set(key, as_bytes("x"));
  store.erase_prefix("a");
  EXPECT_EQ(store.list(), (std::vector<std::string>{"a0", "ab/c", "b"}));
  store.erase_prefix("");
  EXPECT_TRUE(store.list().empty());
}

TEST(MemoryStore, ValidatesKeys) {
  MemoryStore store;
  EXPECT_THROW(store.set("../x", as_bytes("x")), InvalidArgumentError);
  EXPECT_THROW(store.get("/abs"), InvalidArgumentError);
  EXPECT_THROW(store.exists("a//b"), InvalidArgumentError);
  EXPECT_THROW(store.size("."), InvalidArgumentError);
  EXPECT_THROW(store.erase("a\\b"), InvalidArgumentError);
  EXPECT_THROW(store.list("../"), InvalidArgumentError);
  EXPECT_THROW(store.erase_prefix("/x"), InvalidArgumentError);
  EXPECT_TRUE(store.list().empty());
}

TEST(MemoryStore, DescribeAndCapabilities) {
  MemoryStore store;
  EXPECT_TRUE(store.describe().starts_with("memory://"));
  EXPECT_TRUE(store.capabilities().writable);
  EXPECT_TRUE(store.capabilities().listable);
}

TEST(MemoryStore, ConcurrentWritersAndReaders) {
  auto store = MemoryStore::create();
  constexpr int kThreads = 8;
  constexpr int kKeysPerThread = 200;
  std::atomic<bool> torn{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kKeysPerThread; ++i) {
        std::string key = "t" + std::to_string(t) + "/c/" + std::to_string(i);
        std::string value(100 + i, static_cast<char>('a' + t));
        store->set(key, as_bytes(value));
        store->set("shared", as_bytes(value));
        auto shared = store->get("shared");
        if (!shared) torn = true;
        else {
          auto bytes = as_chars(shared->view());
          if (bytes.find_first_not_of(bytes.front()) != std::string_view::npos) torn = true;
        }
        (void)store->list("t0");
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_FALSE(torn);
  EXPECT_EQ(store->list().size(), static_cast<std::size_t>(kThreads * kKeysPerThread + 1));
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(read_string(*store, "t" + std::to_string(t) + "/c/7"),
              std::string(107, static_cast<char>('a' + t)));
  }
}

}  // namespace
}  // namespace zarrkit
