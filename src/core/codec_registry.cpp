#include "zarrkit/codec_registry.h"

#include <mutex>
#include <utility>

#include "zarrkit/error.h"

namespace zarrkit {
namespace {

// The parts of one v3 codec entry, after checking its shape.
struct V3Entry {
  std::string name;
  nlohmann::json configuration = nlohmann::json::object();
  bool must_understand = true;
};

V3Entry parse_v3_entry(const nlohmann::json& entry) {
  V3Entry parsed;
  if (entry.is_string()) {  // v3.1 short-hand: "crc32c"
    parsed.name = entry.get<std::string>();
  } else if (entry.is_object()) {
    for (const auto& [key, value] : entry.items()) {
      if (key == "name") {
        if (!value.is_string()) fail_invalid("codec \"name\" must be a string, got {}", value.dump());
        parsed.name = value.get<std::string>();
      } else if (key == "configuration") {
        if (!value.is_object()) {
          fail_invalid("codec \"configuration\" must be an object, got {}", value.dump());
        }
        parsed.configuration = value;
      } else if (key == "must_understand") {
        if (!value.is_boolean()) {
          fail_invalid("codec \"must_understand\" must be true or false, got {}", value.dump());
        }
        parsed.must_understand = value.get<bool>();
      } else {
        fail_invalid("codec entry has unexpected key \"{}\" (allowed: name, configuration, must_understand)",
                     key);
      }
    }
    if (!entry.contains("name")) fail_invalid("codec entry has no \"name\": {}", entry.dump());
  } else {
    fail_invalid("a codec must be a name or an object with \"name\", got {}", entry.dump());
  }
  if (parsed.name.empty()) fail_invalid("codec name must not be empty");
  return parsed;
}

}  // namespace

void CodecRegistry::add_v3(std::string name, CodecFactory factory) {
  v3_.insert_or_assign(std::move(name), std::move(factory));  // a later registration wins
}

void CodecRegistry::add_v2(std::string id, CodecFactory factory) {
  v2_.insert_or_assign(std::move(id), std::move(factory));
}

std::shared_ptr<const Codec> CodecRegistry::make_v3(const nlohmann::json& entry,
                                                    const CodecContext& context) const {
  V3Entry parsed = parse_v3_entry(entry);
  // Exact lookup only: a URL-style name works when it was registered under that name.
  auto it = v3_.find(parsed.name);
  if (it == v3_.end()) {
    if (!parsed.must_understand) return nullptr;  // the spec lets readers skip it
    fail_unsupported("unsupported codec '{}'", parsed.name);
  }
  auto codec = it->second(parsed.configuration, context);
  if (!codec) throw InternalError(fmt::format("the factory of codec '{}' returned nothing", parsed.name));
  return codec;
}

std::shared_ptr<const Codec> CodecRegistry::make_v2(const nlohmann::json& entry,
                                                    const CodecContext& context) const {
  if (!entry.is_object()) fail_invalid("a v2 codec must be an object with \"id\", got {}", entry.dump());
  auto id_it = entry.find("id");
  if (id_it == entry.end()) fail_invalid("v2 codec has no \"id\": {}", entry.dump());
  if (!id_it->is_string()) fail_invalid("v2 codec \"id\" must be a string, got {}", id_it->dump());
  const auto& id = id_it->get_ref<const std::string&>();
  auto it = v2_.find(id);
  if (it == v2_.end()) fail_unsupported("unsupported v2 codec '{}' (numcodecs id)", id);
  auto codec = it->second(entry, context);
  if (!codec) throw InternalError(fmt::format("the factory of v2 codec '{}' returned nothing", id));
  return codec;
}

void CodecRegistry::add_device(std::string name, DeviceCodecFactory factory) const {
  std::unique_lock lock(device_->mutex);
  device_->factories.insert_or_assign(std::move(name), std::move(factory));
}

std::shared_ptr<const DeviceCodec> CodecRegistry::make_device(const std::shared_ptr<const Codec>& codec) const {
  DeviceCodecFactory factory;
  {
    std::shared_lock lock(device_->mutex);
    const auto it = device_->factories.find(codec->name());
    if (it == device_->factories.end()) return nullptr;
    factory = it->second;
  }
  return factory(codec);
}

bool CodecRegistry::has_v3(std::string_view name) const { return v3_.find(name) != v3_.end(); }
bool CodecRegistry::has_v2(std::string_view id) const { return v2_.find(id) != v2_.end(); }

}  // namespace zarrkit
