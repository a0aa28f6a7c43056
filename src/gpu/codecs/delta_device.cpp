// The device half of numcodecs.delta (delta_device.h): integer chunks whose differences are
// stored in the same type decode on the device; others (float, or another "astype") on the
// host.
#include "gpu/codecs/delta_device.h"

#include <limits>

#include "codecs/delta.h"
#include "gpu/codecs/register.h"
#include "gpu/cuda_check.h"
#include "gpu/device_codec.h"
#include "zarrkit/error.h"

namespace zarrkit::gpu {
namespace {

bool is_integer(const DataType& t) { return t.kind() == DataTypeKind::kInt || t.kind() == DataTypeKind::kUInt; }

class DeltaWork final : public BatchWork {
 public:
  struct Entry {
    std::uint32_t chunk;
    ChunkBytes where;
    std::uint64_t count;
    std::uint32_t width;
  };
  void add(const Entry& e) { entries_.push_back(e); }

  Phase phase() const override { return kArray; }
  bool empty() const override { return entries_.empty(); }
  void clear() override { entries_.clear(); }
  std::unique_ptr<BatchWork> make_empty() const override { return std::make_unique<DeltaWork>(); }
  void absorb(BatchWork& other) override {
    auto& o = static_cast<DeltaWork&>(other);
    entries_.insert(entries_.end(), o.entries_.begin(), o.entries_.end());
    o.clear();
  }
  void write_tables(const BatchAddresses& a, TableWriter& tables) override {
    if (entries_.size() > std::numeric_limits<std::uint32_t>::max()) {
      fail_resource("a batch needs more delta passes than one launch takes");
    }
    std::vector<DeltaJob> jobs;
    jobs.reserve(entries_.size());
    for (const Entry& e : entries_) jobs.push_back({a.address(e.chunk, e.where), e.count, e.chunk, e.width});
    at_jobs_ = tables.append(jobs);
  }
  void launch(const BatchAddresses& a, const std::byte* tables) override {
    check_cuda(launch_delta_running_sums(reinterpret_cast<const DeltaJob*>(tables + at_jobs_),
                                         static_cast<std::uint32_t>(entries_.size()), a.status, a.stream),
               "launching the delta kernel");
  }

 private:
  std::vector<Entry> entries_;
  std::uint64_t at_jobs_ = 0;
};

class DeltaDevice final : public DeviceArrayCodec {
 public:
  explicit DeltaDevice(DeltaCodecTypes types) : types_(types) {}

  void load_kernels() const override { load_delta_kernels(); }

  bool passes_over(const ChunkSpec& decoded) const override {
    const std::size_t width = types_.dtype.size();
    return is_integer(types_.dtype) && types_.astype.kind() == types_.dtype.kind() && types_.astype.size() == width &&
           decoded.dtype.size() == width && (width == 1 || width == 2 || width == 4 || width == 8);
  }

  bool plan_pass(std::uint32_t chunk, const ChunkBytes& where, const ChunkSpec& decoded,
                 BatchWorks& works) const override {
    const std::uint32_t width = static_cast<std::uint32_t>(decoded.dtype.size());
    // Chunks start 64-byte aligned on the device; the elements must be aligned too.
    if (where.offset % width != 0) return false;
    works.get<DeltaWork>().add({chunk, where, where.size / width, width});
    return true;
  }

 private:
  DeltaCodecTypes types_;
};

}  // namespace

void register_delta_device_codec(const CodecRegistry& registry) {
  registry.add_device("numcodecs.delta", [](const std::shared_ptr<const Codec>& host) -> std::shared_ptr<const DeviceCodec> {
    return std::make_shared<DeltaDevice>(delta_codec_types(*host));
  });
}

}  // namespace zarrkit::gpu
