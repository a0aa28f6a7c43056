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

#include "zarrkit/buffer.h"
#include "zarrkit/codec.h"
#include "zarrkit/codec_chain.h"
#include "zarrkit/ndbuffer.h"
#include "zarrkit/selection.h"

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

}  // namespace zarrkit
