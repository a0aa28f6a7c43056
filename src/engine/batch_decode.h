// What the engine's batch decode (zarrkit/batch_decode.h) hands to the GPU module for the
// requests whose outputs lie in device memory: each request planned as one chunk task.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/indexer.h"
#include "zarrkit/batch_decode.h"

namespace zarrkit {

struct DeviceDecodeBatch {
  const CodecChain& chain;
  const ChunkSpec& spec;
  std::vector<const ChunkDecodeRequest*> requests;
  std::vector<ChunkTask> tasks;   // per request: its elements and their places in its region
  std::vector<NDView> regions;    // per request: its output in region coordinates
  std::function<std::string(std::size_t)> describe;  // names request i of this batch
};

}  // namespace zarrkit
