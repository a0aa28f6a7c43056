// One registration function per codec file, called by register_builtin_codecs (builtin.cpp).
// Each registers the codec's v3 name(s) and, where numcodecs has one, its v2 id.
#pragma once

namespace zarrkit {

class CodecRegistry;

void register_bytes_codec(CodecRegistry& registry);      // v3 "bytes"
void register_sharding_codec(CodecRegistry& registry);   // v3 "sharding_indexed" (inner chains from `registry`)
void register_transpose_codec(CodecRegistry& registry);  // v3 "transpose"
void register_blosc_codec(CodecRegistry& registry);      // v3 "blosc", v2 "blosc"
void register_gzip_codec(CodecRegistry& registry);       // v3 "gzip", "numcodecs.gzip"; v2 "gzip"
void register_zlib_codec(CodecRegistry& registry);       // v3 "numcodecs.zlib"; v2 "zlib"
void register_zstd_codec(CodecRegistry& registry);       // v3 "zstd", "numcodecs.zstd"; v2 "zstd"
void register_lz4_codec(CodecRegistry& registry);        // v3 "numcodecs.lz4"; v2 "lz4"
void register_bz2_codec(CodecRegistry& registry);        // v3 "numcodecs.bz2"; v2 "bz2"
void register_lzma_codec(CodecRegistry& registry);       // v3 "numcodecs.lzma"; v2 "lzma"
void register_crc32c_codec(CodecRegistry& registry);     // v3 "crc32c", "numcodecs.crc32c"
void register_delta_codec(CodecRegistry& registry);      // v3 "numcodecs.delta"; v2 "delta"
void register_shuffle_codec(CodecRegistry& registry);    // v3 "numcodecs.shuffle"; v2 "shuffle"
void register_adler32_codec(CodecRegistry& registry);    // v3 "numcodecs.adler32"; v2 "adler32"
void register_crc32_codec(CodecRegistry& registry);      // v3 "numcodecs.crc32"; v2 "crc32"
void register_fletcher32_codec(CodecRegistry& registry); // v3 "numcodecs.fletcher32"; v2 "fletcher32"
void register_fixedscaleoffset_codec(CodecRegistry& registry);  // v3 "numcodecs.fixedscaleoffset"; v2 "fixedscaleoffset"
void register_quantize_codec(CodecRegistry& registry);   // v3 "numcodecs.quantize"; v2 "quantize"
void register_bitround_codec(CodecRegistry& registry);   // v3 "numcodecs.bitround"; v2 "bitround"
void register_packbits_codec(CodecRegistry& registry);   // v3 "numcodecs.packbits"; v2 "packbits"
void register_astype_codec(CodecRegistry& registry);     // v3 "numcodecs.astype"; v2 "astype"
void register_scale_offset_codec(CodecRegistry& registry);  // v3 "scale_offset"
void register_cast_value_codec(CodecRegistry& registry);    // v3 "cast_value"
void register_vlen_utf8_codec(CodecRegistry& registry);  // v3 "vlen-utf8"; v2 object codec "vlen-utf8"
void register_vlen_bytes_codec(CodecRegistry& registry); // v3 "vlen-bytes"; v2 object codec "vlen-bytes"

}  // namespace zarrkit
