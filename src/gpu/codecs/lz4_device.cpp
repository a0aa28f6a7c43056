// The device half of numcodecs.lz4: a 4-byte little-endian size, then one LZ4 block,
// decoded by one warp (blocks longer than kLongLz4BlockBytes decode on the host, where they
// are faster: device_read.h).
#include <climits>

#include "gpu/codecs/lz4_streams.h"
#include "gpu/codecs/register.h"
#include "gpu/device_codec.h"
#include "gpu/write_steps.h"

namespace zarrkit::gpu {
namespace {

class Lz4Device final : public DeviceBytesCodec, public DeviceEncoderStep {
 public:
  bool narrows_only() const override { return false; }

  std::optional<ChunkBytes> plan(const ChunkStagePlan& chunk, const DeviceStageContext& context) const override {
    const ByteView bytes = chunk.host;
    if (bytes.size() < 4) return std::nullopt;
    const std::uint64_t claimed = static_cast<std::uint64_t>(bytes[0]) | static_cast<std::uint64_t>(bytes[1]) << 8 |
                                  static_cast<std::uint64_t>(bytes[2]) << 16 |
                                  static_cast<std::uint64_t>(bytes[3]) << 24;
    const SizeBound out = context.output;
    if (!(out.exact ? claimed == out.bytes : claimed <= out.bytes) || claimed != context.chunk_bytes) {
      return std::nullopt;
    }
    if (claimed > static_cast<std::uint64_t>(INT_MAX) || bytes.size() - 4 > static_cast<std::uint64_t>(INT_MAX)) {
      return std::nullopt;
    }
    const StreamJob job{4, 0, static_cast<std::uint32_t>(bytes.size() - 4), static_cast<std::uint32_t>(claimed), 0,
                        StreamCodec::kLz4, 0};
    if (!Lz4StreamWork::worth_decoding_on_device(job)) return std::nullopt;
    chunk.works.get<Lz4StreamWork>().add_stream(chunk.chunk, chunk.device, job);
    return ChunkBytes{ChunkBytes::Area::kSlot, 0, claimed};
  }

  std::optional<WriteStep> write_step(const ChunkSpec& spec) const override {
    (void)spec;
    WriteStep step;
    step.kind = WriteStep::Kind::kLz4;
    return step;
  }
};

}  // namespace

void register_lz4_device_codec(const CodecRegistry& registry) {
  registry.add_device("numcodecs.lz4", [](const std::shared_ptr<const Codec>&) -> std::shared_ptr<const DeviceCodec> {
    return std::make_shared<Lz4Device>();
  });
}

}  // namespace zarrkit::gpu
