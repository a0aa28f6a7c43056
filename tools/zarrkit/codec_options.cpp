#include "zarrkit/codec_options.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include <fmt/ranges.h>

#include "zarrkit/error.h"

namespace zarrkit::cli {
namespace {

// The keys each codec accepts.
const std::map<std::string, std::vector<std::string>, std::less<>>& known_codecs() {
  static const std::map<std::string, std::vector<std::string>, std::less<>> codecs = {
      {"zstd", {"level", "checksum"}},
      {"gzip", {"level"}},
      {"zlib", {"level"}},
      {"bz2", {"level"}},
      {"lz4", {"acceleration"}},
      {"lzma", {"preset"}},
      {"blosc", {"cname", "clevel", "shuffle", "blocksize"}},
      {"crc32c", {}},
      {"none", {}},
  };
  return codecs;
}

std::vector<std::string> names_of(const std::map<std::string, std::vector<std::string>, std::less<>>& m) {
  std::vector<std::string> names;
  for (const auto& [name, keys] : m) names.push_back(name);
  return names;
}

std::int64_t int_param(const CodecOption& o, const std::string& key, std::int64_t fallback, std::int64_t lo,
                       std::int64_t hi) {
  auto it = o.parameters.find(key);
  if (it == o.parameters.end()) return fallback;
  const std::string& text = it->second;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    fail_invalid("--codec {}: {}={} is not an integer", o.name, key, text);
  }
  if (value < lo || value > hi) fail_invalid("--codec {}: {}={} is out of range [{}, {}]", o.name, key, value, lo, hi);
  return value;
}

bool bool_param(const CodecOption& o, const std::string& key) {
  auto it = o.parameters.find(key);
  if (it == o.parameters.end()) return false;
  if (it->second == "true" || it->second == "1") return true;
  if (it->second == "false" || it->second == "0") return false;
  fail_invalid("--codec {}: {}={} must be true or false", o.name, key, it->second);
}

std::string choice_param(const CodecOption& o, const std::string& key, const std::string& fallback,
                         const std::vector<std::string>& choices) {
  auto it = o.parameters.find(key);
  if (it == o.parameters.end()) return fallback;
  if (std::find(choices.begin(), choices.end(), it->second) == choices.end()) {
    fail_invalid("--codec {}: {}={} is not one of {}", o.name, key, it->second, fmt::join(choices, ", "));
  }
  return it->second;
}

struct BloscSettings {
  std::string cname;
  std::int64_t clevel;
  std::string shuffle;
  std::int64_t blocksize;
};

BloscSettings blosc_settings(const CodecOption& o, const DataType& dtype) {
  // zarr-python's default: bitshuffle for 1-byte items, byte shuffle otherwise.
  const std::string default_shuffle = dtype.size() == 1 ? "bitshuffle" : "shuffle";
  return {choice_param(o, "cname", "lz4", {"blosclz", "lz4", "lz4hc", "zlib", "zstd"}),
          int_param(o, "clevel", 5, 0, 9),
          choice_param(o, "shuffle", default_shuffle, {"noshuffle", "shuffle", "bitshuffle"}),
          int_param(o, "blocksize", 0, 0, std::numeric_limits<std::int32_t>::max())};
}

constexpr std::int64_t kIntMax = std::numeric_limits<std::int32_t>::max();

}  // namespace

CodecOption parse_codec_option(std::string_view spec) {
  CodecOption option;
  const auto colon = spec.find(':');
  option.name = std::string(spec.substr(0, colon));
  auto known = known_codecs().find(option.name);
  if (known == known_codecs().end()) {
    fail_invalid("--codec {}: unknown codec '{}' (known: {})", spec, option.name,
                 fmt::join(names_of(known_codecs()), ", "));
  }
  if (colon == std::string_view::npos) return option;
  std::string_view rest = spec.substr(colon + 1);
  if (rest.empty()) fail_invalid("--codec {}: nothing after ':' (expected key=value,...)", spec);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
      fail_invalid("--codec {}: '{}' is not key=value", spec, item);
    }
    std::string key(item.substr(0, eq));
    const auto& keys = known->second;
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      fail_invalid("--codec {}: codec '{}' has no parameter '{}' (it has: {})", spec, option.name, key,
                   keys.empty() ? "none" : fmt::format("{}", fmt::join(keys, ", ")));
    }
    if (!option.parameters.emplace(key, std::string(item.substr(eq + 1))).second) {
      fail_invalid("--codec {}: '{}' is given twice", spec, key);
    }
  }
  return option;
}

