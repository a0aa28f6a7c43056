// The crc32c codec (bytes->bytes). Implementation in progress; registration is in place so that
// builtin.cpp links.
#include "codecs/register.h"
#include "zarrkit/codec_registry.h"

namespace zarrkit {

void register_crc32c_codec(CodecRegistry& registry) { (void)registry; }

}  // namespace zarrkit
