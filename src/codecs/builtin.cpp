// The registry of every codec zarrkit ships. Registration is explicit: each codec file
// exposes one function, called here, so nothing depends on static initialisation order.
#include "codecs/register.h"
#include "zarrkit/codec_registry.h"

namespace zarrkit {

void register_builtin_codecs(CodecRegistry& registry) {
  // array->array
  register_transpose_codec(registry);
  register_delta_codec(registry);
  register_fixedscaleoffset_codec(registry);
  register_quantize_codec(registry);
  register_bitround_codec(registry);
  register_packbits_codec(registry);
  register_astype_codec(registry);
  register_scale_offset_codec(registry);
  register_cast_value_codec(registry);
  // array->bytes
  register_bytes_codec(registry);
  register_sharding_codec(registry);  // builds its inner chains from this same registry
  register_vlen_utf8_codec(registry);
  register_vlen_bytes_codec(registry);
  // bytes->bytes
  register_blosc_codec(registry);
  register_gzip_codec(registry);
  register_zlib_codec(registry);
  register_zstd_codec(registry);
  register_lz4_codec(registry);
  register_bz2_codec(registry);
  register_lzma_codec(registry);
  register_crc32c_codec(registry);
  register_shuffle_codec(registry);
  register_adler32_codec(registry);
  register_crc32_codec(registry);
  register_fletcher32_codec(registry);
}

const CodecRegistry& CodecRegistry::builtin() {
  // Built in place on first use (C++ makes that thread-safe) and never moved: factories
  // such as sharding's keep the registry's address to build their inner chains.
  struct Builtin {
    CodecRegistry registry;
    Builtin() { register_builtin_codecs(registry); }
  };
  static const Builtin instance;
  return instance.registry;
}

}  // namespace zarrkit
