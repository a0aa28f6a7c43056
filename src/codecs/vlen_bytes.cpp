// The "vlen-bytes" codec (array->bytes) for the variable-length `bytes` data type:
// numcodecs' VLenBytes framing (vlen_support.h) of raw bytes. Registered as v3 "vlen-bytes"
// and as the v2 object codec (first filter of "|O" arrays) "vlen-bytes".
#include "codecs/register.h"
#include "codecs/vlen_support.h"

namespace zarrkit {

void register_vlen_bytes_codec(CodecRegistry& registry) {
  auto make = [](const nlohmann::json& config, const CodecContext&) {
    return vlen_support::make_vlen_codec(config, /*utf8=*/false);
  };
  registry.add_v3("vlen-bytes", make);
  registry.add_v2("vlen-bytes", make);
}

}  // namespace zarrkit
