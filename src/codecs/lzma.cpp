// The lzma codec (bytes->bytes), as numcodecs' LZMA (v2 id "lzma", v3 "numcodecs.lzma")
// uses Python's lzma module: {"format", "check", "preset", "filters"} with the meanings of
// lzma.compress. Formats: 1 = xz (the default), 2 = lzma-alone, 3 = raw (needs "filters"),
// 0 = auto-detect (readable only: Python cannot write it).
//
// Filters are the dictionaries of Python's lzma module: {"id": <filter id>, options...}.
// Supported: LZMA1, LZMA2 (preset, dict_size, lc, lp, pb, mode, nice_len, mf, depth),
// delta (dist) and the BCJ filters (start_offset). Others are UnsupportedError.
//
// Decoder memory is capped (kMinimumMemoryLimit, or the output bound if larger): every
// preset fits; a stream asking for a larger dictionary is ResourceExhaustedError.
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include <lzma.h>

#include "codecs/compressor_support.h"
#include "codecs/register.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using compressor_support::BoundedOutput;
using compressor_support::ConfigForm;

enum class Format : int { kAuto = 0, kXz = 1, kAlone = 2, kRaw = 3 };

constexpr std::uint64_t kMinimumMemoryLimit = std::uint64_t{128} << 20;  // preset 9e needs 65 MiB
constexpr std::uint32_t kDefaultPreset = 6;                             // LZMA_PRESET_DEFAULT
constexpr std::uint32_t kMaxDictionary = std::uint32_t{1536} << 20;     // liblzma's encoder limit

// ---- Configuration -------------------------------------------------------------------------

// One filter of a chain, with room for whichever options its id takes.
struct FilterSpec {
  lzma_vli id = LZMA_VLI_UNKNOWN;
  lzma_options_lzma lzma{};
  lzma_options_delta delta{};
  lzma_options_bcj bcj{};
};

// The lzma_filter array liblzma wants, pointing into a private copy of the specs (liblzma
// takes non-const option pointers, and the codec is shared between threads).
class FilterChain {
 public:
  explicit FilterChain(const std::vector<FilterSpec>& specs) : specs_(specs) {
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      FilterSpec& s = specs_[i];
      void* options = nullptr;
      if (s.id == LZMA_FILTER_LZMA1 || s.id == LZMA_FILTER_LZMA2) {
        options = &s.lzma;
      } else if (s.id == LZMA_FILTER_DELTA) {
        options = &s.delta;
      } else {
        options = &s.bcj;
      }
      filters_[i] = {s.id, options};
    }
    filters_[specs_.size()] = {LZMA_VLI_UNKNOWN, nullptr};
  }
  FilterChain(const FilterChain&) = delete;
  FilterChain& operator=(const FilterChain&) = delete;

  lzma_filter* get() { return filters_.data(); }

 private:
  std::vector<FilterSpec> specs_;
  std::array<lzma_filter, LZMA_FILTERS_MAX + 1> filters_{};
};

std::uint32_t parse_preset(const nlohmann::json& value, std::string_view what) {
  // Python's presets are 0-9, optionally or-ed with PRESET_EXTREME (2^31).
  if (value.is_number_integer()) {
    const bool negative = value.is_number_integer() && !value.is_number_unsigned() && value.get<std::int64_t>() < 0;
    if (!negative) {
      const auto raw = value.get<std::uint64_t>();
      const std::uint64_t level = raw & ~std::uint64_t{LZMA_PRESET_EXTREME};
      if (level <= 9) return static_cast<std::uint32_t>(raw);
    }
  }
  fail_invalid("lzma codec: {} must be an integer from 0 to 9, optionally plus 2^31 (extreme), got {}", what,
               value.dump());
}

