// The "blosc" codec (bytes->bytes): c-blosc 1.x frames. v3 "blosc" names shuffle with a
// string; v2 (numcodecs) and the v3 "numcodecs.blosc" name use the numcodecs integers.
// Decoding trusts only the bytes' own 16-byte header, and that only after checking it
// against the input size and the size the chain expects.
#include <blosc.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "codecs/blosc.h"
#include "codecs/blosc_pieces.h"
#include "codecs/register.h"
#include "core/checked_math.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

enum class Shuffle : int { kNone = BLOSC_NOSHUFFLE, kByte = BLOSC_SHUFFLE, kBit = BLOSC_BITSHUFFLE };

constexpr std::array<std::string_view, 3> kShuffleNames = {"noshuffle", "shuffle", "bitshuffle"};
constexpr std::array<std::string_view, 6> kCnames = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};

// Which metadata form the codec came from, and so which one it writes back.
enum class Flavour { kV3, kNumcodecs };

struct BloscSettings {
  std::string cname = "zstd";
  int clevel = 5;
  Shuffle shuffle = Shuffle::kByte;
  std::size_t typesize = 1;
  std::size_t blocksize = 0;      // 0: blosc picks
  std::optional<int> v2_shuffle;  // the numcodecs value as written (-1 kept for round trips)
  std::optional<std::size_t> numcodecs_typesize;  // numcodecs forms may record one
};

class BloscCodec final : public BytesToBytesCodec {
 public:
  BloscCodec(BloscSettings settings, Flavour flavour) : s_(std::move(settings)), flavour_(flavour) {}

  std::string_view name() const override { return flavour_ == Flavour::kV3 ? "blosc" : "numcodecs.blosc"; }
  const BloscSettings& settings() const { return s_; }

  nlohmann::json to_json() const override {
    if (flavour_ == Flavour::kNumcodecs) {
      auto config = numcodecs_json();
      config.erase("id");
      return codec_json(name(), std::move(config));
    }
    // A writer that picks values must record them (v3 blosc spec): write all five.
    return codec_json(name(), {{"cname", s_.cname},
                               {"clevel", s_.clevel},
                               {"shuffle", kShuffleNames[static_cast<int>(s_.shuffle)]},
                               {"typesize", s_.typesize},
                               {"blocksize", s_.blocksize}});
  }

  std::optional<nlohmann::json> to_v2_json() const override { return numcodecs_json(); }

  // The numcodecs form (read from v2 metadata) as the v3 core blosc codec, with every value
  // recorded as the v3 blosc spec asks: numcodecs' automatic shuffle (-1) is bit shuffle
  // for 1-byte types and byte shuffle otherwise, and the type size is the element's where
  // numcodecs did not record one.
  nlohmann::json to_v3_core_json(const DataType& dtype) const override {
    if (flavour_ == Flavour::kV3) return to_json();
    const int shuffle = s_.v2_shuffle.value_or(static_cast<int>(s_.shuffle));
    const std::string_view shuffle_name = shuffle == -1                    ? (dtype.size() == 1 ? "bitshuffle" : "shuffle")
                                          : shuffle >= 0 && shuffle <= 2 ? kShuffleNames[shuffle]
                                                                         : "shuffle";
    return codec_json("blosc", {{"typesize", s_.numcodecs_typesize.value_or(std::max<std::size_t>(dtype.size(), 1))},
                                {"cname", s_.cname},
                                {"clevel", s_.clevel},
                                {"shuffle", shuffle_name},
                                {"blocksize", s_.blocksize}});
  }

