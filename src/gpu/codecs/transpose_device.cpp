// The device half of "transpose": nothing runs; the scatter reads each decoded chunk with
// its axes permuted (strides follow the stored order).
#include "gpu/codecs/register.h"
#include "gpu/device_codec.h"

namespace zarrkit::gpu {
namespace {

class TransposeDevice final : public DeviceArrayCodec {
 public:
  explicit TransposeDevice(std::shared_ptr<const ArrayToArrayCodec> host) : host_(std::move(host)) {}

  bool fold(const ChunkSpec& decoded, StoredLayout& layout) const override {
    // Encoded axis i is decoded axis order[i]: decoded axis d lies where encoded axis
    // inverse[d] does.
    const std::optional<std::vector<std::size_t>> order_of = host_->axis_order(decoded.shape.size());
    if (!order_of || order_of->size() != layout.axis_of.size()) return false;
    const std::vector<std::size_t>& order = *order_of;
    std::vector<std::size_t> inverse(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) inverse[order[i]] = i;
    std::vector<std::size_t> axis_of(order.size());
    for (std::size_t d = 0; d < order.size(); ++d) axis_of[d] = layout.axis_of[inverse[d]];
    layout.axis_of = std::move(axis_of);
    return true;
  }

 private:
  std::shared_ptr<const ArrayToArrayCodec> host_;
};

}  // namespace

void register_transpose_device_codec(const CodecRegistry& registry) {
  registry.add_device("transpose", [](const std::shared_ptr<const Codec>& host) -> std::shared_ptr<const DeviceCodec> {
    auto transpose = std::dynamic_pointer_cast<const ArrayToArrayCodec>(host);
    if (!transpose) return nullptr;
    return std::make_shared<TransposeDevice>(std::move(transpose));
  });
}

}  // namespace zarrkit::gpu