// An unsigned option of a filter, checked to lie in [min, max].
std::uint32_t filter_option(const nlohmann::json& value, std::string_view key, std::uint32_t min, std::uint32_t max) {
  if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<std::int64_t>() < 0) ||
      value.get<std::uint64_t>() < min || value.get<std::uint64_t>() > max) {
    fail_invalid("lzma codec: filter option \"{}\" must be an integer from {} to {}, got {}", key, min, max,
                 value.dump());
  }
  return static_cast<std::uint32_t>(value.get<std::uint64_t>());
}

bool is_bcj(lzma_vli id) {
  return id == LZMA_FILTER_X86 || id == LZMA_FILTER_POWERPC || id == LZMA_FILTER_IA64 || id == LZMA_FILTER_ARM ||
         id == LZMA_FILTER_ARMTHUMB || id == LZMA_FILTER_SPARC || id == LZMA_FILTER_ARM64;
}

FilterSpec parse_filter(const nlohmann::json& filter) {
  if (!filter.is_object()) fail_invalid("lzma codec: each filter must be an object, got {}", filter.dump());
  auto id_it = filter.find("id");
  if (id_it == filter.end() || !id_it->is_number_unsigned()) {
    fail_invalid("lzma codec: a filter needs a numeric \"id\", got {}", filter.dump());
  }
  FilterSpec spec;
  spec.id = id_it->get<std::uint64_t>();
  if (spec.id == LZMA_FILTER_LZMA1 || spec.id == LZMA_FILTER_LZMA2) {
    // As Python does: start from the preset (default 6), then apply the other options.
    std::uint32_t preset = kDefaultPreset;
    if (auto it = filter.find("preset"); it != filter.end()) preset = parse_preset(*it, "filter option \"preset\"");
    if (lzma_lzma_preset(&spec.lzma, preset)) fail_invalid("lzma codec: liblzma rejects preset {}", preset);
    for (const auto& [key, value] : filter.items()) {
      if (key == "id" || key == "preset") continue;
      if (key == "dict_size") {
        spec.lzma.dict_size = filter_option(value, key, LZMA_DICT_SIZE_MIN, kMaxDictionary);
      } else if (key == "lc") {
        spec.lzma.lc = filter_option(value, key, 0, LZMA_LCLP_MAX);
      } else if (key == "lp") {
        spec.lzma.lp = filter_option(value, key, 0, LZMA_LCLP_MAX);
      } else if (key == "pb") {
        spec.lzma.pb = filter_option(value, key, 0, LZMA_PB_MAX);
      } else if (key == "mode") {
        spec.lzma.mode = static_cast<lzma_mode>(filter_option(value, key, LZMA_MODE_FAST, LZMA_MODE_NORMAL));
      } else if (key == "nice_len") {
        spec.lzma.nice_len = filter_option(value, key, 2, 273);
      } else if (key == "mf") {
        spec.lzma.mf = static_cast<lzma_match_finder>(filter_option(value, key, 0, 0xFF));
      } else if (key == "depth") {
        spec.lzma.depth = filter_option(value, key, 0, UINT32_MAX);
      } else {
        fail_invalid("lzma codec: unexpected option \"{}\" for an LZMA filter", key);
      }
    }
  } else if (spec.id == LZMA_FILTER_DELTA) {
    spec.delta.type = LZMA_DELTA_TYPE_BYTE;
    spec.delta.dist = 1;
    for (const auto& [key, value] : filter.items()) {
      if (key == "id") continue;
      if (key != "dist") fail_invalid("lzma codec: unexpected option \"{}\" for the delta filter", key);
      spec.delta.dist = filter_option(value, key, LZMA_DELTA_DIST_MIN, LZMA_DELTA_DIST_MAX);
    }
  } else if (is_bcj(spec.id)) {
    for (const auto& [key, value] : filter.items()) {
      if (key == "id") continue;
      if (key != "start_offset") fail_invalid("lzma codec: unexpected option \"{}\" for a BCJ filter", key);
      spec.bcj.start_offset = filter_option(value, key, 0, UINT32_MAX);
    }
  } else {
    fail_unsupported("lzma codec: filter id {} is not supported (LZMA1, LZMA2, delta and BCJ filters are)", spec.id);
  }
  return spec;
}

