// The batch decode into device memory (zarrkit/batch_decode.h): the requests' bytes are the
// chunks of DeviceBatches, each placed in its own output; where the chunks are shards, their
// inner chunks are, located by the sharding codec's partial codec.
#include "engine/batch_decode.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "core/checked_math.h"
#include "core/partial_chunk_codec.h"
#include "gpu/device_batches.h"
#include "gpu/device_scope.h"
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
  // Runs `body`, host work of request `request` (for `chunk` where it is one chunk's);
  // where it fails, records the error (named with `context`), abandons the chunk and
  // returns false.
  template <class Body>
  bool guard(std::size_t request, const std::string& context, DeviceChunk* chunk, Body&& body) {
    try {
      try {
        body();
        return true;
      } catch (const Error& e) {
        rethrow_with_context(e, context);
      }
    } catch (const Error&) {
      record(request, std::current_exception());
      if (chunk != nullptr) DeviceBatches::abandon(*chunk);
    }
    return false;
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
  const std::size_t n = batch.tasks.size();
  // Per request, the inner chunks its task touches, counted without reading anything.
  std::vector<std::uint64_t> first(n + 1, 0);
  for (std::size_t k = 0; k < n; ++k) {
    first[k + 1] = first[k] + partial.select(task_runs(batch.tasks[k]), batch.spec.shape).chunks.size();
  }
  // Each request's inner chunks as located by the first batch that needs them, and its
  // stored value (read whole; a chunk the device refuses is decoded again on the host from
  // it, before the batch's arena is used again).
  std::vector<std::shared_ptr<LocatedChunks>> located(n);
  std::vector<char> failed(n, 0);
  const auto request_of = [&](std::uint64_t leaf) {
    return static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), leaf) - first.begin() - 1);
  };
  DeviceBatches batches(partial.inner_chain(), batch.spec.fill_value.bytes(), first.back(),
                        [&](const DeviceChunk& c) {
                          return fmt::format("{}, inner chunk {} of its index", batch.describe(c.group), c.ordinal);
                        });
  // Made after `batches`, so dropped before its arenas go back to their pool.
  std::vector<std::optional<Buffer>> values(n);
  RequestErrors errors;
  batches.on_chunk_error = [&](const DeviceChunk& c, std::exception_ptr e) { errors.record(c.group, std::move(e)); };
  batches.run([&](DeviceBatches::Batch& b) {
    // The shards of this batch read and located first, one task per shard (a task per
    // inner chunk would have all but one of a shard's wait for its read); a shard that
    // began in the previous batch is located already (the host phases run one at a time).
    const std::size_t k_begin = request_of(b.first), k_end = request_of(b.first + b.chunks.size() - 1) + 1;
    shared_thread_pool().parallel_for(k_end - k_begin, [&](std::size_t j) {
      const std::size_t k = k_begin + j;
      if (located[k] || failed[k]) return;
      failed[k] = !errors.guard(k, batch.describe(k), nullptr, [&] {
        auto l = std::make_shared<LocatedChunks>();
        const BlockRuns runs = task_runs(batch.tasks[k]);
        // A shard whose inner chunks all fall in this batch is read into its staging (the
        // pinned arena where the device takes the bytes as stored: no copy of its inner
        // chunks there); one that spans batches into ordinary memory, which outlives them.
        const bool within = first[k] >= b.first && first[k + 1] <= b.first + b.chunks.size();
        values[k] = batch.fetch(k, within ? b.staging : BufferPrototype::host());
        if (values[k]) {
          const ByteView bytes = values[k]->view();
          *l = partial.locate(ChunkSource{nullptr, "", 0, bytes.size(), bytes}, runs, batch.spec.shape);
        } else {
          l->selection = partial.select(runs, batch.spec.shape);
        }
        located[k] = std::move(l);
      });
    });
    shared_thread_pool().parallel_for(b.chunks.size(), [&](std::size_t i) {
      const std::uint64_t leaf = b.first + i;
      const std::size_t k = request_of(leaf);
      DeviceChunk& c = b.chunks[i];
      c.group = static_cast<std::uint32_t>(k);
      if (failed[k]) {
        DeviceBatches::abandon(c);
        return;
      }
      errors.guard(k, batch.describe(k), &c, [&] {
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
        Buffer encoded = Buffer::wrap(nullptr, values[k]->data() + where.offset, to_size(where.nbytes));
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
  // The outputs' device is current while the batch runs: all of them on one device.
  std::optional<ScopedDevice> its_device;
  int device = -1;
  for (std::size_t k = 0; k < batch.regions.size(); ++k) {
    if (batch.regions[k].num_elements() == 0 || batch.regions[k].data == nullptr) continue;
    const int d = device_holding(batch.regions[k].data, batch.describe(k));
    if (device >= 0 && d != device) {
      fail_invalid("{}: its output lies on device {}, the batch's first output on device {}; one batch decodes into "
                   "one device (call once per device)", batch.describe(k), d, device);
    }
    device = d;
  }
  if (device >= 0) its_device.emplace(device);
  const std::shared_ptr<const PreparedChain> prepared = batch.chain.prepare(batch.spec);
  if (prepared->partial() != nullptr) return decode_inner_chunks(batch, prepared);
  DeviceBatches batches(prepared, batch.spec.fill_value.bytes(), batch.tasks.size(),
                        [&](const DeviceChunk& c) { return batch.describe(c.ordinal); });
  RequestErrors errors;
  batches.on_chunk_error = [&](const DeviceChunk& c, std::exception_ptr e) { errors.record(c.ordinal, std::move(e)); };
  batches.allow_concurrent_host_phases();  // each request's chunk is fetched by its own batch
  batches.run([&](DeviceBatches::Batch& b) {
    shared_thread_pool().parallel_for(b.chunks.size(), [&](std::size_t i) {
      const std::size_t k = b.first + i;
      DeviceChunk& c = b.chunks[i];
      c.ordinal = k;
      c.task = batch.tasks[k];
      c.runs = task_runs(c.task);
      c.region = &batch.regions[k];
      errors.guard(k, batch.describe(k), &c, [&] {
        // Bytes given are wrapped, not copied; read from a store they land in b.staging
        // (the pinned arena where the device takes them as stored).
        std::optional<Buffer> encoded = batch.fetch(k, b.staging);
        if (!encoded) {
          read_stats().chunks_missing.fetch_add(1);
          return;
        }
        batches.process(c, static_cast<std::uint32_t>(i), b.arena, std::move(*encoded));
      });
    });
  });
  errors.throw_first();
}

}  // namespace zarrkit::gpu
