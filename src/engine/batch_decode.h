// What the engine's batch decode (zarrkit/batch_decode.h) hands to the GPU module for the
// requests whose outputs lie in device memory: each request planned as one chunk task, its
// stored value fetched where the GPU module asks for it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/indexer.h"
#include "zarrkit/batch_decode.h"

namespace zarrkit {

struct DeviceDecodeBatch {
  const CodecChain& chain;
  const ChunkSpec& spec;
  // Request i's stored value: its bytes, wrapped (decode_chunks), or read from a store into
  // memory of `prototype` (read_chunks: the pinned staging where the device takes the bytes
  // as stored); nullopt where it is not stored (the fill value).
  std::function<std::optional<Buffer>(std::size_t i, const BufferPrototype& prototype)> fetch;
  std::vector<ChunkTask> tasks;   // per request: its elements and their places in its region
  std::vector<NDView> regions;    // per request: its output in region coordinates
  std::function<std::string(std::size_t)> describe;  // names request i of this batch
};

}  // namespace zarrkit
