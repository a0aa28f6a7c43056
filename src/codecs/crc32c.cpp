// The crc32c codec (bytes->bytes): appends the CRC-32C (Castagnoli) of the data as 4 bytes,
// little-endian, and checks it when decoding. Registered as v3 "crc32c" (no configuration)
// and "numcodecs.crc32c", whose optional "location" may put the checksum at the start.
#include "codecs/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define ZARRKIT_CRC32C_X86 1
#endif

#include "codecs/compressor_support.h"
#include "codecs/register.h"
#include "core/checked_math.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {

// ---- The checksum --------------------------------------------------------------------------

namespace {

constexpr std::uint32_t kCastagnoliReflected = 0x82F63B78u;

// Slicing-by-8 tables: table[k][b] is the CRC state after byte b followed by k zero bytes,
// which lets the portable path fold 8 input bytes per step.
using SliceTables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr SliceTables make_slice_tables() {
  SliceTables tables{};
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    std::uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kCastagnoliReflected : 0u);
    tables[0][byte] = crc;
  }
  for (std::size_t k = 1; k < 8; ++k) {
    for (std::size_t byte = 0; byte < 256; ++byte) {
      std::uint32_t previous = tables[k - 1][byte];
      tables[k][byte] = (previous >> 8) ^ tables[0][previous & 0xFFu];
    }
  }
  return tables;
}

constexpr SliceTables kSliceTables = make_slice_tables();

std::uint32_t load_le32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// The CRC register after `n` more bytes (no pre- or post-inversion), eight bytes per step.
std::uint32_t portable_update(std::uint32_t state, const unsigned char* p, std::size_t n) {
  const auto& t = kSliceTables;
  for (; n >= 8; n -= 8, p += 8) {
    std::uint32_t low = load_le32(p) ^ state;
    std::uint32_t high = load_le32(p + 4);
    state = t[7][low & 0xFFu] ^ t[6][(low >> 8) & 0xFFu] ^ t[5][(low >> 16) & 0xFFu] ^ t[4][low >> 24] ^
            t[3][high & 0xFFu] ^ t[2][(high >> 8) & 0xFFu] ^ t[1][(high >> 16) & 0xFFu] ^ t[0][high >> 24];
  }
  while (n-- != 0) state = (state >> 8) ^ t[0][(state ^ *p++) & 0xFFu];
  return state;
}

#ifdef ZARRKIT_CRC32C_X86
// The hardware path runs three independent CRCs over three consecutive lanes of kLane
// bytes, because the crc32 instruction has a latency of three cycles but can start one per
// cycle. The register after lanes A, B, C is then shift(shift(crc A) ^ crc B) ^ crc C,
// where shift() advances a register over kLane zero bytes: a linear map, applied with
// four 256-entry tables (one per byte of the register).
constexpr std::size_t kLane = 2048;

struct LaneShift {
  std::array<std::array<std::uint32_t, 256>, 4> tables{};

  LaneShift() {
    std::array<std::uint32_t, 32> basis{};  // where each single-bit register goes
    const std::array<unsigned char, kLane> zeros{};
    for (std::size_t bit = 0; bit < 32; ++bit) basis[bit] = portable_update(1u << bit, zeros.data(), kLane);
    for (std::size_t k = 0; k < 4; ++k) {
      for (std::uint32_t byte = 0; byte < 256; ++byte) {
        std::uint32_t image = 0;
        for (std::size_t bit = 0; bit < 8; ++bit) {
          if ((byte >> bit) & 1u) image ^= basis[8 * k + bit];
        }
        tables[k][byte] = image;
      }
    }
  }

  std::uint32_t operator()(std::uint32_t state) const {
    return tables[0][state & 0xFFu] ^ tables[1][(state >> 8) & 0xFFu] ^ tables[2][(state >> 16) & 0xFFu] ^
           tables[3][state >> 24];
  }
};

const LaneShift& lane_shift() {
  static const LaneShift shift;
  return shift;
}

__attribute__((target("sse4.2"))) std::uint64_t crc_word(std::uint64_t state, const unsigned char* p) {
  std::uint64_t word;
  std::memcpy(&word, p, 8);
#if defined(__x86_64__)
  return _mm_crc32_u64(state, word);
#else
  return _mm_crc32_u32(_mm_crc32_u32(static_cast<std::uint32_t>(state), static_cast<std::uint32_t>(word)),
                       static_cast<std::uint32_t>(word >> 32));
#endif
}

__attribute__((target("sse4.2"))) std::uint32_t hardware_update(std::uint32_t state, const unsigned char* p,
                                                                 std::size_t n) {
  // Single-byte steps until p is 8-byte aligned.
  while (n != 0 && (reinterpret_cast<std::uintptr_t>(p) & 7u) != 0) {
    state = _mm_crc32_u8(state, *p++);
    --n;
  }
  std::uint64_t wide = state;
  if (n >= 3 * kLane) {
    const LaneShift& shift = lane_shift();
    for (; n >= 3 * kLane; n -= 3 * kLane, p += 3 * kLane) {
      std::uint64_t a = wide;
      std::uint64_t b = 0;
      std::uint64_t c = 0;
      for (std::size_t i = 0; i < kLane; i += 8) {
        a = crc_word(a, p + i);
        b = crc_word(b, p + kLane + i);
        c = crc_word(c, p + 2 * kLane + i);
      }
      wide = shift(shift(static_cast<std::uint32_t>(a)) ^ static_cast<std::uint32_t>(b)) ^ static_cast<std::uint32_t>(c);
    }
  }
  for (; n >= 8; n -= 8, p += 8) wide = crc_word(wide, p);
  state = static_cast<std::uint32_t>(wide);
  while (n-- != 0) state = _mm_crc32_u8(state, *p++);
  return state;
}
#endif

