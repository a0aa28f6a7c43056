// A fixed-size thread pool with one operation: run n independent tasks and wait.
// The calling thread works too, so a pool of size 1 runs everything inline.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace zarrkit {

class ThreadPool {
 public:
  // `num_threads` includes the caller: 1 means no extra threads. 0 means hardware threads.
  explicit ThreadPool(std::size_t num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  std::size_t size() const { return workers_.size() + 1; }

  // Calls task(i) for i in [0, n) on the pool and waits. If tasks throw, the first
  // exception (lowest index) is rethrown after all tasks have finished. Nested calls from
  // inside a task run inline.
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& task);

 private:
  struct Job;
  void worker_loop();
  static void run_job(Job& job);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  Job* job_ = nullptr;
  std::size_t generation_ = 0;
  bool stopping_ = false;
  std::mutex submit_mutex_;
};

}  // namespace zarrkit
