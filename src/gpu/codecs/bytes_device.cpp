// The device half of "bytes": the stored elements in C order of the array->bytes spec; a
// big-endian order is reversed element by element while the scatter places them.
// Sub-byte types (int4, float4_e2m1fn, ...) are left to the host's bytes codec.
#include "gpu/codecs/register.h"
#include "gpu/device_codec.h"

namespace zarrkit::gpu {
namespace {

class BytesDevice final : public DeviceArrayCodec {
 public:
  explicit BytesDevice(std::optional<Endian> endian) : endian_(endian) {}

  bool fold(const ChunkSpec& decoded, StoredLayout& layout) const override {
    // Sub-byte types have their stored high bits cleared, which the scatter does not do.
    if (decoded.dtype.is_sub_byte()) return false;
    if (endian_.value_or(Endian::kLittle) == native_endian() || decoded.dtype.swap_unit() <= 1) return true;
    // Structured types swap field by field, which the scatter does not do.
    if (decoded.dtype.kind() == DataTypeKind::kStructured) return false;
    layout.swap_unit = static_cast<std::uint32_t>(decoded.dtype.swap_unit());
    return true;
  }

 private:
  std::optional<Endian> endian_;
};

}  // namespace

void register_bytes_device_codec(const CodecRegistry& registry) {
  registry.add_device("bytes", [](const std::shared_ptr<const Codec>& host) -> std::shared_ptr<const DeviceCodec> {
    const auto* bytes = dynamic_cast<const ArrayToBytesCodec*>(host.get());
    if (bytes == nullptr) return nullptr;
    return std::make_shared<BytesDevice>(bytes->element_byte_order());
  });
}

}  // namespace zarrkit::gpu
