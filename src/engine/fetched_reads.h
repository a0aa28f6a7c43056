// Reading chunks from stores that keep many requests in flight (capabilities().batched_gets:
// S3, HTTP): the chunks are fetched in batches with Store::get_each, and each is decoded
// as soon as its own response is complete, while the rest still arrive. Without this, each
// pool thread would wait for its own request: as many requests in flight as threads, and
// no decoding while a batch is on the way.
//
// Everything runs on the shared thread pool, within its one budget of threads: no thread is
// started per read. The pool's threads (the caller's included) share the work: a thread
// that finds room in the budget requests the next batch and, while get_each hands that
// batch's values over, decodes those that no idle thread is free to take; the others decode
// what has arrived. get_each blocks its caller until its batch is handed over, so a batch
// in flight occupies one thread, which decodes as values arrive rather than idle; the
// budget allows only a few batches at once. A thread never waits for work that only a task
// not yet started could produce, so a pool of one thread, or a read made from inside a pool
// task, completes (on the calling thread alone, if need be).
//
// Tasks that make their own requests (a shard read in part: its index, then the byte
// ranges of the inner chunks it needs) run on the pool's threads too, several at once, so
// that the indexes of several shards are on the way together, and then their inner ranges.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "engine/chunk_read.h"

namespace zarrkit {

// How many chunks are on the way (requested, or fetched and not yet decoded) at once, and
// in batches of how many they are requested.
struct FetchBudget {
  std::size_t chunks = 0;       // at most this many on the way
  std::size_t requested = 0;    // of which at most this many requested and not yet arrived
  std::size_t batch = 0;        // keys per get_each call
  std::size_t own_readers = 0;  // tasks that make their own requests running at once
};
// About twice the store's requests in flight (64 when it does not say), so that the
// transport always has requests queued while the pool decodes, within ~256 MiB of decoded
// chunks; batches of a quarter of that, so that a new batch starts as soon as a quarter
// of the budget has been decoded. Large chunks are requested at most ~128 MiB (decoded) at
// a time, so that the first ones arrive early and are decoded while the rest are on the
// way, and in batches of at most half of that. A batch on the way holds one of the pool's
// `threads` until it is handed over, so on a pool of fewer threads than that makes batches
// the batches are larger: all that may be requested fits in one batch per thread. Tasks
// making their own requests: a quarter of the requests in flight at once, between 4 and 16
// (each holds a thread too, so no more than the pool has).
FetchBudget fetch_budget(std::size_t requests_in_flight, std::uint64_t chunk_bytes, std::size_t threads);

// Runs tasks 0..num_tasks-1 on the shared pool: the value of task i (key `key_of(i)`; "" for
// a task that makes its own requests) is fetched in batches and then `run_one` runs with a
// store whose reads of that key are served from the fetched bytes (engine/fetched_store.h;
// every other call, writes included, goes to `store`). Tasks run in the order their values
// arrive; tasks without a key run `run_one` with `store` itself. `chunk_bytes` (the decoded
// size of one value) sizes the budget. A failed fetch is rethrown with `context` ("array 'a'
// in s3://..."); after the first failure (a fetch or a task) no more values are requested,
// no more tasks start, and the first error is rethrown once everything started has finished.
void run_fetched_as_they_arrive(const std::shared_ptr<Store>& store, std::uint64_t chunk_bytes,
                                std::size_t num_tasks, std::string_view context,
                                const std::function<std::string(std::size_t)>& key_of,
                                const std::function<void(Store&, std::size_t)>& run_one);

// run_fetched_as_they_arrive for chunk reads into `region`: `read_one` gets a request whose
// store serves the fetched bytes (or the store itself for tasks without a key).
void read_fetched_as_they_arrive(const std::shared_ptr<Store>& store, const ArrayMetadata& metadata,
                                 const NDView& region, std::size_t num_tasks, std::string_view context,
                                 const std::function<std::string(std::size_t)>& key_of,
                                 const std::function<void(const ChunkReadRequest&, std::size_t)>& read_one);

}  // namespace zarrkit
