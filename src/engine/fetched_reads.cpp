#include "engine/fetched_reads.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "core/checked_math.h"
#include "engine/fetched_store.h"
#include "zarrkit/error.h"
#include "zarrkit/config.h"
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
// Threads for the tasks that read for themselves (a shard read in part: its index, then its
// inner chunks): each waits for its own requests, so several run at once, a quarter of the
// requests in flight, to keep that many requests on the way.
constexpr std::size_t kMinOwnReaders = 4;
constexpr std::size_t kMaxOwnReaders = 16;

// A task whose chunk has arrived, waiting for a pool thread.
struct Arrived {
  std::size_t task = 0;
  std::string key;
  std::optional<Buffer> value;
};

// Thrown from get_each's handler to end a batch once the read has failed.
struct Stopped {};

// What the batches' fetch threads, the pool's readers and the thread that hands out the
// batches share.
class Flow {
 public:
  Flow(std::size_t budget, std::size_t requested_budget) : budget_(budget), requested_budget_(requested_budget) {}

  // Waits until `count` more chunks fit in the budget and counts them on the way. False
  // once the read has failed.
  bool reserve(std::size_t count) { return take(on_the_way_, budget_, count); }

  // Waits until `count` more chunks may be requested (requested and not yet arrived).
  // False once the read has failed.
  bool request(std::size_t count) { return take(requested_, requested_budget_, count); }

  // A fetched chunk; throws Stopped once the read has failed.
  void arrive(Arrived a) {
    {
      std::lock_guard lock(mutex_);
      if (failure_) throw Stopped{};
      arrived_.push_back(std::move(a));
      --requested_;
    }
    work_.notify_one();
    room_.notify_all();  // the batch thread may request more
  }

  // The next task to read, or nullopt once the read has failed.
  std::optional<Arrived> next() {
    std::unique_lock lock(mutex_);
    work_.wait(lock, [&] { return failure_ || !arrived_.empty(); });
    if (failure_) return std::nullopt;
    Arrived a = std::move(arrived_.front());
    arrived_.pop_front();
    return a;
  }

  void done_one() {
    {
      std::lock_guard lock(mutex_);
      --on_the_way_;
    }
    room_.notify_one();
  }

  // Records the first failure and wakes everyone: nothing more is requested or read.
  void fail(std::exception_ptr error) {
    {
      std::lock_guard lock(mutex_);
      if (!failure_) failure_ = std::move(error);
    }
    work_.notify_all();
    room_.notify_all();
  }

  bool failed() {
    std::lock_guard lock(mutex_);
    return failure_ != nullptr;
  }

  std::exception_ptr failure() {
    std::lock_guard lock(mutex_);
    return failure_;
  }

 private:
  // Waits until `count` more fit under `limit` and adds them to `used`; false once failed.
  bool take(std::size_t& used, std::size_t limit, std::size_t count) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return failure_ || used + count <= limit; });
    if (failure_) return false;
    used += count;
    return true;
  }

  const std::size_t budget_;
  const std::size_t requested_budget_;
  std::mutex mutex_;
  std::condition_variable work_;  // a task arrived, or the read failed
  std::condition_variable room_;  // a task arrived or was read, or the read failed
  std::deque<Arrived> arrived_;
  std::size_t on_the_way_ = 0;
  std::size_t requested_ = 0;
  std::exception_ptr failure_;
};

}  // namespace

FetchBudget fetch_budget(std::size_t requests_in_flight, std::uint64_t chunk_bytes) {
  const std::size_t in_flight = requests_in_flight > 0 ? requests_in_flight : kDefaultRequestsInFlight;
  const std::uint64_t chunk = std::max<std::uint64_t>(chunk_bytes, 1);
  const std::uint64_t by_bytes = std::max<std::uint64_t>(kMaxDecodedBytes / chunk, 1);
  FetchBudget b;
  b.chunks = to_size(std::min<std::uint64_t>(std::max<std::size_t>(2 * in_flight, 8), by_bytes));
  b.requested = to_size(std::clamp<std::uint64_t>(kMaxRequestedBytes / chunk, 1, b.chunks));
  b.batch = std::max<std::size_t>(std::min(b.chunks / 4, b.requested / 2), 1);
  b.own_readers = std::clamp<std::size_t>(in_flight / 4, kMinOwnReaders, kMaxOwnReaders);
  return b;
}

