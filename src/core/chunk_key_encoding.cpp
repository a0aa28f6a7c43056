// Chunk key encodings (v3 "default" and "v2"; SPEC-NOTES rules 15 and 16).
#include <string>

#include "core/metadata_util.h"
#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {

std::string ChunkKeyEncoding::encode(std::span<const std::uint64_t> chunk_index) const {
  std::string key;
  if (kind == Kind::kDefault) {
    key = "c";
    for (auto i : chunk_index) {
      key += separator;
      key += std::to_string(i);
    }
    return key;
  }
  if (chunk_index.empty()) return "0";  // v2: a 0-d array has the single chunk "0"
  for (std::size_t d = 0; d < chunk_index.size(); ++d) {
    if (d > 0) key += separator;
    key += std::to_string(chunk_index[d]);
  }
  return key;
}

nlohmann::json ChunkKeyEncoding::to_json() const {
  return {{"name", kind == Kind::kDefault ? "default" : "v2"},
          {"configuration", {{"separator", std::string(1, separator)}}}};
}

namespace metadata_detail {

ChunkKeyEncoding parse_chunk_key_encoding_v3(const json& value) {
  constexpr std::string_view kWhat = "chunk_key_encoding";
  const Extension extension = parse_extension(value, kWhat);
  require_must_understand(extension, kWhat);
  ChunkKeyEncoding encoding;
  if (extension.name == "default") {
    encoding.kind = ChunkKeyEncoding::Kind::kDefault;
    encoding.separator = '/';
  } else if (extension.name == "v2") {
    encoding.kind = ChunkKeyEncoding::Kind::kV2;
    encoding.separator = '.';
  } else {
    fail_unsupported("unsupported chunk_key_encoding \"{}\"", extension.name);
  }
  check_configuration_keys(extension.configuration, {"separator"}, kWhat);
  if (const json* sep = find_member(extension.configuration, "separator")) {
    if (!sep->is_string() || (*sep != "/" && *sep != ".")) {
      fail_invalid("chunk_key_encoding \"{}\": separator must be \"/\" or \".\", got {}", extension.name, describe(*sep));
    }
    encoding.separator = sep->get<std::string>()[0];
  }
  return encoding;
}

}  // namespace metadata_detail
}  // namespace zarrkit