struct LzmaConfig {
  Format format = Format::kXz;
  int check = -1;                      // -1: the format's default (CRC-64 for xz)
  std::optional<std::uint32_t> preset;  // nullopt: Python's default (6), or the filters
  nlohmann::json filters_json;          // null, or the filters as given (written back as-is)
  std::vector<FilterSpec> filters;
};

LzmaConfig parse_config(const nlohmann::json& config, ConfigForm form) {
  compressor_support::check_keys(config, {"format", "check", "preset", "filters"}, "lzma", form, "lzma");
  LzmaConfig c;
  c.format = static_cast<Format>(compressor_support::optional_int(config, "format", 0, 3, "lzma").value_or(1));
  c.check = static_cast<int>(compressor_support::optional_int(config, "check", -1, LZMA_CHECK_ID_MAX, "lzma").value_or(-1));
  if (c.check != -1 && !lzma_check_is_supported(static_cast<lzma_check>(c.check))) {
    fail_invalid("lzma codec: \"check\" must be -1, 0 (none), 1 (CRC-32), 4 (CRC-64) or 10 (SHA-256), got {}", c.check);
  }
  if (c.format != Format::kXz && c.check != -1 && c.check != LZMA_CHECK_NONE) {
    fail_invalid("lzma codec: \"check\" {} needs format 1 (xz); only xz streams carry integrity checks", c.check);
  }
  if (auto it = config.find("preset"); it != config.end() && !it->is_null()) c.preset = parse_preset(*it, "\"preset\"");
  if (auto it = config.find("filters"); it != config.end() && !it->is_null()) {
    if (!it->is_array()) fail_invalid("lzma codec: \"filters\" must be a list or null, got {}", it->dump());
    if (it->empty() || it->size() > LZMA_FILTERS_MAX) {
      fail_invalid("lzma codec: \"filters\" must hold 1 to {} filters, got {}", LZMA_FILTERS_MAX, it->size());
    }
    c.filters_json = *it;
    for (const auto& f : *it) c.filters.push_back(parse_filter(f));
  }
  if (c.preset && !c.filters.empty()) fail_invalid("lzma codec: give \"preset\" or \"filters\", not both");
  if (c.format == Format::kRaw && c.filters.empty()) fail_invalid("lzma codec: format 3 (raw) needs \"filters\"");
  if (c.format == Format::kAlone && !c.filters.empty() &&
      (c.filters.size() != 1 || c.filters[0].id != LZMA_FILTER_LZMA1)) {
    fail_invalid("lzma codec: format 2 (lzma-alone) takes only one LZMA1 filter");
  }
  if (!c.filters.empty()) {
    // liblzma's own validation of the chain (order, lc + lp for LZMA2, match finders...).
    FilterChain chain(c.filters);
    if (lzma_raw_decoder_memusage(chain.get()) == UINT64_MAX || lzma_raw_encoder_memusage(chain.get()) == UINT64_MAX) {
      fail_invalid("lzma codec: liblzma rejects the filter chain {}", c.filters_json.dump());
    }
  }
  return c;
}

// ---- liblzma streams ------------------------------------------------------------------------

