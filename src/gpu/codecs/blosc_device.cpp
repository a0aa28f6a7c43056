#include "gpu/codecs/blosc_device.h"

#include <blosc.h>

#include <limits>

#include "codecs/blosc.h"
#include "gpu/batch_support.h"
#include "gpu/codecs/inner_streams.h"
#include "gpu/codecs/lz4_streams.h"
#include "gpu/codecs/register.h"
#include "gpu/cuda_check.h"
#include "gpu/device_codec.h"
#include "gpu/device_settings.h"
#include "gpu/write_steps.h"

namespace zarrkit::gpu {
namespace {

std::uint32_t load_le32(const std::byte* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}
std::int64_t load_le32_signed(const std::byte* p) { return static_cast<std::int32_t>(load_le32(p)); }

bool within(std::uint64_t size, SizeBound bound) { return bound.exact ? size == bound.bytes : size <= bound.bytes; }

// Blocks whose streams the zstd or deflate kernels decoded into the chunk's slot: after
// those kernels, the decode area is copied to a scratch laid out like it, and the blocks
// unshuffle from there back into the slots (the unshuffle cannot run in place). The copy
// moves each byte once more at device bandwidth, far above what the inner codecs decode.
class UnshuffleInPlaceWork final : public BatchWork {
 public:
  void add(std::uint32_t chunk, BlockJob job) {
    job.chunk = chunk;
    blocks_.push_back(job);
  }

  Phase phase() const override { return kAfterDecompress; }
  bool empty() const override { return blocks_.empty(); }
  void clear() override { blocks_.clear(); }
  std::unique_ptr<BatchWork> make_empty() const override { return std::make_unique<UnshuffleInPlaceWork>(); }
  void absorb(BatchWork& other) override {
    auto& o = static_cast<UnshuffleInPlaceWork&>(other);
    blocks_.insert(blocks_.end(), o.blocks_.begin(), o.blocks_.end());
    o.clear();
  }

  void write_tables(const BatchAddresses& a, TableWriter& tables) override {
    if (blocks_.size() > std::numeric_limits<std::uint32_t>::max()) {
      fail_resource("a batch needs more blosc blocks than one launch takes");
    }
    for (BlockJob& b : blocks_) b.offset += (*a.slot_index)[b.chunk] * a.slot_bytes;
    area_bytes_ = a.slots_used * a.slot_bytes;
    scratch_.ensure(area_bytes_, a.stream, "allocating device scratch memory");
    at_blocks_ = tables.append(blocks_);
  }

  void launch(const BatchAddresses& a, const std::byte* tables) override {
    check_cuda(cudaMemcpyAsync(scratch_.ptr, a.slots, area_bytes_, cudaMemcpyDeviceToDevice, a.stream),
               "copying decoded blosc blocks to the unshuffle scratch");
    check_cuda(launch_unshuffle_blocks(reinterpret_cast<const BlockJob*>(tables + at_blocks_),
                                       static_cast<std::uint32_t>(blocks_.size()),
                                       reinterpret_cast<const std::uint8_t*>(scratch_.ptr), a.slots, a.status,
                                       a.stream),
               "launching the unshuffle kernel");
  }

  void release(cudaStream_t stream) override { scratch_.release(stream); }

 private:
  std::vector<BlockJob> blocks_;
  std::uint64_t area_bytes_ = 0;
  std::uint64_t at_blocks_ = 0;
  DeviceBuffer scratch_;
};

class BloscDevice final : public DeviceBytesCodec, public DeviceEncoderStep {
 public:
  explicit BloscDevice(BloscCodecSettings settings) : settings_(std::move(settings)) {}

  // With zstd or zlib inside (the codec's cname says what the writer used) and their
  // kernels taking the read, each block is a stream for a warp of those kernels: a launch
  // wants many.
  std::uint64_t min_chunks_per_batch(const DeviceStageContext& context) const override {
    const bool zstd = settings_.cname == "zstd" && zstd_kernels(context);
    const bool zlib = settings_.cname == "zlib" && zlib_kernels(context);
    return zstd || zlib ? kChunksToFillTheDevice : 1;
  }

  bool narrows_only() const override { return false; }

