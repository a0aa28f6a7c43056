// The batch decode (zarrkit/batch_decode.h): each request planned as one chunk task of a
// one-chunk array; host outputs decoded here on the shared pool, device outputs handed to
// the GPU module in one batch.
#include "engine/batch_decode.h"

#include <fmt/ranges.h>

#include "core/checked_math.h"
#include "engine/device_read_hook.h"
#include "engine/task_copy.h"
#include "zarrkit/error.h"
#include "zarrkit/config.h"
#include "zarrkit/store.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {

std::string describe_request(std::size_t index) { return fmt::format("chunk {} of the batch", index); }

// One request into host memory; `encoded` is its stored value (nullopt: the fill value).
void decode_on_host(const CodecChain& chain, const ChunkSpec& spec, const std::optional<Buffer>& encoded,
                    const ChunkTask& task, const NDView& region) {
  const std::size_t itemsize = spec.dtype.size();
  if (!encoded) {
    fill_task_region(task, region.data, region.byte_strides, spec.fill_value.bytes());
    return;
  }
  const auto chunk_strides = NDView::c_strides(spec.shape, itemsize);
  if (task.is_entire_chunk && region_matches_chunk_layout(task, region.byte_strides, chunk_strides)) {
    std::byte* dst = region.data + task_region_offset(task, region.byte_strides);
    const MutableByteView out(dst, to_size(checked_nbytes(spec.shape, spec.dtype)));
    if (chain.decode_into(encoded->view(), spec, out)) return;
  }
  const NDBuffer decoded = chain.decode(encoded->view(), spec, BufferPrototype::host());
  if (decoded.shape() != spec.shape || decoded.nbytes() != checked_nbytes(spec.shape, spec.dtype)) {
    fail_data_loss("the codec chain decoded {} bytes of shape [{}], the chunk has shape [{}]", decoded.nbytes(),
                   fmt::join(decoded.shape(), ", "), fmt::join(spec.shape, ", "));
  }
  copy_chunk_to_region(task, decoded.data(), chunk_strides, region.data, region.byte_strides, itemsize);
}

// What decode_chunks and read_chunks share: request i wants `selection(i)` into `out(i)`;
// `fetch(i, prototype)` gives its stored value.
using Fetch = std::function<std::optional<Buffer>(std::size_t, const BufferPrototype&)>;

void run_requests(const CodecChain& chain, const ChunkSpec& spec, std::size_t count,
                  const std::function<const Selection&(std::size_t)>& selection,
                  const std::function<const NDView&(std::size_t)>& out, const Fetch& fetch) {
  if (spec.dtype.is_variable_length() || spec.dtype.size() == 0) {
    fail_unsupported("decode_chunks: the variable-length type {} has no fixed-size elements", spec.dtype.name());
  }
  if (spec.fill_value.bytes().size() != spec.dtype.size()) {
    fail_invalid("decode_chunks: the fill value has {} bytes, {} needs {}", spec.fill_value.bytes().size(),
                 spec.dtype.name(), spec.dtype.size());
  }
  chain.validate(spec);
  // Each request as the one task of a one-chunk array (the plans own the tasks' storage).
  std::vector<std::unique_ptr<ChunkPlan>> plans(count);
  std::vector<std::size_t> on_host, on_device;
  for (std::size_t i = 0; i < count; ++i) {
    const NDView& o = out(i);
    try {
      if (!(o.dtype == spec.dtype)) {
        fail_invalid("the output holds {}, the chunks {}", o.dtype.name(), spec.dtype.name());
      }
      plans[i] = std::make_unique<ChunkPlan>(spec.shape, spec.shape, selection(i));
      if (plans[i]->output_shape() != o.shape) {
        fail_invalid("the selection has shape [{}], the output [{}]", fmt::join(plans[i]->output_shape(), ", "),
                     fmt::join(o.shape, ", "));
      }
    } catch (const Error& e) {
      rethrow_with_context(e, describe_request(i));
    }
    if (plans[i]->num_tasks() == 0) continue;
    (is_host_accessible(o.kind) ? on_host : on_device).push_back(i);
  }
  if (!on_device.empty()) {
    DeviceDecodeBatch batch{chain,
                            spec,
                            [&](std::size_t k, const BufferPrototype& prototype) { return fetch(on_device[k], prototype); },
                            {},
                            {},
                            [&](std::size_t k) { return describe_request(on_device[k]); }};
    for (const std::size_t i : on_device) {
      batch.tasks.push_back(plans[i]->task(0));
      batch.regions.push_back(expand_to_region(out(i), plans[i]->selection()));
    }
    decode_on_device(batch);
  }
  shared_thread_pool().parallel_for(on_host.size(), [&](std::size_t k) {
    const std::size_t i = on_host[k];
    const ChunkPlan& plan = *plans[i];
    try {
      decode_on_host(chain, spec, fetch(i, BufferPrototype::host()), plan.task(0),
                     expand_to_region(out(i), plan.selection()));
    } catch (const Error& e) {
      rethrow_with_context(e, describe_request(i));
    }
  });
}

}  // namespace

void decode_chunks(const CodecChain& chain, const ChunkSpec& spec, std::span<const ChunkDecodeRequest> requests) {
  run_requests(
      chain, spec, requests.size(), [&](std::size_t i) -> const Selection& { return requests[i].selection; },
      [&](std::size_t i) -> const NDView& { return requests[i].out; },
      [&](std::size_t i, const BufferPrototype&) -> std::optional<Buffer> {
        const auto& bytes = requests[i].encoded;
        if (!bytes) return std::nullopt;
        // The caller's bytes, not copied: they outlive the call.
        return Buffer::wrap(nullptr, const_cast<std::byte*>(bytes->data()), bytes->size());
      });
}

void read_chunks(Store& store, const CodecChain& chain, const ChunkSpec& spec, std::span<const ChunkReadRequest> requests) {
  run_requests(
      chain, spec, requests.size(), [&](std::size_t i) -> const Selection& { return requests[i].selection; },
      [&](std::size_t i) -> const NDView& { return requests[i].out; },
      [&](std::size_t i, const BufferPrototype& prototype) -> std::optional<Buffer> {
        try {
          return store.get(requests[i].key, prototype);
        } catch (const Error& e) {
          rethrow_with_context(e, fmt::format("key '{}' in {}", requests[i].key, store.describe()));
        }
      });
}

}  // namespace zarrkit