void read_fetched_as_they_arrive(const std::shared_ptr<Store>& store, const ArrayMetadata& m, const NDView& region,
                                 std::size_t num_tasks, std::string_view context,
                                 const std::function<std::string(std::size_t)>& key_of,
                                 const std::function<void(const ChunkReadRequest&, std::size_t)>& read_one) {
  const std::size_t requests_in_flight = store->capabilities().requests_in_flight;
  const FetchBudget budget = fetch_budget(requests_in_flight, checked_nbytes(m.chunk_shape, m.dtype));
  // Which tasks are fetched here and which read for themselves.
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
  Flow flow(budget.chunks, budget.requested);

  // One batch: its chunks go to the readers one by one, as get_each hands them over.
  auto fetch_batch = [&](std::size_t first, std::size_t count) {
    try {
      std::size_t handed = 0;
      const std::span<const std::string> batch(keys.data() + first, count);
      store->get_each(batch, BufferPrototype::host(), [&](std::size_t k, std::optional<Buffer> value) {
        if (k >= count) fail_io("{}: get_each handed over value {} of a batch of {}", store->describe(), k, count);
        flow.arrive(Arrived{fetched_tasks[first + k], keys[first + k], std::move(value)});
        ++handed;
      });
      // A reader waits for every task: a store that drops a key would leave it waiting.
      if (handed != count) {
        fail_io("{}: get_each handed over {} of {} values", store->describe(), handed, count);
      }
    } catch (const Stopped&) {
      // The read failed elsewhere; what this batch still had on the way is not wanted.
    } catch (const Error& e) {
      try {
        rethrow_with_context(e, context);
      } catch (...) {
        flow.fail(std::current_exception());
      }
    } catch (...) {
      flow.fail(std::current_exception());
    }
  };

  // Hands out the batches in task order, each once the budget has room for it.
  std::thread batches([&] {
    std::vector<std::future<void>> fetches;
    for (std::size_t first = 0; first < keys.size(); first += budget.batch) {
      const std::size_t count = std::min(budget.batch, keys.size() - first);
      if (!flow.reserve(count) || !flow.request(count)) break;
      fetches.push_back(std::async(std::launch::async, fetch_batch, first, count));
    }
    for (auto& f : fetches) f.wait();  // each records its own failure
  });

  // The tasks that read for themselves, several at once on threads of their own.
  const ChunkReadRequest own_request(*store, m, region);
  std::atomic<std::size_t> next_own{0};
  std::vector<std::thread> own_readers_running;
  for (std::size_t r = 0; r < std::min(budget.own_readers, own_tasks.size()); ++r) {
    own_readers_running.emplace_back([&] {
      for (std::size_t k; (k = next_own.fetch_add(1)) < own_tasks.size() && !flow.failed();) {
        try {
          read_one(own_request, own_tasks[k]);
        } catch (...) {
          flow.fail(std::current_exception());
        }
      }
    });
  }

  try {
    // One pool task per fetched chunk, each reading whichever chunk arrived next.
    shared_thread_pool().parallel_for(fetched_tasks.size(), [&](std::size_t) {
      std::optional<Arrived> a = flow.next();
      if (!a) return;
      try {
        FetchedStore::Fetched held;
        held.emplace(std::move(a->key), std::move(a->value));
        FetchedStore fetched(store, std::move(held));
        read_one(ChunkReadRequest(fetched, m, region), a->task);
      } catch (...) {
        flow.fail(std::current_exception());
      }
      flow.done_one();
    });
  } catch (...) {
    flow.fail(std::current_exception());
  }
  batches.join();
  for (std::thread& t : own_readers_running) t.join();
  if (std::exception_ptr failure = flow.failure()) std::rethrow_exception(failure);
}

}  // namespace zarrkit
