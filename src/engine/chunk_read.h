// Reading one chunk task of an unsharded array into the caller's output, with as few
// passes over the bytes as the codecs allow:
//
//  - uncompressed chunks (the chain stores raw bytes): a chunk that fills its part of the
//    output in the chunk's own layout is read from the store straight into the output; one
//    wanted whole whose rows are scattered in the output (a chunk narrower than the array)
//    is read row by row into the output's rows (one preadv for many rows); a chunk read in
//    part is read as byte ranges covering only what the task selects;
//  - other chains: the encoded chunk is fetched, and decoded straight into the output when
//    the chunk fills its part of the output in its own layout (CodecChain::decode_into);
//  - a large compressed chunk whose elements land in the output as scattered pieces (one
//    narrower than the array) is decoded piece by piece through a small buffer, each
//    piece's elements copied out at once, where the codecs allow (CodecChain::decode_pieces);
//  - otherwise the chunk is decoded into a buffer and its selected elements copied.
//
// Buffers come from the host allocator, whose chunk-sized blocks are reused per thread
// (core/host_block_cache.h), so steady-state reads allocate no fresh memory.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/indexer.h"
#include "zarrkit/codec.h"
#include "zarrkit/metadata.h"
#include "zarrkit/store.h"

namespace zarrkit {

// What every task of one read request shares.
struct ChunkReadRequest {
  ChunkReadRequest(Store& store, const ArrayMetadata& metadata, const NDView& region);

  Store& store;
  const ArrayMetadata& metadata;
  const NDView& region;  // the output, one axis per array axis (expand_to_region)
  ChunkSpec spec;
  std::vector<std::int64_t> chunk_strides;  // of the decoded chunk, C order, bytes
  std::uint64_t chunk_bytes = 0;
  ByteView fill;
  bool raw = false;  // the chain stores raw bytes (CodecChain::stores_raw_bytes)
};

// Faults in the pages of a large C-contiguous host output before the chunks are read into
// it, each pool thread taking one contiguous slab. Chunks narrower than the array write
// rows scattered through the output, so several threads would otherwise fault the same
// (huge) pages at once and wait on each other: at 16 threads, reading 2 GiB took 196 ms
// into fresh memory and 73 ms into memory already faulted in. The values are not changed.
void prefault_output(const NDView& out);

// The order in which the pool takes the chunk tasks of a read into a large C-contiguous
// host output, and whether the output is faulted in first.
//
// Tasks come in C order over the chunk grid, the output's own order, so tasks that run at
// once write to the same pages, and at 16 threads threads then fault the same (huge) pages
// together: each zeroes a page and all but one throw theirs away. Where the tasks fall
// into at least as many groups writing to pages of their own (whole 2 MiB spans) as the
// pool has threads, the tasks are taken one from each group in turn: the threads run in
// different groups, and each faults the pages it writes while it reads, as numpy.memmap +
// copy's threads do. Otherwise the output is faulted in first (prefault_output), then the
// tasks are taken in C order. The groups: the chunks of one index along the first axis
// (a slab of whole rows of the output), or, where there are fewer of those than threads and
// the rows of the first axis are whole 2 MiB spans, runs of chunks along the second axis
// that end on 2 MiB boundaries of each row. Small outputs (below 64 MiB), other layouts and
// list selections keep C order without faulting.
struct ReadOrder {
  bool prefault = false;
  std::size_t groups = 0;  // 0: C order
  // The task to run as the i-th of n taken.
  std::size_t task(std::size_t i, std::size_t n) const;
};
ReadOrder plan_read_order(const ChunkPlan& plan, const NDView& out, std::size_t threads);

// Reads the task's elements of the chunk stored at `key` into the request's region.
void read_chunk_task(const ChunkReadRequest& request, const std::string& key, const ChunkTask& task);

// For stores that keep many requests in flight (capabilities().batched_gets: S3, HTTP): the
// chunks of tasks 0..num_tasks-1 (keys from `key_of`; "" for a task that reads for itself,
// such as part of a shard) are fetched in windows with one get_many each, the next windows'
// fetches overlapping the decoding of this one, and each task runs `read_one` on the thread
// pool with a request whose store serves the fetched bytes (engine/fetched_store.h).
// Without this, each pool thread would wait for its own request: as many requests in
// flight as threads. A failed fetch is rethrown with `context` ("array 'a' in s3://...").
void read_in_fetched_windows(const std::shared_ptr<Store>& store, const ArrayMetadata& metadata,
                             const NDView& region, std::size_t num_tasks, std::string_view context,
                             const std::function<std::string(std::size_t)>& key_of,
                             const std::function<void(const ChunkReadRequest&, std::size_t)>& read_one);

// The byte ranges of a chunk that a partial read fetches: `count` slabs of `slab_bytes`
// bytes, the first at `first_offset`, each further one at the offset the strides give.
// Exposed for tests.
struct SlabPlan {
  std::size_t outer_axes = 0;                 // slabs are indexed by the box on these axes
  std::vector<std::uint64_t> box_begin;       // per axis, in chunk coordinates
  std::vector<std::uint64_t> box_extent;      // per axis
  std::uint64_t slab_bytes = 0;
  std::uint64_t num_slabs = 0;
};
SlabPlan plan_slabs(const ChunkTask& task, std::span<const std::int64_t> chunk_strides, std::size_t itemsize);

}  // namespace zarrkit
