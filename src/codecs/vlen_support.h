// The numcodecs variable-length framing shared by vlen-utf8 and vlen-bytes: a little-endian
// uint32 item count, then for each item a little-endian uint32 length and that many bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zarrkit/buffer.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/vlen.h"

namespace zarrkit::vlen_support {

// True if `s` is well-formed UTF-8 as Python decodes it (no overlong forms, no surrogates,
// nothing above U+10FFFF).
bool is_valid_utf8(std::string_view s);

// The framing of `items`. InvalidArgumentError if there are 2^32 items or more, or an item
// of 2^32 bytes or more.
Buffer encode_items(const std::vector<std::string>& items, std::string_view codec);
// The items of `encoded`, which must hold exactly `expected_count` of them and nothing after
// them (DataLossError otherwise). The count is checked against the bytes present before
// anything is allocated.
std::vector<std::string> decode_items(ByteView encoded, std::uint64_t expected_count, std::string_view codec);

// vlen-utf8 (kString, items checked to be UTF-8) or vlen-bytes (kVarBytes).
class NumcodecsVlenCodec final : public VarLengthCodec {
 public:
  explicit NumcodecsVlenCodec(bool utf8) : utf8_(utf8) {}

  std::string_view name() const override { return utf8_ ? "vlen-utf8" : "vlen-bytes"; }
  nlohmann::json to_json() const override;
  std::optional<nlohmann::json> to_v2_json() const override;
  void validate(const ChunkSpec& spec) const override;
  Buffer encode_var(const VarNDBuffer& chunk, const ChunkSpec& spec) const override;
  VarNDBuffer decode_var(ByteView encoded, const ChunkSpec& spec) const override;

 private:
  bool utf8_;
};

// The factory both registrations use: no configuration keys ("id" in the v2 form).
std::shared_ptr<const Codec> make_vlen_codec(const nlohmann::json& config, bool utf8);

}  // namespace zarrkit::vlen_support
