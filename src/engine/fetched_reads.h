// Reading chunks from stores that keep many requests in flight (capabilities().batched_gets:
// S3, HTTP): the chunks are fetched in batches with Store::get_each, and each is decoded
// on the thread pool as soon as its own response is complete, while the rest still arrive.
// Without this, each pool thread would wait for its own request: as many requests in
// flight as threads, and no decoding while a batch is on the way.
//
// Tasks that make their own requests (a shard read in part: its index, then the byte
// ranges of the inner chunks it needs) run on reader threads of their own, several at
// once, so that the indexes of several shards are on the way together, and then their
// inner ranges, rather than one shard per pool thread.
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
  std::size_t own_readers = 0;  // threads for the tasks that make their own requests
};
// About twice the store's requests in flight (64 when it does not say), so that the
// transport always has requests queued while the pool decodes, within ~256 MiB of decoded
// chunks; batches of a quarter of that, so that a new batch starts as soon as a quarter
// of the budget has been decoded. Large chunks are requested at most ~128 MiB (decoded) at
// a time, so that the first ones arrive early and are decoded while the rest are on the
// way, and in batches of at most half of that. Readers of their own: a quarter of the
// requests in flight, between 4 and 16.
FetchBudget fetch_budget(std::size_t requests_in_flight, std::uint64_t chunk_bytes);

// Reads tasks 0..num_tasks-1: the chunk of task i (key `key_of(i)`; "" for a task that reads
// for itself, such as part of a shard) is fetched and then `read_one` runs on the thread
// pool with a request whose store serves the fetched bytes (engine/fetched_store.h). Tasks
// are read in the order their chunks arrive; tasks without a key run `read_one` with the
// store itself, on the readers of their own. A failed fetch is rethrown with `context`
// ("array 'a' in s3://..."); after the first failure (a fetch or a read) no more chunks
// are requested and the first error is rethrown once everything started has finished.
void read_fetched_as_they_arrive(const std::shared_ptr<Store>& store, const ArrayMetadata& metadata,
                                 const NDView& region, std::size_t num_tasks, std::string_view context,
                                 const std::function<std::string(std::size_t)>& key_of,
                                 const std::function<void(const ChunkReadRequest&, std::size_t)>& read_one);

}  // namespace zarrkit
