// The batch decode into device memory (zarrkit/batch_decode.h): the requests' bytes are the
// chunks of DeviceBatches, each placed in its own output.
#include "engine/batch_decode.h"

#include <fmt/format.h>

#include "gpu/device_batches.h"
#include "gpu/device_read.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit::gpu {

void decode_batch_on_device(const DeviceDecodeBatch& batch) {
  require_device("decoding chunks into device memory");
  for (std::size_t k = 0; k < batch.regions.size(); ++k) {
    if (batch.regions[k].kind != MemoryKind::kDevice) {
      fail_invalid("{}: the output lies in {} memory, not device memory", batch.describe(k),
                   memory_kind_name(batch.regions[k].kind));
    }
  }
  DeviceBatches batches(batch.chain, batch.spec, batch.spec.fill_value.bytes(), batch.requests.size(),
                        [&](const DeviceChunk& c) { return batch.describe(c.ordinal); });
  batches.run([&](DeviceBatches::Batch& b) {
    shared_thread_pool().parallel_for(b.chunks.size(), [&](std::size_t i) {
      const std::size_t k = b.first + i;
      DeviceChunk& c = b.chunks[i];
      c.ordinal = k;
      c.task = batch.tasks[k];
      c.region = &batch.regions[k];
      const ChunkDecodeRequest& r = *batch.requests[k];
      if (!r.encoded) {
        read_stats().chunks_missing.fetch_add(1);
        return;
      }
      try {
        // The caller's bytes, not copied here: process() stages them in the arena.
        Buffer encoded = Buffer::wrap(nullptr, const_cast<std::byte*>(r.encoded->data()), r.encoded->size());
        batches.process(c, static_cast<std::uint32_t>(i), b.arena, std::move(encoded));
      } catch (const Error& e) {
        rethrow_with_context(e, batch.describe(k));
      }
    });
  });
}

}  // namespace zarrkit::gpu
