#include "core/run_on_threads.h"

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "zarrkit/config.h"

namespace zarrkit {
namespace {

// Threads for waiting jobs, kept for later calls: a job gets an idle thread, or a new one
// when every kept thread is busy, so no job ever waits for another to finish (the jobs of
// one call may wait on each other) and a steady stream of reads starts no threads.
class KeptThreads {
 public:
  // Runs task, then (once the thread counts as idle again, so that a caller released by it
  // finds the thread free for its next call) finished.
  void start(std::function<void()> task, std::function<void()> finished) {
    std::unique_lock lock(mutex_);
    tasks_.push_back({std::move(task), std::move(finished)});
    if (idle_ < tasks_.size()) {
      threads_.emplace_back([this] { loop(); });  // throws std::system_error where none can start
      ++idle_;
    }
    lock.unlock();
    wake_.notify_one();
  }

  std::size_t size() {
    std::lock_guard lock(mutex_);
    return threads_.size();
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return !tasks_.empty(); });
      Task task = std::move(tasks_.front());
      tasks_.pop_front();
      --idle_;
      lock.unlock();
      task.run();  // never throws: the callers' tasks catch everything
      lock.lock();
      ++idle_;
      lock.unlock();
      task.finished();
      lock.lock();
    }
  }

  struct Task {
    std::function<void()> run;
    std::function<void()> finished;
  };
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> tasks_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;  // threads waiting for a task, counting those just started
};

// Never destroyed: its threads wait for tasks for the life of the process.
KeptThreads& kept_threads() {
  static KeptThreads* threads = new KeptThreads;
  return *threads;
}

}  // namespace

std::vector<std::exception_ptr> run_on_threads(std::size_t n, const std::function<void(std::size_t)>& job) {
  const Config caller = current_config();
  std::vector<std::exception_ptr> errors(n);
  auto run = [&](std::size_t i) {
    try {
      const ScopedConfig settings([&](Config& c) { c = caller; });
      job(i);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  std::mutex mutex;
  std::condition_variable finished;
  std::size_t running = 0;
  auto done = [&] {
    std::lock_guard lock(mutex);
    if (--running == 0) finished.notify_all();
  };
  std::exception_ptr not_started;
  for (std::size_t i = 1; i < n; ++i) {
    {
      std::lock_guard lock(mutex);
      ++running;
    }
    try {
      kept_threads().start([&, i] { run(i); }, done);
    } catch (...) {
      not_started = std::current_exception();
      std::lock_guard lock(mutex);
      --running;
      break;
    }
  }
  if (n > 0 && !not_started) run(0);
  std::unique_lock lock(mutex);
  finished.wait(lock, [&] { return running == 0; });
  if (not_started) std::rethrow_exception(not_started);
  return errors;
}

std::size_t threads_kept_for_waiting_jobs() { return kept_threads().size(); }

}  // namespace zarrkit
