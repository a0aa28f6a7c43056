#include "zarrkit/codec.h"

namespace zarrkit {

nlohmann::json codec_json(std::string_view name, nlohmann::json configuration) {
  nlohmann::json out = nlohmann::json::object();
  out["name"] = std::string(name);
  // zarr-python writes {"name": "crc32c"} with no configuration when there is nothing to say,
  // but refuses numcodecs.* codecs without one, so those always carry it, empty or not.
  const bool numcodecs = name.starts_with("numcodecs.");
  if (configuration.is_object() && (numcodecs || !configuration.empty())) {
    out["configuration"] = std::move(configuration);
  }
  return out;
}

}  // namespace zarrkit