nlohmann::json codec_option_to_v3(const CodecOption& o, const DataType& dtype) {
  using nlohmann::json;
  const auto& n = o.name;
  if (n == "none") return nullptr;
  if (n == "crc32c") return json{{"name", "crc32c"}};
  if (n == "zstd") {
    json config{{"level", int_param(o, "level", 0, -131072, 22)}};
    if (bool_param(o, "checksum")) config["checksum"] = true;  // left out when false
    return json{{"name", "zstd"}, {"configuration", config}};
  }
  if (n == "gzip") return json{{"name", "gzip"}, {"configuration", {{"level", int_param(o, "level", 5, 0, 9)}}}};
  if (n == "zlib") {
    return json{{"name", "numcodecs.zlib"}, {"configuration", {{"level", int_param(o, "level", 1, 0, 9)}}}};
  }
  if (n == "bz2") {
    return json{{"name", "numcodecs.bz2"}, {"configuration", {{"level", int_param(o, "level", 1, 1, 9)}}}};
  }
  if (n == "lz4") {
    return json{{"name", "numcodecs.lz4"},
                {"configuration", {{"acceleration", int_param(o, "acceleration", 1, 1, kIntMax)}}}};
  }
  if (n == "lzma") {
    json config = json::object();
    if (o.parameters.count("preset")) config["preset"] = int_param(o, "preset", 6, 0, 9);
    return json{{"name", "numcodecs.lzma"}, {"configuration", config}};
  }
  if (n == "blosc") {
    auto b = blosc_settings(o, dtype);
    return json{{"name", "blosc"},
                {"configuration",
                 {{"typesize", std::max<std::size_t>(dtype.size(), 1)},
                  {"cname", b.cname},
                  {"clevel", b.clevel},
                  {"shuffle", b.shuffle},
                  {"blocksize", b.blocksize}}}};
  }
  throw InternalError(fmt::format("codec option '{}' has no v3 form", n));
}

nlohmann::json codec_option_to_v2(const CodecOption& o, const DataType& dtype) {
  using nlohmann::json;
  const auto& n = o.name;
  if (n == "none") return nullptr;
  if (n == "crc32c") fail_invalid("--codec crc32c: zarr v2 has no crc32c compressor (use --zarr-format 3)");
  if (n == "zstd") {
    json c{{"id", "zstd"}, {"level", int_param(o, "level", 0, -131072, 22)}};
    if (bool_param(o, "checksum")) c["checksum"] = true;
    return c;
  }
  if (n == "gzip") return json{{"id", "gzip"}, {"level", int_param(o, "level", 5, 0, 9)}};
  if (n == "zlib") return json{{"id", "zlib"}, {"level", int_param(o, "level", 1, 0, 9)}};
  if (n == "bz2") return json{{"id", "bz2"}, {"level", int_param(o, "level", 1, 1, 9)}};
  if (n == "lz4") return json{{"id", "lz4"}, {"acceleration", int_param(o, "acceleration", 1, 1, kIntMax)}};
  if (n == "lzma") {
    json preset = o.parameters.count("preset") ? json(int_param(o, "preset", 6, 0, 9)) : json(nullptr);
    return json{{"id", "lzma"}, {"format", 1}, {"check", -1}, {"preset", preset}, {"filters", nullptr}};
  }
  if (n == "blosc") {
    auto b = blosc_settings(o, dtype);
    const int shuffle = b.shuffle == "noshuffle" ? 0 : b.shuffle == "shuffle" ? 1 : 2;
    return json{{"id", "blosc"}, {"cname", b.cname}, {"clevel", b.clevel}, {"shuffle", shuffle},
                {"blocksize", b.blocksize}};
  }
  throw InternalError(fmt::format("codec option '{}' has no v2 form", n));
}

nlohmann::json v3_bytes_codecs(const std::vector<std::string>& specs, const DataType& dtype) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& spec : specs) {
    CodecOption option = parse_codec_option(spec);
    if (option.name == "none" && specs.size() > 1) fail_invalid("--codec none cannot be combined with other codecs");
    nlohmann::json entry = codec_option_to_v3(option, dtype);
    if (!entry.is_null()) list.push_back(std::move(entry));
  }
  return list;
}

nlohmann::json v2_compressor(const std::vector<std::string>& specs, const DataType& dtype) {
  if (specs.size() > 1) {
    fail_invalid("zarr v2 allows one compressor, got {} --codec options ({})", specs.size(), fmt::join(specs, " "));
  }
  if (specs.empty()) return nullptr;
  return codec_option_to_v2(parse_codec_option(specs[0]), dtype);
}

}  // namespace zarrkit::cli
