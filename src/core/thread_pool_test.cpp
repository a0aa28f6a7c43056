#include "zarrkit/thread_pool.h"

#include <atomic>
#include <cstdint>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "zarrkit/error.h"

namespace zarrkit {
namespace {

TEST(ThreadPool, APoolTheSystemCannotStartIsAResourceErrorNotATermination) {
  // More threads than can be listed: refused before any starts, as a typed error.
  EXPECT_THROW(ThreadPool pool(SIZE_MAX), ResourceExhaustedError);
}

TEST(ThreadPool, NestedCallsThreeDeepFinishEveryTask) {
  ThreadPool pool(6);
  std::atomic<int> total{0};
  pool.parallel_for(5, [&](std::size_t) {
    pool.parallel_for(4, [&](std::size_t) {
      pool.parallel_for(3, [&](std::size_t) { total++; });
    });
  });
  EXPECT_EQ(total.load(), 5 * 4 * 3);
}

TEST(ThreadPool, IdleWorkersHelpWithANestedCall) {
  // Two outer tasks on a pool of four: the inner tasks must not all run on the two threads
  // that run the outer ones.
  ThreadPool pool(4);
  std::mutex mutex;
  std::set<std::thread::id> inner_threads;
  pool.parallel_for(2, [&](std::size_t) {
    pool.parallel_for(8, [&](std::size_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::lock_guard lock(mutex);
      inner_threads.insert(std::this_thread::get_id());
    });
  });
  EXPECT_GT(inner_threads.size(), 2u);
}

TEST(ThreadPool, CallsFromSeveralThreadsAtOnceAndErrorsStayWithTheirCall) {
  ThreadPool pool(4);
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int c = 0; c < 6; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 50; ++round) {
        std::vector<int> hits(37, 0);
        const bool fail = (c + round) % 7 == 0;
        try {
          pool.parallel_for(hits.size(), [&](std::size_t i) {
            hits[i]++;
            if (fail && i == 11) throw DataLossError("bad");
            if (i % 9 == 0) pool.parallel_for(3, [](std::size_t) {});
          });
          if (fail) ++wrong;
        } catch (const DataLossError&) {
          if (!fail) ++wrong;
        }
        for (int h : hits) {
          if (h != 1) ++wrong;
        }
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace zarrkit