  Buffer encode(ByteView decoded, const ChunkSpec& spec) const override {
    if (decoded.size() > static_cast<std::size_t>(BLOSC_MAX_BUFFERSIZE)) {
      fail_unsupported("blosc cannot compress {} bytes in one chunk (at most {})", decoded.size(),
                       BLOSC_MAX_BUFFERSIZE);
    }
    const std::size_t capacity = decoded.size() + BLOSC_MAX_OVERHEAD;  // always enough
    Buffer out = Buffer::allocate(capacity);
    const int written =
        blosc_compress_ctx(s_.clevel, static_cast<int>(s_.shuffle), s_.typesize, decoded.size(), decoded.data(),
                           out.data(), capacity, s_.cname.c_str(), s_.blocksize, /*numinternalthreads=*/1);
    if (written <= 0) {
      throw InternalError(fmt::format("blosc ({}, clevel {}) failed to compress {} bytes: code {}", s_.cname,
                                      s_.clevel, decoded.size(), written));
    }
    out.shrink(static_cast<std::size_t>(written));
    return out;
  }

  Buffer decode(ByteView encoded, SizeBound decoded_size, const ChunkSpec& spec) const override {
    const std::size_t nbytes = checked_nbytes(encoded, encoded.size(), decoded_size);
    Buffer out = Buffer::allocate(nbytes);
    decompress(encoded, out.mutable_view());
    return out;
  }

  void decode_into(ByteView encoded, MutableByteView out, const ChunkSpec&) const override {
    checked_nbytes(encoded, encoded.size(), SizeBound{out.size(), true});
    decompress(encoded, out);
  }

  std::unique_ptr<PieceReader> decode_pieces(std::shared_ptr<ByteSource> encoded, std::uint64_t decoded_size,
                                             const ChunkSpec&) const override {
    // The header's checks first, with decode_into's errors.
    std::array<std::byte, BLOSC_MIN_HEADER_LENGTH> read_header{};
    const std::size_t size = to_size(encoded->size(), "blosc chunk size");
    ByteView header;
    if (const std::optional<ByteView> bytes = encoded->in_memory()) {
      header = bytes->first(std::min<std::size_t>(bytes->size(), BLOSC_MIN_HEADER_LENGTH));
    } else {
      header = ByteView(read_header).first(encoded->read(0, read_header));
      if (header.size() < std::min<std::size_t>(size, BLOSC_MIN_HEADER_LENGTH)) return nullptr;  // it shrank
    }
    blosc_pieces::Frame frame;
    frame.nbytes = checked_nbytes(header, size, SizeBound{decoded_size, true});
    std::size_t header_nbytes = 0;
    blosc_cbuffer_sizes(header.data(), &header_nbytes, &frame.cbytes, &frame.blocksize);
    blosc_cbuffer_metainfo(header.data(), &frame.typesize, &frame.flags);
    int compressor_version = 0;
    blosc_cbuffer_versions(header.data(), &frame.version, &compressor_version);
    return blosc_pieces::make_reader(std::move(encoded), frame);
  }

 private:
  // The decoded size the header states, after checking the header against the data and
  // the bound.
  // `header` holds the chunk's first bytes (at least the header's, where it has as many),
  // `size` is the chunk's.
  static std::size_t checked_nbytes(ByteView header, std::size_t size, SizeBound decoded_size) {
    if (size < BLOSC_MIN_HEADER_LENGTH) {
      fail_data_loss("blosc chunk of {} bytes is shorter than the {}-byte blosc header", size,
                     BLOSC_MIN_HEADER_LENGTH);
    }
    std::size_t header_nbytes = 0, header_cbytes = 0, header_blocksize = 0;
    blosc_cbuffer_sizes(header.data(), &header_nbytes, &header_cbytes, &header_blocksize);
    // blosc_decompress_ctx reads as many bytes as the header says: it must not say more
    // than we have. Bytes past its end are ignored, as other readers do.
    if (header_cbytes > size) {
      fail_data_loss("blosc header says the chunk has {} compressed bytes, but only {} are present", header_cbytes,
                     size);
    }
    std::size_t nbytes = 0;
    if (blosc_cbuffer_validate(header.data(), header_cbytes, &nbytes) != 0) {
      fail_data_loss("blosc chunk header is invalid (format version {}, {} compressed bytes, {} decompressed)",
                     static_cast<int>(header[0]), header_cbytes, header_nbytes);
    }
    if (decoded_size.exact ? nbytes != decoded_size.bytes : nbytes > decoded_size.bytes) {
      fail_data_loss("blosc header says the chunk decompresses to {} bytes, expected {} {}", nbytes,
                     decoded_size.exact ? "exactly" : "at most", decoded_size.bytes);
    }
    return nbytes;
  }

