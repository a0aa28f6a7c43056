// The device halves of zstd and gzip through nvCOMP (loaded at run time, nvcomp_runtime.h):
// opt-in (Config::gpu.nvcomp_decode), for chunks of at most kNvcompMaxChunkBytes in
// batches of at least Config::gpu.nvcomp_min_chunks of them, where its batched decoders beat the
// host's threads. nvCOMP reports each chunk's status and decoded size in tables of its own;
// a chunk it rejects, or that decodes to another size, is decoded again on the host.
#include <cstring>

#include "gpu/batch_support.h"
#include "gpu/codecs/nvcomp_device.h"
#include "gpu/codecs/register.h"
#include "gpu/cuda_check.h"
#include "gpu/device_codec.h"
#include "gpu/device_read.h"
#include "gpu/device_settings.h"
#include "gpu/nvcomp_runtime.h"

namespace zarrkit::gpu {
namespace {

class NvcompWork final : public BatchWork {
 public:
  void add(NvcompCodec codec, std::uint32_t chunk, ChunkBytes input, std::uint64_t output_bytes) {
    codec_ = codec;
    chunks_.push_back({chunk, input, output_bytes});
  }

  Phase phase() const override { return kDecompress; }
  bool empty() const override { return chunks_.empty(); }
  void clear() override {
    chunks_.clear();
    launch_failed_ = false;
  }
  std::unique_ptr<BatchWork> make_empty() const override { return std::make_unique<NvcompWork>(); }
  void absorb(BatchWork& other) override {
    auto& o = static_cast<NvcompWork&>(other);
    codec_ = o.codec_;
    chunks_.insert(chunks_.end(), o.chunks_.begin(), o.chunks_.end());
    o.clear();
  }

  void write_tables(const BatchAddresses& a, TableWriter& tables) override {
    const std::size_t n = chunks_.size();
    std::vector<std::uint64_t> inputs(n), input_sizes(n), outputs(n), output_sizes(n);
    max_output_ = 0;
    total_output_ = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const Entry& e = chunks_[k];
      inputs[k] = a.address(e.chunk, e.input);
      input_sizes[k] = e.input.size;
      outputs[k] = a.address(e.chunk, ChunkBytes{ChunkBytes::Area::kSlot, 0, e.output_bytes});
      output_sizes[k] = e.output_bytes;
      max_output_ = std::max(max_output_, e.output_bytes);
      total_output_ += e.output_bytes;
    }
    at_inputs_ = tables.append(inputs);
    at_input_sizes_ = tables.append(input_sizes);
    at_outputs_ = tables.append(outputs);
    at_output_sizes_ = tables.append(output_sizes);
    state_.ensure(state_bytes(n), a.stream, "allocating nvCOMP's device memory");
    if (!host_state_ || host_state_->capacity() < state_bytes(n)) {
      arena_pool().give(std::move(host_state_));
      host_state_ = arena_pool().take(std::max<std::size_t>(state_bytes(n), 1u << 16));
    }
  }

  void launch(const BatchAddresses& a, const std::byte* tables) override {
    const Nvcomp* nv = Nvcomp::get();
    const std::size_t n = chunks_.size();
    const std::size_t temp_bytes = nv == nullptr ? static_cast<std::size_t>(-1)
                                                 : nv->temp_bytes(codec_, n, max_output_, total_output_);
    if (temp_bytes == static_cast<std::size_t>(-1)) {
      launch_failed_ = true;
      return;
    }
    temp_.ensure(std::max<std::size_t>(temp_bytes, 1), a.stream, "allocating nvCOMP's device memory");
    std::byte* state = state_.ptr;
    const int result = nv->decompress(
        codec_, reinterpret_cast<const void* const*>(tables + at_inputs_),
        reinterpret_cast<const std::size_t*>(tables + at_input_sizes_),
        reinterpret_cast<const std::size_t*>(tables + at_output_sizes_),
        reinterpret_cast<std::size_t*>(state + sizes_offset(n)), n, temp_.ptr, temp_bytes,
        reinterpret_cast<void* const*>(tables + at_outputs_), reinterpret_cast<int*>(state), a.stream);
    if (result != 0) {
      launch_failed_ = true;
      return;
    }
    check_cuda(cudaMemcpyAsync(host_state_->base(), state_.ptr, state_bytes(n), cudaMemcpyDeviceToHost, a.stream),
               "reading nvCOMP's results from the device");
    read_stats().chunks_decoded_by_nvcomp.fetch_add(n);
  }

