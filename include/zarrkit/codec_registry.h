// The codec registry: v3 names and v2 numcodecs ids -> factories. Codecs are registered
// explicitly (register_builtin_codecs calls each codec file's register function), never
// through static initialisers.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
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

// The device half of a codec: its batched GPU implementation (src/gpu/device_codec.h
// defines the interfaces the device reader and writer use; this base only lets the
// registry hold them without knowing CUDA).
class DeviceCodec {
 public:
  virtual ~DeviceCodec() = default;
};
// Makes the device half of `host`, a codec this registry built under the name the factory
// was registered with; null when that codec's configuration has no device implementation.
using DeviceCodecFactory = std::function<std::shared_ptr<const DeviceCodec>(const std::shared_ptr<const Codec>& host)>;

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

  // Device halves, registered under the codec's own v3 name(s) beside the host half (the
  // GPU module does it when installed: install_gpu_support). May be called while other
  // threads use the registry.
  void add_device(std::string name, DeviceCodecFactory factory) const;
  // The device half of `codec` (looked up by its name), or null when none is registered or
  // the factory declines this configuration.
  std::shared_ptr<const DeviceCodec> make_device(const std::shared_ptr<const Codec>& codec) const;

  // The registry with every codec zarrkit ships.
  static const CodecRegistry& builtin();

 private:
  std::map<std::string, CodecFactory, std::less<>> v3_;
  std::map<std::string, CodecFactory, std::less<>> v2_;
  // Filled after construction (the GPU module registers into the built-in registry), so
  // guarded; the host tables above never change once registration is over and need no lock.
  struct DeviceTable {
    std::shared_mutex mutex;
    std::map<std::string, DeviceCodecFactory, std::less<>> factories;
  };
  std::unique_ptr<DeviceTable> device_ = std::make_unique<DeviceTable>();
};

// Registers every built-in codec (each codec file exposes a register_<name>_codec function).
void register_builtin_codecs(CodecRegistry& registry);

}  // namespace zarrkit