  // Decompresses into `out`, which has the size checked_nbytes() returned.
  static void decompress(ByteView encoded, MutableByteView out) {
    if (out.empty()) return;
    // The typesize and shuffle come from the header, never from the metadata (rule 19).
    const int produced = blosc_decompress_ctx(encoded.data(), out.data(), out.size(), /*numinternalthreads=*/1);
    if (produced < 0 || static_cast<std::size_t>(produced) != out.size()) {
      fail_data_loss("blosc chunk is corrupt: decompressing gave {} (expected {} bytes)", produced, out.size());
    }
  }

  nlohmann::json numcodecs_json() const {
    nlohmann::json out = {{"id", "blosc"},
            {"cname", s_.cname},
            {"clevel", s_.clevel},
            {"shuffle", s_.v2_shuffle.value_or(static_cast<int>(s_.shuffle))},
            {"blocksize", s_.blocksize}};
    if (s_.numcodecs_typesize) out["typesize"] = *s_.numcodecs_typesize;
    return out;
  }

  BloscSettings s_;
  Flavour flavour_;
};

// ---- Parsing --------------------------------------------------------------------------

std::string parse_cname(const nlohmann::json& value) {
  if (!value.is_string()) fail_invalid("blosc \"cname\" must be a string, got {}", value.dump());
  const auto& cname = value.get_ref<const std::string&>();
  if (std::find(kCnames.begin(), kCnames.end(), cname) == kCnames.end()) {
    fail_invalid("blosc \"cname\" must be one of blosclz, lz4, lz4hc, snappy, zlib, zstd; got \"{}\"", cname);
  }
  if (blosc_compname_to_compcode(cname.c_str()) < 0) {
    fail_unsupported("blosc compressor \"{}\" is not built into this c-blosc ({})", cname, blosc_list_compressors());
  }
  return cname;
}

std::int64_t parse_int(const nlohmann::json& value, const char* key, std::int64_t lo, std::int64_t hi) {
  if (!value.is_number_integer()) fail_invalid("blosc \"{}\" must be an integer, got {}", key, value.dump());
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) {
    fail_invalid("blosc \"{}\" must be between {} and {}, got {}", key, lo, hi, value.dump());
  }
  const auto v = value.get<std::int64_t>();
  if (v < lo || v > hi) fail_invalid("blosc \"{}\" must be between {} and {}, got {}", key, lo, hi, v);
  return v;
}

// The element size blosc shuffles by when the metadata does not say: the dtype's, where
// blosc can use it (it treats anything above 255 as 1 anyway).
std::size_t default_typesize(const DataType& dtype) {
  const std::size_t size = dtype.size();
  return size >= 1 && size <= BLOSC_MAX_TYPESIZE ? size : 1;
}

constexpr std::int64_t kMaxBlocksize = std::numeric_limits<int>::max();
constexpr std::int64_t kMaxTypesize = std::numeric_limits<int>::max();

std::shared_ptr<const Codec> make_blosc_v3(const nlohmann::json& configuration, const CodecContext& context) {
  BloscSettings s;
  std::optional<Shuffle> shuffle;
  std::optional<std::size_t> typesize;
  for (const auto& [key, value] : configuration.items()) {
    if (key == "cname") {
      s.cname = parse_cname(value);
    } else if (key == "clevel") {
      s.clevel = static_cast<int>(parse_int(value, "clevel", 0, 9));
    } else if (key == "shuffle") {
      auto it = value.is_string() ? std::find(kShuffleNames.begin(), kShuffleNames.end(), value.get<std::string>())
                                  : kShuffleNames.end();
      if (it == kShuffleNames.end()) {
        fail_invalid("blosc \"shuffle\" must be \"noshuffle\", \"shuffle\" or \"bitshuffle\", got {}", value.dump());
      }
      shuffle = static_cast<Shuffle>(it - kShuffleNames.begin());
    } else if (key == "typesize") {
      typesize = static_cast<std::size_t>(parse_int(value, "typesize", 1, kMaxTypesize));
    } else if (key == "blocksize") {
      s.blocksize = static_cast<std::size_t>(parse_int(value, "blocksize", 0, kMaxBlocksize));
    } else {
      fail_invalid("blosc codec: unexpected configuration key \"{}\"", key);
    }
  }
  // Lenient reading: what zarr-python picks when a value is left out.
  s.shuffle = shuffle.value_or(context.dtype.size() == 1 ? Shuffle::kBit : Shuffle::kByte);
  s.typesize = typesize.value_or(default_typesize(context.dtype));
  return std::make_shared<BloscCodec>(std::move(s), Flavour::kV3);
}

