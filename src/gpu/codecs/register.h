// The device halves zarrkit ships, one registration function per file of src/gpu/codecs/.
// Each registers under the same names as the codec's host half (codecs/register.h).
#pragma once

#include "zarrkit/codec_registry.h"

namespace zarrkit::gpu {

void register_bytes_device_codec(const CodecRegistry& registry);      // "bytes"
void register_transpose_device_codec(const CodecRegistry& registry);  // "transpose"
void register_crc32c_device_codec(const CodecRegistry& registry);     // "crc32c", "numcodecs.crc32c"
void register_blosc_device_codec(const CodecRegistry& registry);      // "blosc", "numcodecs.blosc"
void register_lz4_device_codec(const CodecRegistry& registry);        // "numcodecs.lz4"
void register_deflate_device_codecs(const CodecRegistry& registry);   // "gzip", "numcodecs.gzip" (or nvCOMP's), "numcodecs.zlib"
void register_zstd_device_codec(const CodecRegistry& registry);       // "zstd", "numcodecs.zstd" (or nvCOMP's)
void register_delta_device_codec(const CodecRegistry& registry);      // "numcodecs.delta" (integers)

}  // namespace zarrkit::gpu
