// The device half of gzip and zlib (deflate_device.h): the chunks of a batch, their table,
// and the batch work that launches the kernel. Where Config::gpu.deflate_kernels does not
// take a read (off, or auto and the read is not one it wins), gzip's half is nvCOMP's
// (opt-in, Config::gpu.nvcomp_decode), and zlib has none.
#include "gpu/codecs/deflate_device.h"

#include <limits>

#include "gpu/batch_support.h"
#include "gpu/codecs/inner_streams.h"
#include "gpu/codecs/nvcomp_device.h"
#include "gpu/codecs/register.h"
#include "gpu/cuda_check.h"
#include "gpu/deflate/deflate_host_decoder.h"
#include "gpu/device_codec.h"
#include "gpu/device_read.h"
#include "gpu/device_settings.h"

namespace zarrkit::gpu {

namespace {

// Deflate inputs of a batch: whole chunks, or streams inside one (blosc's), each decoding
// into its part of its chunk's slot. The parts of one chunk share its status.
class DeflateWork final : public BatchWork {
 public:
  void add(std::uint32_t chunk, const ChunkBytes& input, const ChunkBytes& output, deflate::Format format) {
    chunks_.push_back({chunk, input, output, format});
  }

  Phase phase() const override { return kDecompress; }
  bool empty() const override { return chunks_.empty(); }
  void clear() override { chunks_.clear(); }
  std::unique_ptr<BatchWork> make_empty() const override { return std::make_unique<DeflateWork>(); }
  void absorb(BatchWork& other) override {
    auto& o = static_cast<DeflateWork&>(other);
    chunks_.insert(chunks_.end(), o.chunks_.begin(), o.chunks_.end());
    o.clear();
  }

  void write_tables(const BatchAddresses& a, TableWriter& tables) override {
    std::vector<deflate::DeflateChunkJob> jobs;
    jobs.reserve(chunks_.size());
    for (const Entry& e : chunks_) {
      deflate::DeflateChunkJob j{};
      j.input = a.address(e.chunk, e.input);
      j.output = a.address(e.chunk, e.output);
      j.input_size = static_cast<std::uint32_t>(e.input.size);
      j.output_size = static_cast<std::uint32_t>(e.output.size);
      j.status = e.chunk;
      j.format = e.format;
      jobs.push_back(j);
    }
    at_jobs_ = tables.append(jobs);
  }

  void launch(const BatchAddresses& a, const std::byte* tables) override {
    deflate::DeflateLaunch l;
    l.chunks = reinterpret_cast<const deflate::DeflateChunkJob*>(tables + at_jobs_);
    l.status = a.status;
    l.chunk_count = static_cast<std::uint32_t>(chunks_.size());
    check_cuda(launch_deflate_decode(l, a.stream), "launching the deflate kernel");
    std::uint64_t distinct = 0;  // a chunk's entries are consecutive: batches absorb in order
    for (std::size_t i = 0; i < chunks_.size(); ++i) distinct += i == 0 || chunks_[i].chunk != chunks_[i - 1].chunk;
    read_stats().chunks_decoded_by_deflate_kernels.fetch_add(distinct);
  }

 private:
  struct Entry {
    std::uint32_t chunk;
    ChunkBytes input;
    ChunkBytes output;  // in the slot
    deflate::Format format;
  };
  std::vector<Entry> chunks_;
  std::uint64_t at_jobs_ = 0;
};

class DeflateDevice final : public DeviceBytesCodec {
 public:
  // `nvcomp`: the half to offer when our kernels are off (gzip's: nvCOMP's), or null.
  DeflateDevice(deflate::Format format, std::shared_ptr<const DeviceBytesCodec> nvcomp)
      : format_(format), nvcomp_(std::move(nvcomp)) {}

  void load_kernels() const override { load_deflate_kernels(); }

