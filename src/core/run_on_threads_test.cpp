#include "core/run_on_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "zarrkit/config.h"

namespace zarrkit {
namespace {

TEST(RunOnThreads, EveryJobRunsOnItsOwnThreadUnderTheCallersSettings) {
  const ScopedConfig settings([](Config& c) { c.num_threads = 3; });
  std::vector<std::thread::id> ids(4);
  std::vector<std::size_t> threads_setting(4);
  const auto errors = run_on_threads(4, [&](std::size_t i) {
    ids[i] = std::this_thread::get_id();
    threads_setting[i] = current_config().num_threads;
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

}  // namespace
}  // namespace zarrkit
