// The codec registry: v3 names and v2 numcodecs ids -> factories. Codecs are registered
// explicitly (register_builtin_codecs calls each codec file's register function), never
// through static initialisers.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "zarrkit/codec.h"

namespace zarrkit {

// What a factory may need to validate its configuration and pick defaults.
struct CodecContext {
  DataType dtype;       // the array's data type
  int zarr_format = 3;  // 2 when building from .zarray compressor/filters
};

// v3 factories get the "configuration" object ({} if absent). v2 factories get the whole
// numcodecs object, "id" included.
using CodecFactory = std::function<std::shared_ptr<const Codec>(const nlohmann::json& configuration,
                                                                const CodecContext& context)>;

class CodecRegistry {
 public:
  void add_v3(std::string name, CodecFactory factory);
  void add_v2(std::string id, CodecFactory factory);

  // Builds a codec from a v3 codec entry: a bare name ("crc32c") or an object with "name"
  // and optional "configuration". Unknown codec: UnsupportedError("unsupported codec X"),
  // unless the entry says "must_understand": false, in which case nullptr is returned and
  // the codec is skipped.
  std::shared_ptr<const Codec> make_v3(const nlohmann::json& entry, const CodecContext& context) const;
  // Builds a codec from a v2 numcodecs object ({"id": ..., ...}).
  std::shared_ptr<const Codec> make_v2(const nlohmann::json& entry, const CodecContext& context) const;

  bool has_v3(std::string_view name) const;
  bool has_v2(std::string_view id) const;

  // The registry with every codec zarrkit ships.
  static const CodecRegistry& builtin();

 private:
  std::map<std::string, CodecFactory, std::less<>> v3_;
  std::map<std::string, CodecFactory, std::less<>> v2_;
};

// Registers every built-in codec (each codec file exposes a register_<name>_codec function).
void register_builtin_codecs(CodecRegistry& registry);

}  // namespace zarrkit