  void rejected_chunks(std::vector<std::uint32_t>& out) const override {
    const std::size_t n = chunks_.size();
    for (std::size_t k = 0; k < n; ++k) {
      bool ok = !launch_failed_;
      if (ok) {
        std::int32_t status = 0;
        std::uint64_t size = 0;
        std::memcpy(&status, host_state_->base() + k * sizeof(std::int32_t), sizeof status);
        std::memcpy(&size, host_state_->base() + sizes_offset(n) + k * sizeof(std::uint64_t), sizeof size);
        ok = status == 0 && size == chunks_[k].output_bytes;
      }
      if (!ok) out.push_back(chunks_[k].chunk);
    }
  }

  void release(cudaStream_t stream) override {
    temp_.release(stream);
    state_.release(stream);
    if (host_state_) {
      cudaStreamSynchronize(stream);
      arena_pool().give(std::move(host_state_));
    }
  }

 private:
  struct Entry {
    std::uint32_t chunk;
    ChunkBytes input;
    std::uint64_t output_bytes;
  };
  // nvCOMP's results: n statuses (int), then n decoded sizes.
  static std::uint64_t sizes_offset(std::size_t n) { return align_up(n * sizeof(std::int32_t), 8); }
  static std::uint64_t state_bytes(std::size_t n) { return sizes_offset(n) + n * sizeof(std::uint64_t); }

  NvcompCodec codec_ = NvcompCodec::kZstd;
  std::vector<Entry> chunks_;
  std::uint64_t max_output_ = 0;
  std::uint64_t total_output_ = 0;
  std::uint64_t at_inputs_ = 0, at_input_sizes_ = 0, at_outputs_ = 0, at_output_sizes_ = 0;
  bool launch_failed_ = false;
  DeviceBuffer temp_, state_;
  std::unique_ptr<PinnedArena> host_state_;
};

class NvcompDevice final : public DeviceBytesCodec {
 public:
  explicit NvcompDevice(NvcompCodec codec) : codec_(codec) {}

  bool usable(const DeviceStageContext& context) const override {
    const DeviceSettings& settings = *context.settings;
    return settings.nvcomp_decode && context.output.exact && context.output.bytes == context.chunk_bytes &&
           context.chunk_bytes <= kNvcompMaxChunkBytes && context.chunks_per_batch >= settings.nvcomp_min_chunks &&
           Nvcomp::get() != nullptr;
  }

  // Its batched decoders parallelise across chunks only (it is not used on fewer).
  std::uint64_t min_chunks_per_batch(const DeviceStageContext& context) const override {
    return context.settings->nvcomp_min_chunks;
  }

  bool narrows_only() const override { return false; }

  std::optional<ChunkBytes> plan(const ChunkStagePlan& chunk, const DeviceStageContext& context) const override {
    chunk.works.get<NvcompWork>().add(codec_, chunk.chunk, chunk.device, context.chunk_bytes);
    return ChunkBytes{ChunkBytes::Area::kSlot, 0, context.chunk_bytes};
  }

 private:
  NvcompCodec codec_;
};

}  // namespace

std::shared_ptr<const DeviceBytesCodec> make_nvcomp_device(NvcompCodec codec) {
  return std::make_shared<NvcompDevice>(codec);
}

// The halves of zstd (zstd_device.cpp) and gzip (deflate_device.cpp) offer nvCOMP's when
// their own kernels are not asked for.

}  // namespace zarrkit::gpu
