// The device half of zstd (zstd_device.h): chunks planned by the walk, their tables, and
// the batch work that launches the kernels. Where Config::gpu.zstd_kernels does not take a
// read (off, or auto and the read is not one they win), the half is nvCOMP's (opt-in,
// Config::gpu.nvcomp_decode), or none.
#include "gpu/codecs/zstd_device.h"

#include <algorithm>
#include <limits>

#include "gpu/batch_support.h"
#include "gpu/codecs/inner_streams.h"
#include "gpu/codecs/nvcomp_device.h"
#include "gpu/codecs/register.h"
#include "gpu/cuda_check.h"
#include "gpu/device_codec.h"
#include "gpu/device_read.h"
#include "gpu/device_settings.h"
#include "zarrkit/error.h"

namespace zarrkit::gpu {

namespace {

// Zstd inputs of a batch: whole chunks, or frames inside one (blosc's streams), each
// decoding into its part of its chunk's slot. The parts of one chunk share its status.
class ZstdWork final : public BatchWork {
 public:
  void add(std::uint32_t chunk, const ChunkBytes& input, const ChunkBytes& output, ZstdPlannedChunk planned) {
    planned.status = chunk;
    chunks_.push_back({input, output, std::move(planned)});
  }

  Phase phase() const override { return kDecompress; }
  bool empty() const override { return chunks_.empty(); }
  void clear() override { chunks_.clear(); }
  std::unique_ptr<BatchWork> make_empty() const override { return std::make_unique<ZstdWork>(); }
  void absorb(BatchWork& other) override {
    auto& o = static_cast<ZstdWork&>(other);
    for (auto& c : o.chunks_) chunks_.push_back(std::move(c));
    o.clear();
  }

  void write_tables(const BatchAddresses& a, TableWriter& tables) override {
    std::vector<const ZstdPlannedChunk*> planned;
    std::vector<std::uint64_t> inputs, outputs;
    for (const Entry& e : chunks_) {
      planned.push_back(&e.planned);
      inputs.push_back(a.address(e.planned.status, e.input));
      outputs.push_back(a.address(e.planned.status, e.output));
    }
    scratch_.ensure(zstd_scratch_bytes(planned), a.stream, "allocating device memory for zstd decoding");
    if (!build_zstd_tables(planned, inputs, outputs, reinterpret_cast<std::uint64_t>(scratch_.ptr), tables_)) {
      fail_resource("a batch has more zstd blocks than one launch takes");
    }
    at_chunks_ = tables.append(tables_.chunks);
    at_frames_ = tables.append(tables_.frames);
    at_blocks_ = tables.append(tables_.blocks);
  }

  void launch(const BatchAddresses& a, const std::byte* tables) override {
    const ZstdLaunch l = zstd_launch(tables_, reinterpret_cast<const ZstdChunkJob*>(tables + at_chunks_),
                                     reinterpret_cast<const zstd::FrameJob*>(tables + at_frames_),
                                     reinterpret_cast<const zstd::BlockJob*>(tables + at_blocks_),
                                     reinterpret_cast<std::uint64_t>(scratch_.ptr), a.status);
    check_cuda(launch_zstd_decode(l, a.stream), "launching the zstd kernels");
    read_stats().chunks_decoded_by_zstd_kernels.fetch_add(distinct_chunks());
  }

  void release(cudaStream_t stream) override { scratch_.release(stream); }

 private:
  struct Entry {
    ChunkBytes input;
    ChunkBytes output;  // in the slot
    ZstdPlannedChunk planned;
  };
  // The chunks of the entries (a chunk's entries are consecutive: batches absorb in order).
  std::uint64_t distinct_chunks() const {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < chunks_.size(); ++i) {
      n += i == 0 || chunks_[i].planned.status != chunks_[i - 1].planned.status;
    }
    return n;
  }
  std::vector<Entry> chunks_;
  ZstdTables tables_;
  std::uint64_t at_chunks_ = 0, at_frames_ = 0, at_blocks_ = 0;
  DeviceBuffer scratch_;
};

class ZstdDevice final : public DeviceBytesCodec {
 public:
  ZstdDevice() : nvcomp_(make_nvcomp_device(NvcompCodec::kZstd)) {}