// Asked once, lazily, so that a static initialiser elsewhere may already call crc32c().
bool have_hardware() {
  static const bool available = [] {
#ifdef ZARRKIT_CRC32C_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") != 0;
#else
    return false;
#endif
  }();
  return available;
}

}  // namespace

namespace crc32c_detail {

std::uint32_t portable(ByteView data, std::uint32_t crc) {
  return ~portable_update(~crc, reinterpret_cast<const unsigned char*>(data.data()), data.size());
}

bool hardware_available() { return have_hardware(); }

std::uint32_t hardware(ByteView data, std::uint32_t crc) {
#ifdef ZARRKIT_CRC32C_X86
  if (have_hardware()) {
    return ~hardware_update(~crc, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  }
#endif
  (void)data;
  (void)crc;
  throw InternalError("crc32c: the CPU has no CRC-32C instruction");
}

}  // namespace crc32c_detail

std::uint32_t crc32c(ByteView data, std::uint32_t crc) {
  return have_hardware() ? crc32c_detail::hardware(data, crc) : crc32c_detail::portable(data, crc);
}

// ---- The codec -----------------------------------------------------------------------------

namespace {

using compressor_support::ConfigForm;

constexpr std::size_t kChecksumSize = 4;

class Crc32cCodec final : public BytesToBytesCodec {
 public:
  explicit Crc32cCodec(bool checksum_first) : checksum_first_(checksum_first) {}

  // Only the numcodecs form can say "location": "start"; the v3 form is the usual one.
  std::string_view name() const override { return checksum_first_ ? "numcodecs.crc32c" : "crc32c"; }
  bool checksum_first() const { return checksum_first_; }

  nlohmann::json to_json() const override {
    nlohmann::json config = nlohmann::json::object();
    if (checksum_first_) config["location"] = "start";
    return codec_json(name(), std::move(config));
  }

  std::optional<std::uint64_t> encoded_size(std::uint64_t decoded_size) const override {
    return checked_add(decoded_size, kChecksumSize, "crc32c encoded size");
  }

  Buffer encode(ByteView decoded, const ChunkSpec&) const override {
    Buffer out = Buffer::allocate(to_size(checked_add(decoded.size(), kChecksumSize, "crc32c encoded size")));
    std::byte* payload = out.data() + (checksum_first_ ? kChecksumSize : 0);
    std::byte* checksum = out.data() + (checksum_first_ ? 0 : decoded.size());
    if (!decoded.empty()) std::memcpy(payload, decoded.data(), decoded.size());
    std::uint32_t value = crc32c(decoded);
    for (std::size_t i = 0; i < kChecksumSize; ++i) checksum[i] = static_cast<std::byte>(value >> (8 * i));
    return out;
  }

  Buffer decode(ByteView encoded, SizeBound decoded_size, const ChunkSpec& spec) const override {
    const ByteView payload = decode_view(encoded, spec);
    compressor_support::check_decoded_size(payload.size(), decoded_size, "crc32c");
    return Buffer::copy_of(payload);
  }

  bool decodes_to_view() const override { return true; }

  ByteView decode_view(ByteView encoded, const ChunkSpec&) const override {
    if (encoded.size() < kChecksumSize) {
      fail_data_loss("crc32c codec: {} bytes cannot hold the 4-byte checksum", encoded.size());
    }
    ByteView payload = encoded.subspan(checksum_first_ ? kChecksumSize : 0, encoded.size() - kChecksumSize);
    ByteView checksum = encoded.subspan(checksum_first_ ? 0 : payload.size(), kChecksumSize);
    std::uint32_t stored = load_le32(reinterpret_cast<const unsigned char*>(checksum.data()));
    std::uint32_t computed = crc32c(payload);
    if (stored != computed) {
      fail_data_loss("crc32c codec: checksum mismatch: stored 0x{:08x}, computed 0x{:08x} over {} bytes", stored,
                     computed, payload.size());
    }
    return payload;
  }

 private:
  bool checksum_first_;
};

std::shared_ptr<const Codec> make_v3(const nlohmann::json& configuration, const CodecContext&) {
  compressor_support::check_keys(configuration, {}, "crc32c", ConfigForm::kV3, "crc32c");
  return std::make_shared<Crc32cCodec>(false);
}

std::shared_ptr<const Codec> make_numcodecs_v3(const nlohmann::json& configuration, const CodecContext&) {
  compressor_support::check_keys(configuration, {"location"}, "crc32c", ConfigForm::kV3Numcodecs, "crc32c");
  bool checksum_first = false;
  if (auto it = configuration.find("location"); it != configuration.end() && !it->is_null()) {
    if (*it == "start") {
      checksum_first = true;
    } else if (*it != "end") {
      fail_invalid("crc32c codec: \"location\" must be \"start\" or \"end\", got {}", it->dump());
    }
  }
  return std::make_shared<Crc32cCodec>(checksum_first);
}

}  // namespace

bool crc32c_codec_checksum_first(const Codec& codec) {
  const auto* crc = dynamic_cast<const Crc32cCodec*>(&codec);
  if (crc == nullptr) throw InternalError(fmt::format("'{}' is not the crc32c codec", codec.name()));
  return crc->checksum_first();
}

void register_crc32c_codec(CodecRegistry& registry) {
  registry.add_v3("crc32c", make_v3);
  registry.add_v3("numcodecs.crc32c", make_numcodecs_v3);
}

}  // namespace zarrkit