// numcodecs' form: v2 compressors/filters ({"id": "blosc", ...}) and the v3
// "numcodecs.blosc" configuration (the same keys without "id").
BloscSettings parse_numcodecs(const nlohmann::json& object, const CodecContext& context, bool v2) {
  BloscSettings s;
  s.cname = "lz4";  // numcodecs' defaults: lz4, clevel 5, byte shuffle, automatic blocks
  int shuffle = BLOSC_SHUFFLE;
  for (const auto& [key, value] : object.items()) {
    if (key == "id" && v2) {
      continue;
    } else if (key == "cname") {
      s.cname = parse_cname(value);
    } else if (key == "clevel") {
      s.clevel = static_cast<int>(parse_int(value, "clevel", 0, 9));
    } else if (key == "shuffle") {
      shuffle = static_cast<int>(parse_int(value, "shuffle", -1, 2));
    } else if (key == "blocksize") {
      s.blocksize = static_cast<std::size_t>(parse_int(value, "blocksize", 0, kMaxBlocksize));
    } else if (key == "typesize") {
      // Some numcodecs versions record it; decoding uses the header's anyway.
      if (!value.is_null()) {
        s.numcodecs_typesize = static_cast<std::size_t>(parse_int(value, "typesize", 1, kMaxTypesize));
      }
    } else {
      fail_invalid("blosc codec: unexpected key \"{}\"", key);
    }
  }
  s.v2_shuffle = shuffle;
  if (shuffle == -1) {  // AUTOSHUFFLE: bit-shuffle single bytes, byte-shuffle the rest
    s.shuffle = context.dtype.size() == 1 ? Shuffle::kBit : Shuffle::kByte;
  } else {
    s.shuffle = static_cast<Shuffle>(shuffle);
  }
  s.typesize = s.numcodecs_typesize.value_or(default_typesize(context.dtype));
  return s;
}

std::shared_ptr<const Codec> make_blosc_v2(const nlohmann::json& object, const CodecContext& context) {
  return std::make_shared<BloscCodec>(parse_numcodecs(object, context, true), Flavour::kNumcodecs);
}

std::shared_ptr<const Codec> make_numcodecs_blosc(const nlohmann::json& configuration, const CodecContext& context) {
  return std::make_shared<BloscCodec>(parse_numcodecs(configuration, context, false), Flavour::kNumcodecs);
}

}  // namespace

BloscCodecSettings blosc_codec_settings(const Codec& codec) {
  const auto* blosc = dynamic_cast<const BloscCodec*>(&codec);
  if (blosc == nullptr) throw InternalError(fmt::format("'{}' is not a blosc codec", codec.name()));
  const BloscSettings& s = blosc->settings();
  BloscCodecSettings out;
  out.cname = s.cname;
  out.clevel = s.clevel;
  out.shuffle = static_cast<BloscCodecSettings::Shuffle>(static_cast<int>(s.shuffle));
  out.typesize = s.typesize;
  out.blocksize = s.blocksize;
  return out;
}

void register_blosc_codec(CodecRegistry& registry) {
  registry.add_v3("blosc", make_blosc_v3);
  registry.add_v3("numcodecs.blosc", make_numcodecs_blosc);
  registry.add_v2("blosc", make_blosc_v2);
}

}  // namespace zarrkit