  void load_kernels() const override { load_zstd_kernels(); }

  bool usable(const DeviceStageContext& context) const override {
    return own(context) || (context.settings->zstd_kernels != KernelUse::kOn && nvcomp_->usable(context));
  }

  // A warp decodes a block's literals, sequences and bytes: a launch needs thousands of
  // blocks (a chunk has one per 128 KiB) to fill the device.
  std::uint64_t min_chunks_per_batch(const DeviceStageContext& context) const override {
    if (own(context)) return kChunksToFillTheDevice;
    return nvcomp_->usable(context) ? nvcomp_->min_chunks_per_batch(context) : 1;
  }

  bool narrows_only() const override { return false; }

  std::optional<ChunkBytes> plan(const ChunkStagePlan& chunk, const DeviceStageContext& context) const override {
    if (!own(context)) return nvcomp_->plan(chunk, context);
    if (chunk.device.area != ChunkBytes::Area::kInput) return std::nullopt;
    ZstdPlannedChunk planned;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(chunk.host.data());
    if (!plan_zstd_chunk(bytes, chunk.host.size(), context.chunk_bytes, planned)) return std::nullopt;
    chunk.works.get<ZstdWork>().add(chunk.chunk, chunk.device,
                                    ChunkBytes{ChunkBytes::Area::kSlot, 0, context.chunk_bytes}, std::move(planned));
    return ChunkBytes{ChunkBytes::Area::kSlot, 0, context.chunk_bytes};
  }

 private:
  // Our kernels take chunks that must decode to exactly the decoded chunk. Under kAuto, reads
  // of chunks up to 4 MiB, 8 MiB or more per host thread: larger frames execute one block
  // at a time (docs/gpu.md), and small reads wait on one warp's pace.
  bool own(const DeviceStageContext& context) const {
    constexpr OwnKernelsRule kRule{.min_read_bytes_per_host_thread = 8u << 20, .max_chunk_bytes = 4u << 20};
    const bool nvcomp_instead = context.settings->nvcomp_decode && nvcomp_->usable(context);
    return own_kernels_take(context.settings->zstd_kernels, context, kRule, nvcomp_instead) &&
           context.output.exact && context.output.bytes == context.chunk_bytes &&
           context.chunk_bytes < std::numeric_limits<std::uint32_t>::max();
  }

  std::shared_ptr<const DeviceBytesCodec> nvcomp_;
};

}  // namespace

bool add_zstd_streams(const ChunkStagePlan& chunk, const std::vector<StreamJob>& streams) {
  if (chunk.device.area != ChunkBytes::Area::kInput) return false;
  std::vector<ZstdPlannedChunk> planned(streams.size());
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const StreamJob& s = streams[i];
    if (s.src > chunk.host.size() || s.src_size > chunk.host.size() - s.src) return false;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(chunk.host.data()) + s.src;
    if (!plan_zstd_chunk(bytes, s.src_size, s.dst_size, planned[i])) return false;
  }
  auto& work = chunk.works.get<ZstdWork>();
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const StreamJob& s = streams[i];
    work.add(chunk.chunk, ChunkBytes{ChunkBytes::Area::kInput, chunk.device.offset + s.src, s.src_size},
             ChunkBytes{ChunkBytes::Area::kSlot, s.dst, s.dst_size}, std::move(planned[i]));
  }
  return true;
}

void register_zstd_device_codec(const CodecRegistry& registry) {
  auto zstd = [](const std::shared_ptr<const Codec>&) -> std::shared_ptr<const DeviceCodec> {
    return std::make_shared<ZstdDevice>();
  };
  registry.add_device("zstd", zstd);
  registry.add_device("numcodecs.zstd", zstd);
}

}  // namespace zarrkit::gpu
