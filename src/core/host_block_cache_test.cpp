#include "core/host_block_cache.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace zarrkit {
namespace {

namespace cache = host_block_cache;

TEST(HostBlockCache, AFreedBlockServesTheNextAllocationOfTheThread) {
  cache::release_thread_cache();
  void* a = cache::allocate(3 << 20);
  ASSERT_NE(a, nullptr);
  std::memset(a, 1, 3 << 20);
  cache::release(a);
  const auto before = cache::stats();
  void* b = cache::allocate((3 << 20) - 1000);  // a little smaller: the same block
  EXPECT_EQ(b, a);
  EXPECT_EQ(cache::stats().reuses, before.reuses + 1);
  EXPECT_EQ(cache::stats().maps, before.maps);
  void* c = cache::allocate(5 << 20);  // larger: a new mapping
  EXPECT_NE(c, a);
  cache::release(b);
  cache::release(c);
  cache::release_thread_cache();
}

TEST(HostBlockCache, TheCachesKeepAtMostTheirLimitsAndReleaseTheRest) {
  cache::release_thread_cache();
  cache::release_shared_cache();
  const auto start = cache::stats();
  std::vector<void*> blocks;
  const std::size_t n = cache::kMaxCachedBlocks + cache::kMaxSharedBlocks + 5;
  for (std::size_t i = 0; i < n; ++i) blocks.push_back(cache::allocate(std::size_t{256} << 10));
  EXPECT_EQ(cache::stats().mapped_blocks, start.mapped_blocks + n);
  // The thread keeps its limit, the shared cache takes what it pushes out up to its own.
  for (void* b : blocks) cache::release(b);
  EXPECT_EQ(cache::stats().mapped_blocks, start.mapped_blocks + cache::kMaxCachedBlocks + cache::kMaxSharedBlocks);
  cache::release_shared_cache();
  EXPECT_EQ(cache::stats().mapped_blocks, start.mapped_blocks + cache::kMaxCachedBlocks);
  // A block larger than the whole cache is never kept.
  cache::release(cache::allocate(cache::kMaxCachedBytes + 1));
  EXPECT_EQ(cache::stats().mapped_blocks, start.mapped_blocks + cache::kMaxCachedBlocks);
  cache::release_thread_cache();
  cache::release_shared_cache();
  EXPECT_EQ(cache::stats().mapped_blocks, start.mapped_blocks);
}

TEST(HostBlockCache, BlocksFreedOnOtherThreadsServeThisThreadsNextAllocations) {
  // As a transport's thread allocates response bodies that pool threads free.
  cache::release_thread_cache();
  cache::release_shared_cache();
  std::vector<void*> blocks;
  for (int i = 0; i < 5; ++i) blocks.push_back(cache::allocate(std::size_t{1} << 20));
  std::thread([&] {
    for (void* b : blocks) cache::release(b);  // keeps three, pushes two out
  }).join();                                    // and unmaps its three as it ends
  const auto before = cache::stats();
  void* again = cache::allocate(std::size_t{1} << 20);
  void* again2 = cache::allocate((std::size_t{1} << 20) - 5000);
  EXPECT_EQ(cache::stats().maps, before.maps);  // both came back without a new mapping
  EXPECT_EQ(cache::stats().reuses, before.reuses + 2);
  EXPECT_TRUE(std::find(blocks.begin(), blocks.end(), again) != blocks.end());
  EXPECT_TRUE(std::find(blocks.begin(), blocks.end(), again2) != blocks.end());
  cache::release(again);
  cache::release(again2);
  cache::release_thread_cache();
  cache::release_shared_cache();
}

TEST(HostBlockCache, ManyThreadsReuseTheirBlocksWithoutSharingThem) {
  // Each thread fills its blocks with its own pattern and checks it before freeing; blocks
  // also cross threads (allocated on one, freed on another) through a shared queue.
  constexpr int kThreads = 8;
  constexpr int kRounds = 200;
  const auto start = cache::stats();
  std::atomic<int> corrupt{0};
  std::mutex handoff_mutex;
  std::vector<std::pair<void*, std::size_t>> handoff;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<std::uint64_t>(t));
      for (int round = 0; round < kRounds; ++round) {
        const std::size_t size = cache::kMinBytes + rng() % (std::size_t{3} << 20);
        auto* p = static_cast<unsigned char*>(cache::allocate(size));
        if (p == nullptr) {
          ++corrupt;
          continue;
        }
        const auto pattern = static_cast<unsigned char>(t * 31 + round);
        std::memset(p, pattern, size);
        std::this_thread::yield();
        for (std::size_t i = 0; i < size; i += 4093) {
          if (p[i] != pattern) ++corrupt;
        }
        if (p[size - 1] != pattern) ++corrupt;
        if (round % 5 == 0) {
          std::lock_guard lock(handoff_mutex);
          handoff.emplace_back(p, size);
        } else {
          cache::release(p);
        }
        std::pair<void*, std::size_t> other{nullptr, 0};
        {
          std::lock_guard lock(handoff_mutex);
          if (!handoff.empty() && round % 3 == 0) {
            other = handoff.back();
            handoff.pop_back();
          }
        }
        if (other.first != nullptr) cache::release(other.first);
      }
      cache::release_thread_cache();
    });
  }
  for (auto& t : threads) t.join();
  for (auto& [p, size] : handoff) cache::release(p);
  cache::release_thread_cache();
  cache::release_shared_cache();
  EXPECT_EQ(corrupt.load(), 0);
  EXPECT_GT(cache::stats().reuses, start.reuses);
  EXPECT_EQ(cache::stats().mapped_blocks, start.mapped_blocks);
}

}  // namespace
}  // namespace zarrkit