  bool usable(const DeviceStageContext& context) const override {
    return own(context) || (context.settings->deflate_kernels != KernelUse::kOn && nvcomp_ && nvcomp_->usable(context));
  }

  // A warp decodes a chunk: a launch needs thousands to fill the device.
  std::uint64_t min_chunks_per_batch(const DeviceStageContext& context) const override {
    if (own(context)) return kChunksToFillTheDevice;
    return nvcomp_ && nvcomp_->usable(context) ? nvcomp_->min_chunks_per_batch(context) : 1;
  }

  bool narrows_only() const override { return false; }

  std::optional<ChunkBytes> plan(const ChunkStagePlan& chunk, const DeviceStageContext& context) const override {
    if (!own(context)) return nvcomp_ ? nvcomp_->plan(chunk, context) : std::nullopt;
    if (chunk.device.area != ChunkBytes::Area::kInput) return std::nullopt;
    if (!deflate::plan_deflate_chunk(chunk.host.size(), context.chunk_bytes)) return std::nullopt;
    chunk.works.get<DeflateWork>().add(chunk.chunk, chunk.device,
                                       ChunkBytes{ChunkBytes::Area::kSlot, 0, context.chunk_bytes}, format_);
    return ChunkBytes{ChunkBytes::Area::kSlot, 0, context.chunk_bytes};
  }

 private:
  // Our kernel takes chunks that must decode to exactly the decoded chunk. Under kAuto, reads
  // of chunks up to 512 KiB, 32 MiB or more per host thread: one warp decodes a chunk, so
  // it pays only with thousands of them, and loses on large chunks (docs/gpu.md).
  bool own(const DeviceStageContext& context) const {
    constexpr OwnKernelsRule kRule{.min_read_bytes_per_host_thread = 32u << 20, .max_chunk_bytes = 512u << 10};
    const bool nvcomp_instead = nvcomp_ != nullptr && context.settings->nvcomp_decode && nvcomp_->usable(context);
    return own_kernels_take(context.settings->deflate_kernels, context, kRule, nvcomp_instead) &&
           context.output.exact && context.output.bytes == context.chunk_bytes &&
           context.chunk_bytes < std::numeric_limits<std::uint32_t>::max();
  }

  deflate::Format format_;
  std::shared_ptr<const DeviceBytesCodec> nvcomp_;
};

}  // namespace

bool add_zlib_streams(const ChunkStagePlan& chunk, const std::vector<StreamJob>& streams) {
  if (chunk.device.area != ChunkBytes::Area::kInput) return false;
  for (const StreamJob& s : streams) {
    if (s.src > chunk.host.size() || s.src_size > chunk.host.size() - s.src) return false;
    if (!deflate::plan_deflate_chunk(s.src_size, s.dst_size)) return false;
  }
  auto& work = chunk.works.get<DeflateWork>();
  for (const StreamJob& s : streams) {
    work.add(chunk.chunk, ChunkBytes{ChunkBytes::Area::kInput, chunk.device.offset + s.src, s.src_size},
             ChunkBytes{ChunkBytes::Area::kSlot, s.dst, s.dst_size}, deflate::kZlib);
  }
  return true;
}

void register_deflate_device_codecs(const CodecRegistry& registry) {
  auto gzip = [](const std::shared_ptr<const Codec>&) -> std::shared_ptr<const DeviceCodec> {
    return std::make_shared<DeflateDevice>(deflate::kGzip, make_nvcomp_device(NvcompCodec::kGzip));
  };
  registry.add_device("gzip", gzip);
  registry.add_device("numcodecs.gzip", gzip);
  auto zlib = [](const std::shared_ptr<const Codec>&) -> std::shared_ptr<const DeviceCodec> {
    return std::make_shared<DeflateDevice>(deflate::kZlib, nullptr);
  };
  registry.add_device("zlib", zlib);
  registry.add_device("numcodecs.zlib", zlib);
}

}  // namespace zarrkit::gpu
