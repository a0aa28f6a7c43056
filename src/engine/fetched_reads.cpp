#include "engine/fetched_reads.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "core/checked_math.h"
#include "engine/fetched_store.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {

constexpr std::size_t kDefaultRequestsInFlight = 64;
constexpr std::uint64_t kMaxDecodedBytes = std::uint64_t{256} << 20;
// Large objects requested at once share the link and all finish near the end of the fetch,
// so decoding could start only then. Requesting at most ~128 MiB (by decoded size, an upper
// bound of what is sent) at a time lets the first ones finish while the rest are on the way
// and be decoded meanwhile. 128 MiB still fills a link of 6 GB/s at 20 ms per answer, or
// 32 connections when each carries 4 MiB chunks; small chunks are not held back by it.
constexpr std::uint64_t kMaxRequestedBytes = std::uint64_t{128} << 20;
// Tasks that read for themselves (a shard read in part: its index, then its inner chunks)
// each wait for their own requests, so several run at once, a quarter of the requests in
// flight, to keep that many requests on the way.
constexpr std::size_t kMinOwnReaders = 4;
constexpr std::size_t kMaxOwnReaders = 16;

// A task whose value has arrived, waiting for a thread.
struct Arrived {
  std::size_t task = 0;
  std::string key;
  std::optional<Buffer> value;
};

// Thrown from get_each's handler to end a batch once the read has failed.
struct Stopped {};

// One run: the work the pool's threads share, and its budget. Each thread runs work() until
// nothing is left for it. A thread waits only while another, already running, is fetching a
// batch or running a task, and every thread that changes the state goes on to look for work
// itself: every wait ends without help from a thread not yet started. Idle threads are woken
// only for work that a thread inside get_each leaves to them, and all at once when nothing is
// left to start.
class FetchRun {
 public:
  FetchRun(const std::shared_ptr<Store>& store, const FetchBudget& budget, std::size_t own_limit,
           std::string_view context, std::vector<std::string> keys, std::vector<std::size_t> fetched_tasks,
           std::vector<std::size_t> own_tasks, const std::function<void(Store&, std::size_t)>& run_one)
      : store_(store),
        budget_(budget),
        own_limit_(own_limit),
        context_(context),
        keys_(std::move(keys)),
        fetched_tasks_(std::move(fetched_tasks)),
        own_tasks_(std::move(own_tasks)),
        run_one_(run_one) {}

  // One of the pool's tasks. In order of preference: request the next batch when the budget
  // has room for it (requests stay on the way), run a task whose value has arrived, start a
  // task that makes its own requests; else wait, or return once nothing is left to start.
  void work() {
    std::unique_lock lock(mutex_);
    while (!failure_) {
      if (const std::size_t count = batch_that_fits(); count > 0) {
        const std::size_t first = next_key_;
        next_key_ += count;
        on_the_way_ += count;
        requested_ += count;
        ++fetching_;
        cover_arrived();  // this thread may have been woken for one of them
        lock.unlock();
        fetch(first, count);
        lock.lock();
        --fetching_;
        if (nothing_left_to_start()) wake_all();
        continue;
      }
      if (!arrived_.empty()) {
        run_arrived(lock);
        continue;
      }
      if (own_task_may_start()) {
        const std::size_t task = own_tasks_[next_own_++];
        ++own_running_;
        if (nothing_left_to_start()) wake_all();
        lock.unlock();
        run_guarded(*store_, task);
        lock.lock();
        --own_running_;
        continue;
      }
      // Tasks still running elsewhere finish by themselves: nothing more comes for this thread.
      if (nothing_left_to_start()) return;
      ++waiting_;
      changed_.wait(lock);
      --waiting_;
      if (woken_ > 0) --woken_;
    }
  }

  std::exception_ptr failure() {
    std::lock_guard lock(mutex_);
    return failure_;
  }

 private:
  // The size of the next batch when the budget has room for it, else 0.
  std::size_t batch_that_fits() const {
    if (next_key_ == keys_.size()) return 0;
    const std::size_t count = std::min(budget_.batch, keys_.size() - next_key_);
    const bool fits = on_the_way_ + count <= budget_.chunks && requested_ + count <= budget_.requested;
    return fits ? count : 0;
  }