  std::optional<ChunkBytes> plan(const ChunkStagePlan& chunk, const DeviceStageContext& context) const override {
    const bool zstd = zstd_kernels(context), zlib = zlib_kernels(context);
    auto jobs = plan_blosc_chunk(chunk.host, context.output, 256u << 10, zstd || zlib);
    if (!jobs || jobs->decoded_size != context.chunk_bytes) return std::nullopt;
    for (const StreamJob& s : jobs->streams) {
      if (!Lz4StreamWork::worth_decoding_on_device(s)) return std::nullopt;
    }
    switch (jobs->inner) {
      case BloscInner::kLz4Family: break;
      case BloscInner::kZstd:
        if (!zstd || !add_zstd_streams(chunk, jobs->inner_streams)) return std::nullopt;
        break;
      case BloscInner::kZlib:
        if (!zlib || !add_zlib_streams(chunk, jobs->inner_streams)) return std::nullopt;
        break;
    }
    // Only now the rest: a chunk the inner codec's half refused has no jobs.
    if (!jobs->streams.empty()) {
      auto& work = chunk.works.get<Lz4StreamWork>();
      for (const StreamJob& s : jobs->streams) work.add_stream(chunk.chunk, chunk.device, s);
      if (jobs->inner == BloscInner::kLz4Family) {
        for (const BlockJob& b : jobs->blocks) work.add_block(chunk.chunk, b);
      }
    }
    if (jobs->inner != BloscInner::kLz4Family && !jobs->blocks.empty()) {
      auto& work = chunk.works.get<UnshuffleInPlaceWork>();
      for (const BlockJob& b : jobs->blocks) work.add(chunk.chunk, b);
    }
    return ChunkBytes{ChunkBytes::Area::kSlot, 0, jobs->decoded_size};
  }

  std::optional<WriteStep> write_step(const ChunkSpec& spec) const override {
    (void)spec;
    // The device encoder writes LZ4 only; "lz4hc" is the same format at a higher effort.
    if (settings_.cname != "lz4" && settings_.cname != "lz4hc") return std::nullopt;
    WriteStep step;
    step.kind = WriteStep::Kind::kBlosc;
    step.blosc.typesize = settings_.typesize >= 1 && settings_.typesize <= BLOSC_MAX_TYPESIZE
                              ? static_cast<unsigned>(settings_.typesize)
                              : 1u;
    switch (settings_.shuffle) {
      case BloscCodecSettings::Shuffle::kNone: step.blosc.shuffle = BlockShuffle::kCopy; break;
      case BloscCodecSettings::Shuffle::kByte: step.blosc.shuffle = BlockShuffle::kByte; break;
      case BloscCodecSettings::Shuffle::kBit: step.blosc.shuffle = BlockShuffle::kBit; break;
    }
    step.blosc.blocksize = static_cast<std::uint32_t>(std::min<std::uint64_t>(settings_.blocksize, BLOSC_MAX_BLOCKSIZE));
    step.blosc.compress = settings_.clevel > 0;
    return step;
  }

 private:
  // Blosc's blocks are small frames or streams whatever the chunk's size, many to a chunk:
  // under kAuto the inner codec's kernels take reads of 8 MiB or more per host thread.
  static constexpr OwnKernelsRule kInnerRule{.min_read_bytes_per_host_thread = 8u << 20, .max_chunk_bytes = 0};
  static bool zstd_kernels(const DeviceStageContext& context) {
    return own_kernels_take(context.settings->zstd_kernels, context, kInnerRule, false);
  }
  static bool zlib_kernels(const DeviceStageContext& context) {
    return own_kernels_take(context.settings->deflate_kernels, context, kInnerRule, false);
  }

