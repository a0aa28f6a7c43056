#include "zarrkit/thread_pool.h"

#include <atomic>
#include <exception>

namespace zarrkit {
namespace {
thread_local bool t_inside_pool_task = false;
}

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
  for (std::size_t i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
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
  const bool was_inside = t_inside_pool_task;
  t_inside_pool_task = true;
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
  t_inside_pool_task = was_inside;
}

void ThreadPool::worker_loop() {
  std::size_t seen = 0;
  for (;;) {
    Job* job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || (job_ != nullptr && generation_ != seen); });
      if (stopping_) return;
      seen = generation_;
      job = job_;
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
  if (workers_.empty() || n == 1 || t_inside_pool_task) {
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
  std::lock_guard submit(submit_mutex_);
  Job job;
  job.n = n;
  job.task = &task;
  {
    std::lock_guard lock(mutex_);
    job_ = &job;
    ++generation_;
  }
  wake_.notify_all();
  run_job(job);
  {
    std::unique_lock lock(mutex_);
    wake_.wait(lock, [&] { return job.done.load() == n && job.active_workers == 0; });
    job_ = nullptr;
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace zarrkit
