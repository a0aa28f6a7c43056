#include "core/chunk_cache.h"

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace zarrkit {
namespace {

constexpr std::string_view kStore = "file:///data/";

// A decoded chunk of `size` bytes, each holding `tag`.
CachedChunk chunk_of(std::size_t size, char tag) {
  Buffer bytes = Buffer::allocate(size);
  std::memset(bytes.data(), tag, size);
  return CachedChunk{true, bytes};
}

ChunkCache::Key key(std::string_view chunk, std::uint64_t member = ChunkCache::kWholeChunk) {
  return {kStore, chunk, 7, member};
}

// What one entry of `size` bytes under `chunk` costs the budget.
std::uint64_t charge(std::size_t size, std::string_view chunk) {
  return size + kStore.size() + chunk.size() + ChunkCache::kEntryOverhead;
}

void put(ChunkCache& cache, std::string_view chunk, std::size_t size, char tag,
         std::uint64_t member = ChunkCache::kWholeChunk) {
  cache.insert(key(chunk, member), chunk_of(size, tag), cache.ticket(key(chunk, member)));
}

char tag_of(const std::optional<CachedChunk>& c) { return c && c->stored ? static_cast<char>(c->bytes.data()[0]) : 0; }

TEST(ChunkCache, FindsWhatWasInsertedAndNothingElse) {
  ChunkCache cache(1 << 20);
  put(cache, "a/c/0", 1000, 'x');
  EXPECT_EQ(tag_of(cache.find(key("a/c/0"))), 'x');
  EXPECT_FALSE(cache.find(key("a/c/1")));
  EXPECT_FALSE(cache.find(key("a/c/0", 3)));  // an inner chunk is another entry
  // Another array's decoding of the same place (another fingerprint) misses.
  EXPECT_FALSE(cache.find({kStore, "a/c/0", 8, ChunkCache::kWholeChunk}));
  // The same place named through a store opened further down.
  EXPECT_EQ(tag_of(cache.find({"file:///data/a/", "c/0", 7, ChunkCache::kWholeChunk})), 'x');
  // An absent chunk is an entry too (the fill value).
  cache.insert(key("a/c/2"), CachedChunk{}, cache.ticket(key("a/c/2")));
  const auto absent = cache.find(key("a/c/2"));
  ASSERT_TRUE(absent);
  EXPECT_FALSE(absent->stored);
  const ChunkCacheStats s = cache.stats();
  EXPECT_EQ(s.entries, 2u);
  EXPECT_EQ(s.bytes, charge(1000, "a/c/0") + charge(0, "a/c/2"));
  EXPECT_EQ(s.insertions, 2u);
}

TEST(ChunkCache, TheLeastRecentlyUsedGoFirstToStayWithinTheBudget) {
  ChunkCache cache(3 * charge(1000, "c/0"));
  put(cache, "c/0", 1000, 'a');
  put(cache, "c/1", 1000, 'b');
  put(cache, "c/2", 1000, 'c');
  EXPECT_TRUE(cache.find(key("c/0")));  // c/0 used last now: c/1 is the oldest
  put(cache, "c/3", 1000, 'd');
  EXPECT_TRUE(cache.find(key("c/0")));
  EXPECT_FALSE(cache.find(key("c/1")));
  EXPECT_TRUE(cache.find(key("c/2")));
  EXPECT_TRUE(cache.find(key("c/3")));
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_LE(cache.stats().bytes, cache.budget());
  // A smaller budget pushes out the oldest until what is left fits.
  cache.set_budget(charge(1000, "c/0"));
  EXPECT_EQ(cache.stats().entries, 1u);
  EXPECT_TRUE(cache.find(key("c/3")));
}

TEST(ChunkCache, ABudgetOfZeroOrSmallerThanAnEntryKeepsNothing) {
  ChunkCache off(0);
  put(off, "c/0", 10, 'a');
  EXPECT_FALSE(off.find(key("c/0")));
  EXPECT_EQ(off.stats().entries, 0u);
  ChunkCache small(charge(100, "c/0") - 1);
  put(small, "c/0", 100, 'a');
  EXPECT_FALSE(small.find(key("c/0")));
  put(small, "c/1", 10, 'b');
  EXPECT_TRUE(small.find(key("c/1")));
}

TEST(ChunkCache, AWriteDropsEveryMemberOfItsChunkAndNothingElse) {
  ChunkCache cache(1 << 20);
  for (std::uint64_t m = 0; m < 4; ++m) put(cache, "s/c/0", 100, 'a', m);
  put(cache, "s/c/1", 100, 'b', 0);
  cache.invalidate(kStore, "s/c/0");
  for (std::uint64_t m = 0; m < 4; ++m) EXPECT_FALSE(cache.find(key("s/c/0", m)));
  EXPECT_TRUE(cache.find(key("s/c/1", 0)));
  EXPECT_EQ(cache.stats().invalidations, 4u);
  // Another store's chunk of the same key is another chunk.
  cache.invalidate("file:///other/", "s/c/1");
  EXPECT_TRUE(cache.find(key("s/c/1", 0)));
}

TEST(ChunkCache, ErasingADirectoryDropsTheChunksBelowIt) {
  ChunkCache cache(1 << 20);
  put(cache, "a/c/0", 10, '1');
  put(cache, "a/b/c/0", 10, '2');
  put(cache, "ab/c/0", 10, '3');  // beside "a", not below it
  put(cache, "z/c/0", 10, '4');
  cache.invalidate_prefix(kStore, "a/");
  EXPECT_FALSE(cache.find(key("a/c/0")));
  EXPECT_FALSE(cache.find(key("a/b/c/0")));
  EXPECT_TRUE(cache.find(key("ab/c/0")));
  EXPECT_TRUE(cache.find(key("z/c/0")));
  cache.invalidate_prefix("file:///data/z/", "");  // the whole of a store opened on z
  EXPECT_FALSE(cache.find(key("z/c/0")));
  EXPECT_TRUE(cache.find(key("ab/c/0")));
  cache.invalidate_prefix(kStore, "");
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(ChunkCache, AValueReadBeforeAWriteIsNotKept) {
  ChunkCache cache(1 << 20);
  const std::uint64_t ticket = cache.ticket(key("c/0"));
  cache.invalidate(kStore, "c/0");  // the write lands while the reader decodes the old value
  cache.insert(key("c/0"), chunk_of(10, 'o'), ticket);
  EXPECT_FALSE(cache.find(key("c/0")));
  EXPECT_EQ(cache.stats().dropped, 1u);
  // A ticket taken after the write is good.
  cache.insert(key("c/0"), chunk_of(10, 'n'), cache.ticket(key("c/0")));
  EXPECT_EQ(tag_of(cache.find(key("c/0"))), 'n');
}

TEST(ChunkCache, ArraysOwnCachesAreReachedByWritesAndForgottenWhenGone) {
  std::shared_ptr<ChunkCache> own = make_registered_chunk_cache(1 << 20);
  put(*own, "a/c/0", 10, 'a');
  ASSERT_TRUE(chunk_caches_exist());
  invalidate_chunk_caches(kStore, "a/c/0");
  EXPECT_FALSE(own->find(key("a/c/0")));
  put(*own, "a/c/0", 10, 'a');
  invalidate_chunk_caches_under("file:///data/a/", "");
  EXPECT_FALSE(own->find(key("a/c/0")));
  std::weak_ptr<ChunkCache> gone = own;
  own.reset();
  EXPECT_TRUE(gone.expired());  // the registry holds no reference
  invalidate_chunk_caches(kStore, "a/c/0");
}

TEST(ChunkCache, TheProcessCacheFollowsTheBudgetItIsAskedFor) {
  ChunkCache* cache = process_chunk_cache(1 << 20);
  ASSERT_NE(cache, nullptr);
  put(*cache, "p/c/0", 100, 'p');
  EXPECT_EQ(chunk_cache_stats().entries, 1u);
  EXPECT_EQ(process_chunk_cache(2 << 20), cache);
  EXPECT_EQ(chunk_cache_stats().budget, 2u << 20);
  EXPECT_EQ(process_chunk_cache(0), nullptr);  // off: emptied
  EXPECT_EQ(chunk_cache_stats().entries, 0u);
  EXPECT_EQ(chunk_cache_stats().budget, 0u);
}

TEST(ChunkCache, ConcurrentReadersWritersAndEvictionsKeepItConsistent) {
  // Each chunk's value holds its own number and the version it was "fetched" at: a hit must
  // never return another chunk's bytes, nor a version older than one whose write (a new
  // version, then the cache told) had completed before the lookup.
  constexpr int kChunks = 200;
  constexpr std::size_t kSize = 1000;
  ChunkCache cache(60 * charge(kSize, "c/000"));
  std::vector<std::atomic<int>> version(kChunks);    // the store's value
  std::vector<std::atomic<int>> committed(kChunks);  // versions whose writes have completed
  std::atomic<int> wrong{0};
  auto name = [](int c) { return "c/" + std::to_string(c); };
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      for (int i = 0; i < 20000; ++i) {
        const int c = static_cast<int>(rng() % kChunks);
        const std::string k = name(c);
        if (rng() % 10 == 0) {
          const int v = version[c].fetch_add(1) + 1;
          cache.invalidate(kStore, k);
          int seen = committed[c].load();
          while (seen < v && !committed[c].compare_exchange_weak(seen, v)) {
          }
          continue;
        }
        const int done = committed[c].load();
        const std::uint64_t ticket = cache.ticket(key(k));
        if (auto hit = cache.find(key(k))) {
          const auto* bytes = reinterpret_cast<const unsigned char*>(hit->bytes.data());
          int got = 0;
          std::memcpy(&got, bytes + 1, sizeof got);
          if (bytes[0] != static_cast<unsigned char>(c) || bytes[kSize - 1] != static_cast<unsigned char>(c) ||
              got < done) {
            ++wrong;
          }
          continue;
        }
        const int v = version[c].load();  // fetched after the ticket
        Buffer bytes = Buffer::allocate(kSize);
        std::memset(bytes.data(), c, kSize);
        std::memcpy(bytes.data() + 1, &v, sizeof v);
        cache.insert(key(k), CachedChunk{true, bytes}, ticket);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  const ChunkCacheStats s = cache.stats();
  EXPECT_LE(s.bytes, s.budget);
  EXPECT_GT(s.evictions, 0u);
  EXPECT_GT(s.invalidations, 0u);
  // The counters agree with what is held.
  std::uint64_t held = 0;
  for (int c = 0; c < kChunks; ++c) held += cache.find(key(name(c))) ? 1 : 0;
  EXPECT_EQ(held, s.entries);
}

}  // namespace
}  // namespace zarrkit
