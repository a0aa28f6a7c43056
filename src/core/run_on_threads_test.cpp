#include "core/run_on_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "zarrkit/config.h"

namespace zarrkit {
namespace {

// Jobs that wait for each other (all four must arrive before any leaves) finish: each runs
// at once, on a thread of its own.
TEST(RunOnThreads, EveryJobRunsOnItsOwnThreadUnderTheCallersSettings) {
  const ScopedConfig settings([](Config& c) { c.num_threads = 3; });
  std::vector<std::thread::id> ids(4);
  std::vector<std::size_t> threads_setting(4);
  std::atomic<int> arrived{0};
  const auto errors = run_on_threads(4, [&](std::size_t i) {
    ids[i] = std::this_thread::get_id();
    threads_setting[i] = current_config().num_threads;
    ++arrived;
    while (arrived.load() < 4) std::this_thread::yield();
  });
  EXPECT_EQ(ids[0], std::this_thread::get_id());
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(errors[i], nullptr);
    EXPECT_EQ(threads_setting[i], 3u);
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(ids[i], ids[j]);
  }
}

TEST(RunOnThreads, EachJobsErrorComesBackAfterAllFinished) {
  std::atomic<int> finished{0};
  const auto errors = run_on_threads(3, [&](std::size_t i) {
    ++finished;
    if (i == 1) throw std::runtime_error("job 1");
  });
  EXPECT_EQ(finished.load(), 3);
  EXPECT_EQ(errors[0], nullptr);
  EXPECT_NE(errors[1], nullptr);
  EXPECT_EQ(errors[2], nullptr);
  EXPECT_TRUE(run_on_threads(0, [](std::size_t) {}).empty());
}

// A steady stream of calls starts no threads once the first calls made enough.
TEST(RunOnThreads, ThreadsAreKeptForLaterCalls) {
  const auto wait_for_all = [](std::size_t n) {
    std::atomic<std::size_t> arrived{0};
    run_on_threads(n, [&](std::size_t) {
      ++arrived;
      while (arrived.load() < n) std::this_thread::yield();
    });
  };
  wait_for_all(6);
  const std::size_t kept = threads_kept_for_waiting_jobs();
  EXPECT_GE(kept, 5u);
  for (int round = 0; round < 50; ++round) wait_for_all(6);
  EXPECT_EQ(threads_kept_for_waiting_jobs(), kept);
  // Calls from several threads at once share the kept threads and get more where needed.
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c) callers.emplace_back([&] { wait_for_all(4); });
  for (auto& t : callers) t.join();
  EXPECT_LE(threads_kept_for_waiting_jobs(), kept + 9);
}

}  // namespace
}  // namespace zarrkit
