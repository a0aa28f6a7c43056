// The device half of crc32c ("crc32c", "numcodecs.crc32c"): the checksum of each chunk's
// payload computed on the GPU in 16 KiB segments, combined per chunk and compared with the
// stored value; the payload then goes on to the next stage as it is.
#include <limits>

#include "codecs/crc32c.h"
#include "core/checked_math.h"
#include "gpu/batch_support.h"
#include "gpu/codecs/register.h"
#include "gpu/cuda_check.h"
#include "gpu/device_codec.h"
#include "gpu/write_steps.h"
#include "zarrkit/error.h"

namespace zarrkit::gpu {
namespace {

class CrcWork final : public BatchWork {
 public:
  void add(std::uint32_t chunk, CrcJob job) {
    job.chunk = chunk;
    jobs_.push_back(job);
  }

  Phase phase() const override { return kVerify; }
  bool empty() const override { return jobs_.empty(); }
  void clear() override { jobs_.clear(); }
  std::unique_ptr<BatchWork> make_empty() const override { return std::make_unique<CrcWork>(); }
  void absorb(BatchWork& other) override {
    auto& o = static_cast<CrcWork&>(other);
    jobs_.insert(jobs_.end(), o.jobs_.begin(), o.jobs_.end());
    o.clear();
  }

  void write_tables(const BatchAddresses& a, TableWriter& tables) override {
    std::vector<std::uint32_t> segment_jobs;
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      CrcJob& job = jobs_[j];
      job.src += (*a.input_offset)[job.chunk];
      job.first_segment = static_cast<std::uint32_t>(segment_jobs.size());
      job.num_segments = static_cast<std::uint32_t>(ceil_div(job.size, kCrcSegmentBytes));
      segment_jobs.insert(segment_jobs.end(), job.num_segments, static_cast<std::uint32_t>(j));
      if (segment_jobs.size() > std::numeric_limits<std::uint32_t>::max()) {
        fail_resource("a batch needs more checksum segments than one launch takes");
      }
    }
    num_segments_ = static_cast<std::uint32_t>(segment_jobs.size());
    partial_.ensure(std::size_t{num_segments_} * sizeof(std::uint32_t), a.stream, "allocating device memory");
    at_jobs_ = tables.append(jobs_);
    at_segments_ = tables.append(segment_jobs);
  }

  void launch(const BatchAddresses& a, const std::byte* tables) override {
    check_cuda(launch_crc32c(reinterpret_cast<const CrcJob*>(tables + at_jobs_), static_cast<std::uint32_t>(jobs_.size()),
                             reinterpret_cast<const std::uint32_t*>(tables + at_segments_), num_segments_, a.input,
                             reinterpret_cast<std::uint32_t*>(partial_.ptr), a.status, a.stream),
               "launching the crc32c kernels");
  }

  void release(cudaStream_t stream) override { partial_.release(stream); }

 private:
  std::vector<CrcJob> jobs_;
  std::uint32_t num_segments_ = 0;
  std::uint64_t at_jobs_ = 0;
  std::uint64_t at_segments_ = 0;
  DeviceBuffer partial_;
};

class Crc32cDevice final : public DeviceBytesCodec, public DeviceEncoderStep {
 public:
  explicit Crc32cDevice(bool checksum_first) : checksum_first_(checksum_first) {}

  bool narrows_only() const override { return true; }

  std::optional<ChunkBytes> plan(const ChunkStagePlan& chunk, const DeviceStageContext& context) const override {
    const ByteView bytes = chunk.host;
    if (bytes.size() < 4) return std::nullopt;
    const std::uint64_t payload = bytes.size() - 4;
    const SizeBound out = context.output;
    if (!(out.exact ? payload == out.bytes : payload <= out.bytes)) return std::nullopt;
    const std::uint64_t field = checksum_first_ ? 0 : payload;
    const std::uint64_t start = checksum_first_ ? 4 : 0;
    const std::byte* f = bytes.data() + field;
    const std::uint32_t expected = static_cast<std::uint32_t>(f[0]) | static_cast<std::uint32_t>(f[1]) << 8 |
                                   static_cast<std::uint32_t>(f[2]) << 16 | static_cast<std::uint32_t>(f[3]) << 24;
    if (chunk.device.area != ChunkBytes::Area::kInput) return std::nullopt;
    chunk.works.get<CrcWork>().add(chunk.chunk, CrcJob{chunk.device.offset + start, payload, expected, 0, 0, 0});
    return ChunkBytes{chunk.device.area, chunk.device.offset + start, payload};
  }

  std::optional<WriteStep> write_step(const ChunkSpec& spec) const override {
    (void)spec;
    WriteStep step;
    step.kind = WriteStep::Kind::kChecksum;
    step.checksum_first = checksum_first_;
    return step;
  }

 private:
  bool checksum_first_;
};

}  // namespace

void register_crc32c_device_codec(const CodecRegistry& registry) {
  auto make = [](const std::shared_ptr<const Codec>& host) -> std::shared_ptr<const DeviceCodec> {
    return std::make_shared<Crc32cDevice>(crc32c_codec_checksum_first(*host));
  };
  registry.add_device("crc32c", make);
  registry.add_device("numcodecs.crc32c", make);
}

}  // namespace zarrkit::gpu
