// The batch decode into device memory (zarrkit/batch_decode.h): the requests' bytes are the
// chunks of DeviceBatches, each placed in its own output; where the chunks are shards, their
// inner chunks are, located by the sharding codec's partial codec.
#include "engine/batch_decode.h"

#include <algorithm>
#include <exception>
#include <mutex>

#include <fmt/format.h>

#include "core/checked_math.h"
#include "core/partial_chunk_codec.h"
#include "gpu/device_batches.h"
#include "gpu/device_read.h"
#include "zarrkit/error.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit::gpu {

namespace {

// The requests are independent: a request that fails is recorded (the lowest-numbered
// failure is thrown once every batch has run) and the others go on. A failed request's
// output holds the fill value, or what the device wrote before the host's decode failed.
class RequestErrors {
 public:
  void record(std::size_t request, std::exception_ptr error) {
    std::lock_guard lock(mutex_);
    if (!first_ || request < request_) {
      request_ = request;
      first_ = std::move(error);
    }
  }
  // Runs `body`, the host phase of `chunk` of request `request`; where it fails, records
  // the error (named with `context`) and abandons the chunk.
  template <class Body>
  void guard(std::size_t request, const std::string& context, DeviceChunk& chunk, Body&& body) {
    try {
      try {
        body();
      } catch (const Error& e) {
        rethrow_with_context(e, context);
      }
    } catch (const Error&) {
      record(request, std::current_exception());
      DeviceBatches::abandon(chunk);
    }
  }
  void throw_first() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::size_t request_ = 0;
  std::exception_ptr first_;
};

// Requests whose chunks are shards (the chain is sharding alone): their inner chunks are
// what the device decodes, located in the bytes given by the partial codec.
void decode_inner_chunks(const DeviceDecodeBatch& batch, const std::shared_ptr<const PreparedChain>& prepared) {
  const PartialChunkCodec& partial = *prepared->partial();
  const std::size_t n = batch.requests.size();
  // Per request, the inner chunks its task touches, counted without reading anything.
  std::vector<std::uint64_t> first(n + 1, 0);
  for (std::size_t k = 0; k < n; ++k) {
    first[k + 1] = first[k] + partial.select(task_runs(batch.tasks[k]), batch.spec.shape).chunks.size();
  }
  // Each request's inner chunks as located, made once by the first batch that needs them.
  std::vector<std::shared_ptr<LocatedChunks>> located(n);
  std::vector<std::once_flag> once(n);
  DeviceBatches batches(partial.inner_chain(), batch.spec.fill_value.bytes(), first.back(),
                        [&](const DeviceChunk& c) {
                          return fmt::format("{}, inner chunk {} of its index", batch.describe(c.group), c.ordinal);
                        });
  RequestErrors errors;
  batches.on_chunk_error = [&](const DeviceChunk& c, std::exception_ptr e) { errors.record(c.group, std::move(e)); };
  batches.run([&](DeviceBatches::Batch& b) {
    shared_thread_pool().parallel_for(b.chunks.size(), [&](std::size_t i) {
      const std::uint64_t leaf = b.first + i;
      const auto k = static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), leaf) - first.begin() - 1);
      const ChunkDecodeRequest& r = *batch.requests[k];
      DeviceChunk& c = b.chunks[i];
      c.group = static_cast<std::uint32_t>(k);
      errors.guard(k, batch.describe(k), c, [&] {
        std::call_once(once[k], [&] {
          auto l = std::make_shared<LocatedChunks>();
          const BlockRuns runs = task_runs(batch.tasks[k]);
          if (r.encoded) {
            *l = partial.locate(ChunkSource{nullptr, "", 0, r.encoded->size(), *r.encoded}, runs, batch.spec.shape);
          } else {
            l->selection = partial.select(runs, batch.spec.shape);
          }
          located[k] = std::move(l);
        });
        const LocatedChunks& l = *located[k];
        const std::size_t j = to_size(leaf - first[k]);
        const InnerChunkRef& ref = l.selection.chunks.at(j);
        c.ordinal = ref.ordinal;
        c.runs = ref.runs();
        c.runs_owner = located[k];
        c.region = &batch.regions[k];
        if (!l.stored || !l.bytes.at(j).stored) {
          read_stats().chunks_missing.fetch_add(1);
          return;
        }
        const InnerChunkBytes& where = l.bytes[j];
        Buffer encoded = Buffer::wrap(nullptr, const_cast<std::byte*>(r.encoded->data() + where.offset), to_size(where.nbytes));
        batches.process(c, static_cast<std::uint32_t>(i), b.arena, std::move(encoded));
      });
    });
  });
  errors.throw_first();
}

}  // namespace

void decode_batch_on_device(const DeviceDecodeBatch& batch) {
  require_device("decoding chunks into device memory");
  for (std::size_t k = 0; k < batch.regions.size(); ++k) {
    if (batch.regions[k].kind != MemoryKind::kDevice) {
      fail_invalid("{}: the output lies in {} memory, not device memory", batch.describe(k),
                   memory_kind_name(batch.regions[k].kind));
    }
  }
  const std::shared_ptr<const PreparedChain> prepared = batch.chain.prepare(batch.spec);
  if (prepared->partial() != nullptr) return decode_inner_chunks(batch, prepared);
  DeviceBatches batches(prepared, batch.spec.fill_value.bytes(), batch.requests.size(),
                        [&](const DeviceChunk& c) { return batch.describe(c.ordinal); });
  RequestErrors errors;
  batches.on_chunk_error = [&](const DeviceChunk& c, std::exception_ptr e) { errors.record(c.ordinal, std::move(e)); };
  batches.run([&](DeviceBatches::Batch& b) {
    shared_thread_pool().parallel_for(b.chunks.size(), [&](std::size_t i) {
      const std::size_t k = b.first + i;
      DeviceChunk& c = b.chunks[i];
      c.ordinal = k;
      c.task = batch.tasks[k];
      c.runs = task_runs(c.task);
      c.region = &batch.regions[k];
      const ChunkDecodeRequest& r = *batch.requests[k];
      if (!r.encoded) {
        read_stats().chunks_missing.fetch_add(1);
        return;
      }
      errors.guard(k, batch.describe(k), c, [&] {
        // The caller's bytes, not copied here: process() stages them in the arena.
        Buffer encoded = Buffer::wrap(nullptr, const_cast<std::byte*>(r.encoded->data()), r.encoded->size());
        batches.process(c, static_cast<std::uint32_t>(i), b.arena, std::move(encoded));
      });
    });
  });
  errors.throw_first();
}

}  // namespace zarrkit::gpu