  BloscCodecSettings settings_;
};

}  // namespace

std::optional<BloscJobs> plan_blosc_chunk(ByteView bytes, SizeBound expected, std::uint32_t copy_piece,
                                          bool zstd_and_zlib) {
  if (bytes.size() < BLOSC_MIN_HEADER_LENGTH || copy_piece == 0) return std::nullopt;
  const std::byte* h = bytes.data();
  const unsigned version = static_cast<unsigned>(h[0]);
  const unsigned version_lz = static_cast<unsigned>(h[1]);
  const unsigned flags = static_cast<unsigned>(h[2]);
  const unsigned typesize = static_cast<unsigned>(h[3]);
  const std::int64_t nbytes = load_le32_signed(h + 4);
  const std::int64_t blocksize = load_le32_signed(h + 8);
  const std::int64_t cbytes = load_le32_signed(h + 12);
  // The checks of the CPU codec (blosc.cpp) and of c-blosc's decompressor, in its order.
  if (cbytes < BLOSC_MIN_HEADER_LENGTH || static_cast<std::uint64_t>(cbytes) > bytes.size()) return std::nullopt;
  if (nbytes < 0 || nbytes > BLOSC_MAX_BUFFERSIZE) return std::nullopt;
  if (!within(static_cast<std::uint64_t>(nbytes), expected)) return std::nullopt;
  BloscJobs jobs;
  jobs.decoded_size = static_cast<std::uint64_t>(nbytes);
  if (nbytes == 0) return jobs;
  if (version != BLOSC_VERSION_FORMAT) return std::nullopt;
  if (blocksize <= 0 || blocksize > nbytes || blocksize > static_cast<std::int64_t>(BLOSC_MAX_BLOCKSIZE) ||
      typesize == 0) {
    return std::nullopt;
  }
  if (flags & 0x08u) return std::nullopt;  // flags from a future format
  const std::int64_t leftover = nbytes % blocksize;
  const std::int64_t nblocks = nbytes / blocksize + (leftover > 0 ? 1 : 0);

  if (flags & BLOSC_MEMCPYED) {
    if (nbytes + BLOSC_MAX_OVERHEAD != cbytes) return std::nullopt;
    for (std::int64_t off = 0; off < nbytes; off += copy_piece) {
      const auto piece = static_cast<std::uint32_t>(std::min<std::int64_t>(copy_piece, nbytes - off));
      jobs.streams.push_back({static_cast<std::uint64_t>(BLOSC_MAX_OVERHEAD + off), static_cast<std::uint64_t>(off),
                              piece, piece, 0, StreamCodec::kCopy, 0});
    }
    return jobs;
  }
  StreamCodec codec = StreamCodec::kCopy;  // for the LZ4 family
  switch ((flags & 0xE0u) >> 5) {
    case BLOSC_BLOSCLZ_FORMAT:
      if (version_lz != BLOSC_BLOSCLZ_VERSION_FORMAT) return std::nullopt;
      codec = StreamCodec::kBloscLz;
      break;
    case BLOSC_LZ4_FORMAT:
      if (version_lz != BLOSC_LZ4_VERSION_FORMAT) return std::nullopt;
      codec = StreamCodec::kLz4;
      break;
    case BLOSC_ZSTD_FORMAT:
      if (!zstd_and_zlib || version_lz != BLOSC_ZSTD_VERSION_FORMAT) return std::nullopt;
      jobs.inner = BloscInner::kZstd;
      break;
    case BLOSC_ZLIB_FORMAT:
      if (!zstd_and_zlib || version_lz != BLOSC_ZLIB_VERSION_FORMAT) return std::nullopt;
      jobs.inner = BloscInner::kZlib;
      break;
    default:
      return std::nullopt;  // snappy: the CPU decodes it
  }
  const bool lz4_family = jobs.inner == BloscInner::kLz4Family;
  if (nblocks > (cbytes - 16) / 4) return std::nullopt;
  const bool dont_split = (flags & 0x10u) != 0;
  for (std::int64_t j = 0; j < nblocks; ++j) {
    const bool leftover_block = j == nblocks - 1 && leftover > 0;
    const std::int64_t bsize = leftover_block ? leftover : blocksize;
    const bool byte_shuffle = (flags & BLOSC_DOSHUFFLE) && typesize > 1;
    const bool bit_shuffle = !byte_shuffle && (flags & BLOSC_DOBITSHUFFLE) && bsize >= typesize;
    const bool shuffled = byte_shuffle || bit_shuffle;
    const std::int64_t nsplits =
        !dont_split && typesize <= 16 && bsize / typesize >= 128 && !leftover_block ? typesize : 1;
    const std::int64_t neblock = bsize / nsplits;
    if (neblock * nsplits != bsize) return std::nullopt;  // c-blosc would leave bytes unwritten
    std::int64_t src = load_le32_signed(h + 16 + 4 * j);
    for (std::int64_t s = 0; s < nsplits; ++s) {
      if (src < 0 || src > cbytes - 4) return std::nullopt;
      const std::int64_t csize = load_le32_signed(h + src);
      src += 4;
      if (csize < 0 || csize > cbytes - src) return std::nullopt;
      // A stream as long as its decoded bytes is stored raw (c-blosc's rule for any codec).
      const bool stored = csize == neblock;
      StreamJob job{static_cast<std::uint64_t>(src),
                    static_cast<std::uint64_t>(j * blocksize + s * neblock),
                    static_cast<std::uint32_t>(csize),
                    static_cast<std::uint32_t>(neblock),
                    0,
                    stored ? StreamCodec::kCopy : codec,
                    static_cast<std::uint8_t>(shuffled && lz4_family ? 1 : 0)};
      (stored || lz4_family ? jobs.streams : jobs.inner_streams).push_back(job);
      src += csize;
    }
    if (shuffled) {
      jobs.blocks.push_back({static_cast<std::uint64_t>(j * blocksize), static_cast<std::uint32_t>(bsize), 0,
                             static_cast<std::uint16_t>(typesize),
                             byte_shuffle ? BlockShuffle::kByte : BlockShuffle::kBit});
    }
  }
  return jobs;
}

void register_blosc_device_codec(const CodecRegistry& registry) {
  auto make = [](const std::shared_ptr<const Codec>& host) -> std::shared_ptr<const DeviceCodec> {
    return std::make_shared<BloscDevice>(blosc_codec_settings(*host));
  };
  registry.add_device("blosc", make);
  registry.add_device("numcodecs.blosc", make);
}

}  // namespace zarrkit::gpu
