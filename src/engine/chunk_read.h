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
#include <string>
#include <vector>

#include "engine/indexer.h"
#include "engine/output_faults.h"
#include "zarrkit/codec.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/metadata.h"
#include "zarrkit/store.h"

namespace zarrkit {

// What every task of one read request shares. The per-chunk facts are the metadata's
// prepared chain's (ArrayMetadata::prepared_chain), worked out once per array.
struct ChunkReadRequest {
  ChunkReadRequest(Store& store, const ArrayMetadata& metadata, const NDView& region);
  // For chunks of another shape than the metadata's chunk_spec() (a rectilinear grid's).
  ChunkReadRequest(Store& store, const ArrayMetadata& metadata, const NDView& region, const PreparedChain& chain);

  Store& store;
  const ArrayMetadata& metadata;
  const NDView& region;  // the output, one axis per array axis (expand_to_region)
  const PreparedChain& chain;
  const ChunkSpec& spec;                     // chain.spec()
  std::span<const std::int64_t> chunk_strides;  // of the decoded chunk, C order, bytes
  std::uint64_t chunk_bytes = 0;
  ByteView fill;
  bool raw = false;  // the chain stores raw bytes (PreparedChain::stores_raw_bytes)
  // Where set, the output's pages are faulted in through it just before they are written.
  OutputFaults* faults = nullptr;
};

// Reads the task's elements of the chunk stored at `key` into the request's region.
void read_chunk_task(const ChunkReadRequest& request, const std::string& key, const ChunkTask& task);

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
