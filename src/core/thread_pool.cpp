#include "zarrkit/thread_pool.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <exception>

#include "zarrkit/error.h"

namespace zarrkit {
namespace {
// The pool whose task the calling thread is running, if any.
thread_local const ThreadPool* t_current_pool = nullptr;
}  // namespace

struct ThreadPool::Job {
  std::size_t n = 0;
  const std::function<void(std::size_t)>* task = nullptr;
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::size_t active_workers = 0;  // guarded by the pool mutex
  std::mutex error_mutex;
  std::size_t error_index = SIZE_MAX;
  std::exception_ptr error;
};

ThreadPool::ThreadPool(std::size_t num_threads) {
  if (num_threads == 0) num_threads = std::max(1u, std::thread::hardware_concurrency());
  try {
    workers_.reserve(num_threads - 1);
    for (std::size_t i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
  } catch (const std::exception& e) {
    // The system refused a thread (or the memory for the list): the ones started must be
    // stopped and joined before the pool's members go, or their destruction terminates.
    const std::size_t started = workers_.size();
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
    fail_resource("cannot start a pool of {} threads ({} started): {}", num_threads, started + 1, e.what());
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_job(Job& job) {
  for (;;) {
    std::size_t i = job.next.fetch_add(1);
    if (i >= job.n) break;
    try {
      (*job.task)(i);
    } catch (...) {
      std::lock_guard lock(job.error_mutex);
      if (i < job.error_index) {
        job.error_index = i;
        job.error = std::current_exception();
      }
    }
    job.done.fetch_add(1);
  }
}

ThreadPool::Job* ThreadPool::open_job() const {
  // Newest first: a nested call's tasks unblock the task that waits for them.
  for (auto it = jobs_.rbegin(); it != jobs_.rend(); ++it) {
    if ((*it)->next.load() < (*it)->n) return *it;
  }
  return nullptr;
}

void ThreadPool::worker_loop() {
  pthread_setname_np(pthread_self(), "zarrkit-pool");  // in profiles and /proc/PID/task/*/comm
  t_current_pool = this;
  for (;;) {
    Job* job = nullptr;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || (job = open_job()) != nullptr; });
      if (stopping_) return;
      ++job->active_workers;
    }
    run_job(*job);
    {
      std::lock_guard lock(mutex_);
      --job->active_workers;
    }
    wake_.notify_all();
  }
}

void ThreadPool::parallel_for(std::size_t n, const std::function<void(std::size_t)>& task) {
  if (n == 0) return;
  // Inside a task of another pool (a caller's own pool of readers, say), the caller chose
  // that pool's threads for the work: run inline rather than add this pool's.
  if (workers_.empty() || n == 1 || (t_current_pool != nullptr && t_current_pool != this)) {
    // Inline: same error contract (first failing index wins, all tasks run).
    std::exception_ptr first;
    for (std::size_t i = 0; i < n; ++i) {
      try {
        task(i);
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
    return;
  }
  Job job;
  job.n = n;
  job.task = &task;
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(&job);
  }
  wake_.notify_all();
  const ThreadPool* const outer_pool = t_current_pool;
  t_current_pool = this;
  run_job(job);
  t_current_pool = outer_pool;
  {
    std::unique_lock lock(mutex_);
    wake_.wait(lock, [&] { return job.done.load() == n && job.active_workers == 0; });
    jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace zarrkit
