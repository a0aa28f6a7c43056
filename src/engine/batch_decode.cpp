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
#include "zarrkit/thread_pool.h"

namespace zarrkit {
namespace {

std::string describe_request(std::size_t index) { return fmt::format("chunk {} of the batch", index); }

// One request into host memory.
void decode_on_host(const CodecChain& chain, const ChunkSpec& spec, const ChunkDecodeRequest& request,
                    const ChunkTask& task, const NDView& region) {
  const std::size_t itemsize = spec.dtype.size();
  if (!request.encoded) {
    fill_task_region(task, region.data, region.byte_strides, spec.fill_value.bytes());
    return;
  }
  const auto chunk_strides = NDView::c_strides(spec.shape, itemsize);
  if (task.is_entire_chunk && region_matches_chunk_layout(task, region.byte_strides, chunk_strides)) {
    std::byte* dst = region.data + task_region_offset(task, region.byte_strides);
    const MutableByteView out(dst, to_size(checked_nbytes(spec.shape, spec.dtype)));
    if (chain.decode_into(*request.encoded, spec, out)) return;
  }
  const NDBuffer decoded = chain.decode(*request.encoded, spec, BufferPrototype::host());
  if (decoded.shape() != spec.shape || decoded.nbytes() != checked_nbytes(spec.shape, spec.dtype)) {
    fail_data_loss("the codec chain decoded {} bytes of shape [{}], the chunk has shape [{}]", decoded.nbytes(),
                   fmt::join(decoded.shape(), ", "), fmt::join(spec.shape, ", "));
  }
  copy_chunk_to_region(task, decoded.data(), chunk_strides, region.data, region.byte_strides, itemsize);
}

}  // namespace

void decode_chunks(const CodecChain& chain, const ChunkSpec& spec, std::span<const ChunkDecodeRequest> requests) {
  if (spec.dtype.is_variable_length() || spec.dtype.size() == 0) {
    fail_unsupported("decode_chunks: the variable-length type {} has no fixed-size elements", spec.dtype.name());
  }
  if (spec.fill_value.bytes().size() != spec.dtype.size()) {
    fail_invalid("decode_chunks: the fill value has {} bytes, {} needs {}", spec.fill_value.bytes().size(),
                 spec.dtype.name(), spec.dtype.size());
  }
  chain.validate(spec);
  // Each request as the one task of a one-chunk array (the plans own the tasks' storage).
  std::vector<std::unique_ptr<ChunkPlan>> plans(requests.size());
  std::vector<std::size_t> on_host, on_device;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const ChunkDecodeRequest& r = requests[i];
    try {
      if (!(r.out.dtype == spec.dtype)) {
        fail_invalid("the output holds {}, the chunks {}", r.out.dtype.name(), spec.dtype.name());
      }
      plans[i] = std::make_unique<ChunkPlan>(spec.shape, spec.shape, r.selection);
      if (plans[i]->output_shape() != r.out.shape) {
        fail_invalid("the selection has shape [{}], the output [{}]", fmt::join(plans[i]->output_shape(), ", "),
                     fmt::join(r.out.shape, ", "));
      }
    } catch (const Error& e) {
      rethrow_with_context(e, describe_request(i));
    }
    if (plans[i]->num_tasks() == 0) continue;
    (is_host_accessible(r.out.kind) ? on_host : on_device).push_back(i);
  }
  if (!on_device.empty()) {
    DeviceDecodeBatch batch{chain, spec, {}, {}, {}, [&](std::size_t k) { return describe_request(on_device[k]); }};
    for (const std::size_t i : on_device) {
      batch.requests.push_back(&requests[i]);
      batch.tasks.push_back(plans[i]->task(0));
      batch.regions.push_back(expand_to_region(requests[i].out, plans[i]->selection()));
    }
    decode_on_device(batch);
  }
  shared_thread_pool().parallel_for(on_host.size(), [&](std::size_t k) {
    const std::size_t i = on_host[k];
    const ChunkPlan& plan = *plans[i];
    try {
      decode_on_host(chain, spec, requests[i], plan.task(0), expand_to_region(requests[i].out, plan.selection()));
    } catch (const Error& e) {
      rethrow_with_context(e, describe_request(i));
    }
  });
}

}  // namespace zarrkit
