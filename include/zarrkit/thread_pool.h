// A fixed-size thread pool with one operation: run n independent tasks and wait.
// The calling thread works too, so a pool of size 1 runs everything inline.
//
// Several calls may run at once, from several threads or nested (a task that calls
// parallel_for, such as a shard whose inner chunks decode in parallel): idle workers take
// tasks of any running call, the newest first, so one budget of threads is shared between
// chunks and the work inside them. A caller runs its own call's tasks too and never waits
// for a task that nobody has started, so nesting cannot deadlock. A call made from a task
// of another pool runs inline, on that pool's thread.
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
  // exception (lowest index) is rethrown after all tasks have finished.
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& task);

 private:
  struct Job;
  void worker_loop();
  static void run_job(Job& job);
  Job* open_job() const;  // the newest job with tasks not yet started; needs mutex_

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Job*> jobs_;  // running calls, oldest first
  bool stopping_ = false;
};

}  // namespace zarrkit
