// The "vlen-utf8" codec (array->bytes) for the `string` data type: numcodecs' VLenUTF8
// framing (vlen_support.h) of UTF-8 text, checked to be valid UTF-8 both ways. Registered
// as v3 "vlen-utf8" and as the v2 object codec (first filter of "|O" arrays) "vlen-utf8".
#include "codecs/register.h"
#include "codecs/vlen_support.h"

namespace zarrkit {

void register_vlen_utf8_codec(CodecRegistry& registry) {
  auto make = [](const nlohmann::json& config, const CodecContext&) {
    return vlen_support::make_vlen_codec(config, /*utf8=*/true);
  };
  registry.add_v3("vlen-utf8", make);
  registry.add_v2("vlen-utf8", make);
}

}  // namespace zarrkit