  bool own_task_may_start() const { return next_own_ < own_tasks_.size() && own_running_ < own_limit_; }

  bool nothing_left_to_start() const {
    return next_key_ == keys_.size() && fetching_ == 0 && arrived_.empty() && next_own_ == own_tasks_.size();
  }

  // Waiting threads not already woken.
  std::size_t idle() const { return waiting_ > woken_ ? waiting_ - woken_ : 0; }

  void wake_one() {
    if (idle() == 0) return;
    ++woken_;
    changed_.notify_one();
  }

  void wake_all() {
    woken_ = waiting_;
    changed_.notify_all();
  }

  // Wakes idle threads until each arrived value has a woken thread to take it, or none is left.
  void cover_arrived() {
    while (arrived_.size() > woken_ && idle() > 0) wake_one();
  }

  // Fetches keys [first, first + count) with one get_each. While it hands the values over,
  // those that no idle thread is free to take are run on this thread.
  void fetch(std::size_t first, std::size_t count) {
    std::size_t handed = 0;
    try {
      const std::span<const std::string> batch(keys_.data() + first, count);
      store_->get_each(batch, BufferPrototype::host(), [&](std::size_t k, std::optional<Buffer> value) {
        if (k >= count) fail_io("{}: get_each handed over value {} of a batch of {}", store_->describe(), k, count);
        std::unique_lock lock(mutex_);
        if (failure_) throw Stopped{};
        ++handed;
        --requested_;
        arrived_.push_back(Arrived{fetched_tasks_[first + k], keys_[first + k], std::move(value)});
        cover_arrived();
        if (arrived_.size() > woken_) {
          // More values waiting than idle threads: run one here; the transport keeps
          // receiving the rest of the batch meanwhile.
          run_arrived(lock);
          if (failure_) throw Stopped{};
        }
        // This thread requests no more until get_each returns: room for a batch is another's.
        if (batch_that_fits() > 0) wake_one();
      });
      // Every task waits to be run: a store that dropped a key would leave one undone.
      if (handed != count) fail_io("{}: get_each handed over {} of {} values", store_->describe(), handed, count);
    } catch (const Stopped&) {
      // The read failed elsewhere; what this batch still had on the way is not wanted.
    } catch (const Error& e) {
      try {
        rethrow_with_context(e, context_);
      } catch (...) {
        fail(std::current_exception());
      }
    } catch (...) {
      fail(std::current_exception());
    }
  }

  // Runs the oldest arrived task. Called with the lock held; returns with it held.
  void run_arrived(std::unique_lock<std::mutex>& lock) {
    Arrived a = std::move(arrived_.front());
    arrived_.pop_front();
    if (nothing_left_to_start()) wake_all();
    lock.unlock();
    try {
      FetchedStore::Fetched held;
      held.emplace(std::move(a.key), std::move(a.value));
      FetchedStore fetched(store_, std::move(held));
      run_one_(fetched, a.task);
    } catch (...) {
      fail(std::current_exception());
    }
    lock.lock();
    --on_the_way_;
  }

  void run_guarded(Store& store, std::size_t task) {
    try {
      run_one_(store, task);
    } catch (...) {
      fail(std::current_exception());
    }
  }

  // Records the first failure and wakes everyone: nothing more is requested or run.
  void fail(std::exception_ptr error) {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = std::move(error);
    wake_all();
  }

  const std::shared_ptr<Store>& store_;
  const FetchBudget budget_;
  const std::size_t own_limit_;
  const std::string_view context_;
  const std::vector<std::string> keys_;           // of the fetched tasks, in task order
  const std::vector<std::size_t> fetched_tasks_;  // the task of each key
  const std::vector<std::size_t> own_tasks_;      // tasks that make their own requests
  const std::function<void(Store&, std::size_t)>& run_one_;

