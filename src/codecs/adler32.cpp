// The numcodecs "adler32" codec (bytes->bytes): zlib's Adler-32 of the data as 4 bytes,
// little-endian, at the start (numcodecs' default) or, with "location": "end", after the
// data. Registered as v2 "adler32" and v3 "numcodecs.adler32".
#include <zlib.h>

#include "codecs/checksum32_support.h"
#include "codecs/register.h"

namespace zarrkit {
namespace {

std::uint32_t adler32_of(ByteView data) {
  const uLong initial = adler32_z(0L, Z_NULL, 0);
  return static_cast<std::uint32_t>(
      adler32_z(initial, reinterpret_cast<const Bytef*>(data.data()), static_cast<z_size_t>(data.size())));
}

const checksum32_support::ChecksumKind kAdler32{"adler32", adler32_of, checksum32_support::Location::kStart, true};

}  // namespace

void register_adler32_codec(CodecRegistry& registry) {
  checksum32_support::register_checksum_codec(registry, kAdler32);
}

}  // namespace zarrkit
