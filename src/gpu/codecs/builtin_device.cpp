// The device halves zarrkit ships. Registration is explicit, as for the host halves.
#include "gpu/codecs/register.h"
#include "gpu/device_codec.h"

namespace zarrkit::gpu {

void register_builtin_device_codecs(const CodecRegistry& registry) {
  register_bytes_device_codec(registry);
  register_transpose_device_codec(registry);
  register_crc32c_device_codec(registry);
  register_blosc_device_codec(registry);
  register_lz4_device_codec(registry);
  register_deflate_device_codecs(registry);
  register_zstd_device_codec(registry);
  register_delta_device_codec(registry);
}

}  // namespace zarrkit::gpu
