#include "gpu/device_chain.h"

#include <algorithm>
#include <numeric>

#include "core/checked_math.h"
#include "zarrkit/metadata.h"
#include "zarrkit/thread_pool.h"
#include "zarrkit/error.h"

namespace zarrkit::gpu {
namespace {

bool within(std::uint64_t size, SizeBound bound) { return bound.exact ? size == bound.bytes : size <= bound.bytes; }

void check_output(const BytesToBytesCodec& codec, std::uint64_t size, SizeBound bound) {
  if (!within(size, bound)) {
    fail_data_loss("codec '{}' decoded {} bytes, expected {} {}", codec.name(), size,
                   bound.exact ? "exactly" : "at most", bound.bytes);
  }
}

}  // namespace

DeviceChain::DeviceChain(std::shared_ptr<const PreparedChain> prepared, std::uint64_t chunks_per_batch,
                         const DeviceSettings& settings, const CodecRegistry& registry, std::uint64_t chunks_in_read)
    : chunk_bytes_(prepared->chunk_bytes()),
      chunks_per_batch_(chunks_per_batch),
      chunks_in_read_(chunks_in_read != 0 ? chunks_in_read : chunks_per_batch),
      host_threads_(shared_thread_pool().size()),
      settings_(settings),
      prepared_(std::move(prepared)) {
  const CodecChain& chain = prepared_->chain();
  const ChunkSpec& spec = prepared_->spec();
  const std::size_t ndim = spec.shape.size();
  auto whole_chain_on_host = [&] {
    host_whole_chain_ = true;
    host_stages_.clear();
    device_stages_.clear();
    passes_.clear();
    swap_unit_ = 1;
    stored_strides_ = NDView::c_strides(spec.shape, spec.dtype.size());
  };

  ab_spec_ = prepared_->array_to_bytes_spec();

  // Array->bytes, then array->array in decode order, folded into the scatter's layout.
  StoredLayout layout;
  layout.axis_of.resize(ndim);
  std::iota(layout.axis_of.begin(), layout.axis_of.end(), std::size_t{0});
  layout.stored = ab_spec_;
  auto untouched = [&] {
    if (layout.swap_unit != 1) return false;
    for (std::size_t k = 0; k < ndim; ++k) {
      if (layout.axis_of[k] != k) return false;
    }
    return true;
  };
  // Passes run over the stored elements, so only while the layout is still untouched.
  auto fold = [&](const std::shared_ptr<const Codec>& codec, const ChunkSpec& decoded, bool may_pass) {
    auto half = std::dynamic_pointer_cast<const DeviceArrayCodec>(registry.make_device(codec));
    if (!half) return false;
    if (may_pass && untouched() && half->passes_over(decoded)) {
      passes_.push_back({half.get(), decoded});
    } else if (!half->fold(decoded, layout)) {
      return false;
    }
    halves_.push_back(std::move(half));
    return true;
  };
  bool folded = chain.array_to_bytes() && fold(chain.array_to_bytes(), ab_spec_, false);
  for (std::size_t i = chain.array_to_array().size(); folded && i-- > 0;) {
    folded = fold(chain.array_to_array()[i], prepared_->array_to_array_spec(i), true);
  }
  if (!folded) {
    whole_chain_on_host();
    return;
  }
  swap_unit_ = layout.swap_unit;
  const auto stored_c = NDView::c_strides(ab_spec_.shape, spec.dtype.size());
  stored_strides_.resize(ndim);
  for (std::size_t k = 0; k < ndim; ++k) stored_strides_[k] = stored_c[layout.axis_of[k]];

  // Bytes->bytes: the size each codec decodes to, as the prepared chain computed it.
  const auto& bb = chain.bytes_to_bytes();
  const std::size_t n = bb.size();
  codecs_.assign(bb.begin(), bb.end());
  std::vector<SizeBound> outputs(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& bound = prepared_->bytes_to_bytes_bounds()[i].bound;
    if (!bound) {  // variable-length elements: the device does not take them
      whole_chain_on_host();
      return;
    }
    outputs[i] = *bound;
  }
  // Decode order is bb reversed: stage d is codec n - 1 - d. The device takes stages
  // [split, n): each with a usable half, all but the last only narrowing.
  std::vector<std::shared_ptr<const DeviceBytesCodec>> bb_halves(n);
  std::vector<bool> usable(n, false);
  for (std::size_t d = 0; d < n; ++d) {
    const std::size_t i = n - 1 - d;
    bb_halves[d] = std::dynamic_pointer_cast<const DeviceBytesCodec>(registry.make_device(bb[i]));
    DeviceStageContext context{ab_spec_, chunk_bytes_, chunks_per_batch_, outputs[i], &settings_, chunks_in_read_, host_threads_};
    usable[d] = bb_halves[d] && bb_halves[d]->usable(context) && (d == n - 1 || bb_halves[d]->narrows_only());
  }
  std::size_t split = n;
  while (split > 0 && usable[split - 1]) --split;
  for (std::size_t d = 0; d < n; ++d) {
    const std::size_t i = n - 1 - d;
    if (d < split) {
      host_stages_.push_back({bb[i].get(), outputs[i]});
    } else {
      device_stages_.push_back({bb_halves[d].get(), bb[i].get(), outputs[i]});
      halves_.push_back(bb_halves[d]);
      const DeviceStageContext context{ab_spec_, chunk_bytes_, chunks_per_batch_, outputs[i], &settings_, chunks_in_read_, host_threads_};
      min_chunks_per_batch_ = std::max(min_chunks_per_batch_, bb_halves[d]->min_chunks_per_batch(context));
    }
  }
}

void DeviceChain::load_kernels() const {
  for (const DeviceStage& s : device_stages_) s.half->load_kernels();
  for (const Pass& p : passes_) p.half->load_kernels();
}

Buffer DeviceChain::decode_host_stages(Buffer encoded, const BufferPrototype& staging) const {
  Buffer owned = std::move(encoded);
  for (std::size_t i = 0; i < host_stages_.size(); ++i) {
    const HostStage& s = host_stages_[i];
    if (i + 1 == host_stages_.size() && s.output.exact) {
      Buffer decoded = staging.allocate(to_size(s.output.bytes));
      s.codec->decode_into(owned.view(), MutableByteView(decoded.data(), decoded.size()), ab_spec_);
      return decoded;
    }
    Buffer decoded = s.codec->decode(owned.view(), s.output, ab_spec_);
    check_output(*s.codec, decoded.size(), s.output);
    owned = std::move(decoded);
  }
  return owned;
}

std::optional<ChunkBytes> DeviceChain::plan_chunk(std::uint32_t chunk, ByteView bytes, BatchWorks& works) const {
  if (host_whole_chain_) return std::nullopt;
  ChunkBytes where{ChunkBytes::Area::kInput, 0, bytes.size()};
  for (const DeviceStage& stage : device_stages_) {
    const ChunkStagePlan plan{chunk, bytes.subspan(where.offset, where.size), where, works};
    const DeviceStageContext context{ab_spec_, chunk_bytes_, chunks_per_batch_, stage.output, &settings_, chunks_in_read_, host_threads_};
    const auto out = stage.half->plan(plan, context);
    if (!out || !within(out->size, stage.output)) return std::nullopt;
    const bool inside = out->offset >= where.offset && out->offset - where.offset <= where.size &&
                        out->size <= where.size - (out->offset - where.offset);
    if (out->area == ChunkBytes::Area::kInput && !inside) {
      throw InternalError(fmt::format("the device half of '{}' narrowed the bytes outside themselves", stage.codec->name()));
    }
    where = *out;
  }
  // What reaches the scatter is the stored chunk: exactly its size.
  if (where.size != chunk_bytes_) return std::nullopt;
  for (const Pass& pass : passes_) {
    if (!pass.half->plan_pass(chunk, where, pass.decoded, works)) return std::nullopt;
  }
  return where;
}

void DeviceChain::plan_passes(std::uint32_t chunk, BatchWorks& works) const {
  const ChunkBytes where{ChunkBytes::Area::kInput, 0, chunk_bytes_};
  for (const Pass& pass : passes_) {
    if (!pass.half->plan_pass(chunk, where, pass.decoded, works)) {
      throw InternalError("a device pass refused a chunk at the start of its bytes");
    }
  }
}

Buffer DeviceChain::decode_device_stages_on_host(ByteView bytes, const BufferPrototype& staging) const {
  Buffer owned;
  ByteView current = bytes;
  for (std::size_t i = 0; i < device_stages_.size(); ++i) {
    const DeviceStage& stage = device_stages_[i];
    if (i + 1 == device_stages_.size() && stage.output.exact && stage.output.bytes == chunk_bytes_) {
      // The last stage straight into the staging memory (no copy into it afterwards).
      Buffer decoded = staging.allocate(to_size(chunk_bytes_));
      stage.codec->decode_into(current, MutableByteView(decoded.data(), decoded.size()), ab_spec_);
      return decoded;
    }
    Buffer decoded = stage.codec->decode(current, stage.output, ab_spec_);
    check_output(*stage.codec, decoded.size(), stage.output);
    owned = std::move(decoded);
    current = owned.view();
  }
  if (current.size() != chunk_bytes_) {
    fail_data_loss("bytes codec: chunk of {} elements of {} must be {} bytes, got {}",
                   checked_num_elements(ab_spec_.shape), ab_spec_.dtype.name(), chunk_bytes_, current.size());
  }
  return owned.data() == current.data() && !owned.empty() ? owned : Buffer::copy_of(current);
}

}  // namespace zarrkit::gpu