class Stream {
 public:
  Stream() = default;
  ~Stream() { lzma_end(&stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  lzma_stream& get() { return stream_; }

 private:
  lzma_stream stream_ = LZMA_STREAM_INIT;
};

// Throws for a liblzma setup failure (encoder or decoder initialisation).
void check_init(lzma_ret rc, std::string_view what) {
  if (rc == LZMA_OK) return;
  if (rc == LZMA_MEM_ERROR) fail_resource("lzma codec: out of memory while setting up {}", what);
  if (rc == LZMA_OPTIONS_ERROR) fail_unsupported("lzma codec: liblzma does not support these options for {}", what);
  throw InternalError(fmt::format("lzma codec: cannot set up {} (liblzma error {})", what, static_cast<int>(rc)));
}

// Decodes one stream starting at `pos` with `stream`, already set up; returns where it ended.
std::size_t decode_stream(lzma_stream& strm, ByteView input, std::size_t pos, BoundedOutput& out,
                          std::uint64_t memory_limit) {
  std::uint8_t probe[1];  // where output past a full bound goes, to tell "exceeds" from "ends here"
  strm.next_in = reinterpret_cast<const std::uint8_t*>(input.data() + pos);
  strm.avail_in = input.size() - pos;
  while (true) {
    MutableByteView room = out.room();
    const bool probing = room.empty();
    strm.next_out = probing ? probe : reinterpret_cast<std::uint8_t*>(room.data());
    strm.avail_out = probing ? 1 : room.size();
    const std::size_t out_before = strm.avail_out;
    const lzma_ret rc = lzma_code(&strm, LZMA_FINISH);  // all the input is there from the start
    const std::size_t produced = out_before - strm.avail_out;
    if (probing && produced != 0) out.fail_too_large();
    if (!probing) out.produced(produced);
    switch (rc) {
      case LZMA_OK:
        break;
      case LZMA_STREAM_END:
        return input.size() - strm.avail_in;
      case LZMA_BUF_ERROR:  // no progress possible with all the input given
        fail_data_loss("lzma codec: the lzma data is truncated ({} bytes decoded from {} input bytes)", out.size(),
                       input.size());
      case LZMA_MEMLIMIT_ERROR:
        fail_resource("lzma codec: decoding needs {} bytes of memory, more than the limit of {}",
                      lzma_memusage(&strm), memory_limit);
      case LZMA_MEM_ERROR:
        fail_resource("lzma codec: out of memory while decompressing");
      case LZMA_FORMAT_ERROR:
        fail_data_loss("lzma codec: corrupt lzma data: not in the expected container format");
      case LZMA_OPTIONS_ERROR:
        fail_data_loss("lzma codec: corrupt lzma data: unsupported options in its headers");
      default:  // LZMA_DATA_ERROR and anything unexpected
        fail_data_loss("lzma codec: corrupt lzma data (liblzma error {})", static_cast<int>(rc));
    }
  }
}

class LzmaCodec final : public BytesToBytesCodec {
 public:
  explicit LzmaCodec(LzmaConfig config) : config_(std::move(config)) {}

  std::string_view name() const override { return "numcodecs.lzma"; }

  nlohmann::json to_json() const override {
    nlohmann::json config = *to_v2_json();
    config.erase("id");
    return codec_json(name(), std::move(config));
  }
  std::optional<nlohmann::json> to_v2_json() const override {
    return nlohmann::json{{"id", "lzma"},
                          {"format", static_cast<int>(config_.format)},
                          {"check", config_.check},
                          {"preset", config_.preset ? nlohmann::json(*config_.preset) : nlohmann::json(nullptr)},
                          {"filters", config_.filters_json}};
  }

  Buffer encode(ByteView decoded, const ChunkSpec&) const override {
    Stream stream;
    lzma_stream& strm = stream.get();
    FilterChain chain(config_.filters);
    const std::uint32_t preset = config_.preset.value_or(kDefaultPreset);
    switch (config_.format) {
      case Format::kXz: {
        const auto check = config_.check == -1 ? LZMA_CHECK_CRC64 : static_cast<lzma_check>(config_.check);
        check_init(config_.filters.empty() ? lzma_easy_encoder(&strm, preset, check)
                                           : lzma_stream_encoder(&strm, chain.get(), check),
                   "the xz encoder");
        break;
      }
      case Format::kAlone: {
        lzma_options_lzma options{};
        if (config_.filters.empty()) {
          if (lzma_lzma_preset(&options, preset)) fail_invalid("lzma codec: liblzma rejects preset {}", preset);
        } else {
          options = config_.filters[0].lzma;
        }
        check_init(lzma_alone_encoder(&strm, &options), "the lzma-alone encoder");
        break;
      }
      case Format::kRaw:
        check_init(lzma_raw_encoder(&strm, chain.get()), "the raw lzma encoder");
        break;
      case Format::kAuto:
        fail_unsupported("lzma codec: format 0 (auto-detect) can be read but not written");
    }
    // Incompressible data grows by a little; the buffer grows if a chain does worse.
    std::size_t capacity = lzma_stream_buffer_bound(decoded.size());
    if (capacity == 0) fail_invalid("lzma codec: {} bytes are too many to compress", decoded.size());
    Buffer out = Buffer::allocate(capacity);
    strm.next_in = reinterpret_cast<const std::uint8_t*>(decoded.data());
    strm.avail_in = decoded.size();
    while (true) {
      strm.next_out = reinterpret_cast<std::uint8_t*>(out.data()) + strm.total_out;
      strm.avail_out = out.size() - strm.total_out;
      const lzma_ret rc = lzma_code(&strm, LZMA_FINISH);
      if (rc == LZMA_STREAM_END) break;
      if (rc == LZMA_MEM_ERROR) fail_resource("lzma codec: out of memory while compressing");
      if (rc != LZMA_OK) {
        throw InternalError(fmt::format("lzma codec: compression failed (liblzma error {})", static_cast<int>(rc)));
      }
      if (strm.avail_out == 0) {
        Buffer bigger = Buffer::allocate(out.size() * 2);
        std::memcpy(bigger.data(), out.data(), out.size());
        out = std::move(bigger);
      }
    }
    return compressor_support::fit_to(std::move(out), strm.total_out);
  }

  Buffer decode(ByteView encoded, SizeBound decoded_size, const ChunkSpec&) const override {
    const std::uint64_t memory_limit = std::max(kMinimumMemoryLimit, decoded_size.bytes);
    BoundedOutput out(decoded_size, "lzma", encoded.size());
    std::size_t pos = 0;
    do {
      Stream stream;
      lzma_stream& strm = stream.get();
      switch (config_.format) {
        case Format::kXz:  // LZMA_CONCATENATED: further streams and stream padding are read too
          check_init(lzma_stream_decoder(&strm, memory_limit, LZMA_CONCATENATED), "the xz decoder");
          break;
        case Format::kAuto:
          check_init(lzma_auto_decoder(&strm, memory_limit, LZMA_CONCATENATED), "the lzma decoder");
          break;
        case Format::kAlone:
          check_init(lzma_alone_decoder(&strm, memory_limit), "the lzma-alone decoder");
          break;
        case Format::kRaw: {
          FilterChain chain(config_.filters);
          if (lzma_raw_decoder_memusage(chain.get()) > memory_limit) {
            fail_resource("lzma codec: the filter chain needs {} bytes of memory to decode, more than the limit of {}",
                          lzma_raw_decoder_memusage(chain.get()), memory_limit);
          }
          check_init(lzma_raw_decoder(&strm, chain.get()), "the raw lzma decoder");
          break;
        }
      }
      pos = decode_stream(strm, encoded, pos, out, memory_limit);
      if (pos < encoded.size() && config_.format == Format::kRaw) {
        fail_data_loss("lzma codec: {} bytes of unexpected data after the end of the raw stream", encoded.size() - pos);
      }
    } while (pos < encoded.size());  // lzma-alone streams may be concatenated, as Python reads them
    return out.finish();
  }

 private:
  LzmaConfig config_;
};

std::shared_ptr<const Codec> make_lzma(const nlohmann::json& config, ConfigForm form) {
  return std::make_shared<LzmaCodec>(parse_config(config, form));
}

}  // namespace

void register_lzma_codec(CodecRegistry& registry) {
  registry.add_v3("numcodecs.lzma",
                  [](const nlohmann::json& c, const CodecContext&) { return make_lzma(c, ConfigForm::kV3Numcodecs); });
  registry.add_v2("lzma", [](const nlohmann::json& c, const CodecContext&) { return make_lzma(c, ConfigForm::kV2); });
}

}  // namespace zarrkit
