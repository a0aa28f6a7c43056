// Decoding many encoded chunks at once, into host or device memory, without an array or a
// store: for readers that fetch chunk bytes themselves (zarr-python's codec pipeline,
// zarrkit.zarr_pipeline, calls it for its reads into GPU memory).
//
//   std::vector<ChunkDecodeRequest> requests = ...;   // bytes, the part wanted, where it goes
//   zarrkit::decode_chunks(chain, spec, requests);
//
// Outputs in device memory are decoded on the GPU in batches, as an array read into device
// memory is (one launch per kind of work over many chunks; chunks whose codecs have no
// device half decode on the host's threads and are copied); outputs in host memory are
// decoded on the shared thread pool. Every output is written wholly: an absent chunk
// (nullopt bytes) writes the fill value.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "zarrkit/buffer.h"
#include "zarrkit/codec.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/ndbuffer.h"
#include "zarrkit/selection.h"
#include "zarrkit/store.h"

namespace zarrkit {

struct ChunkDecodeRequest {
  std::optional<ByteView> encoded;  // the stored value (host memory); nullopt: not stored
  Selection selection;              // the part of the chunk wanted ({}: all of it), NumPy rules
  NDView out;                       // of the selection's shape and the spec's dtype; any strides
};

// Decodes every request, each a chunk of `spec` (shape, dtype, fill value) encoded with
// `chain`. Errors name the request ("chunk 3 of the batch: ..."); the first error is thrown
// once the others have finished.
void decode_chunks(const CodecChain& chain, const ChunkSpec& spec, std::span<const ChunkDecodeRequest> requests);

struct ChunkReadRequest {
  std::string key;      // the chunk's key in the store; an absent key is the fill value
  Selection selection;  // as ChunkDecodeRequest's
  NDView out;
};

// decode_chunks with the stored values read from `store` as the batches need them: into the
// pinned staging memory of the device batches where the device takes the bytes as stored
// (no copy of them on the host), into ordinary memory otherwise. For readers that know the
// keys but not the array (zarr-python's codec pipeline on a local store).
void read_chunks(Store& store, const CodecChain& chain, const ChunkSpec& spec, std::span<const ChunkReadRequest> requests);

}  // namespace zarrkit