  std::mutex mutex_;
  std::condition_variable changed_;  // work for a waiting thread, nothing left, or the run failed
  std::deque<Arrived> arrived_;
  std::size_t next_key_ = 0;     // keys before it have been requested
  std::size_t next_own_ = 0;     // own tasks before it have been started
  std::size_t on_the_way_ = 0;   // requested, or arrived and not yet run
  std::size_t requested_ = 0;    // requested and not yet arrived
  std::size_t fetching_ = 0;     // batches in get_each
  std::size_t own_running_ = 0;  // own tasks running
  std::size_t waiting_ = 0;      // threads waiting in work()
  std::size_t woken_ = 0;        // of which woken and not yet running
  std::exception_ptr failure_;
};

}  // namespace

FetchBudget fetch_budget(std::size_t requests_in_flight, std::uint64_t chunk_bytes, std::size_t threads) {
  const std::size_t in_flight = requests_in_flight > 0 ? requests_in_flight : kDefaultRequestsInFlight;
  const std::uint64_t chunk = std::max<std::uint64_t>(chunk_bytes, 1);
  const std::uint64_t by_bytes = std::max<std::uint64_t>(kMaxDecodedBytes / chunk, 1);
  FetchBudget b;
  b.chunks = to_size(std::min<std::uint64_t>(std::max<std::size_t>(2 * in_flight, 8), by_bytes));
  b.requested = to_size(std::clamp<std::uint64_t>(kMaxRequestedBytes / chunk, 1, b.chunks));
  b.batch = std::max<std::size_t>(std::min(b.chunks / 4, b.requested / 2), 1);
  // Each batch on the way holds a thread: with fewer threads than batches, the transport
  // would run short of requests whenever a batch waits for its last answers.
  b.batch = std::max<std::size_t>(b.batch, to_size(ceil_div(b.requested, std::max<std::size_t>(threads, 1))));
  b.own_readers = std::clamp<std::size_t>(in_flight / 4, kMinOwnReaders, kMaxOwnReaders);
  return b;
}

void run_fetched_as_they_arrive(const std::shared_ptr<Store>& store, std::uint64_t chunk_bytes,
                                std::size_t num_tasks, std::string_view context,
                                const std::function<std::string(std::size_t)>& key_of,
                                const std::function<void(Store&, std::size_t)>& run_one) {
  if (num_tasks == 0) return;
  ThreadPool& pool = shared_thread_pool();
  const FetchBudget budget = fetch_budget(store->capabilities().requests_in_flight, chunk_bytes, pool.size());
  // Which tasks are fetched here and which make their own requests.
  std::vector<std::size_t> fetched_tasks;
  std::vector<std::size_t> own_tasks;
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < num_tasks; ++i) {
    std::string key = key_of(i);
    if (key.empty()) {
      own_tasks.push_back(i);
    } else {
      fetched_tasks.push_back(i);
      keys.push_back(std::move(key));
    }
  }
  // Each thread takes whatever work there is, so more threads than tasks would idle.
  const std::size_t threads = std::min(pool.size(), num_tasks);
  FetchRun run(store, budget, std::min(budget.own_readers, threads), context, std::move(keys),
               std::move(fetched_tasks), std::move(own_tasks), run_one);
  pool.parallel_for(threads, [&](std::size_t) { run.work(); });
  if (std::exception_ptr failure = run.failure()) std::rethrow_exception(failure);
}

void read_fetched_as_they_arrive(const std::shared_ptr<Store>& store, const ArrayMetadata& m, const NDView& region,
                                 std::size_t num_tasks, std::string_view context,
                                 const std::function<std::string(std::size_t)>& key_of,
                                 const std::function<void(const ChunkReadRequest&, std::size_t)>& read_one) {
  const ChunkReadRequest own_request(*store, m, region);
  run_fetched_as_they_arrive(store, checked_nbytes(m.chunk_shape, m.dtype), num_tasks, context, key_of,
                             [&](Store& source, std::size_t task) {
                               if (&source == store.get()) return read_one(own_request, task);
                               read_one(ChunkReadRequest(source, m, region), task);
                             });
}

}  // namespace zarrkit
