#include "core/base64.h"

#include <array>
#include <cstdint>

namespace zarrkit {
namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// 0..63 for alphabet characters, -1 otherwise.
constexpr std::array<int, 256> make_decode_table() {
  std::array<int, 256> table{};
  for (auto& v : table) v = -1;
  for (std::size_t i = 0; i < kAlphabet.size(); ++i) table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int>(i);
  return table;
}
constexpr auto kDecode = make_decode_table();

}  // namespace

std::string base64_encode(ByteView bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const auto v = (std::to_integer<std::uint32_t>(bytes[i]) << 16) | (std::to_integer<std::uint32_t>(bytes[i + 1]) << 8) |
                   std::to_integer<std::uint32_t>(bytes[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  const std::size_t left = bytes.size() - i;
  if (left > 0) {
    std::uint32_t v = std::to_integer<std::uint32_t>(bytes[i]) << 16;
    if (left == 2) v |= std::to_integer<std::uint32_t>(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += left == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::vector<std::byte>> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::vector<std::byte> out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    std::size_t padding = 0;
    if (last) padding = static_cast<std::size_t>(text[i + 3] == '=') + static_cast<std::size_t>(text[i + 3] == '=' && text[i + 2] == '=');
    std::uint32_t v = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      int d = 0;
      if (j < 4 - padding) {
        d = kDecode[static_cast<unsigned char>(text[i + j])];
        if (d < 0) return std::nullopt;
      }
      v = (v << 6) | static_cast<std::uint32_t>(d);
    }
    // Bits that fall into the padding must be zero (canonical encoding).
    if ((padding == 1 && (v & 0xff) != 0) || (padding == 2 && (v & 0xffff) != 0)) return std::nullopt;
    out.push_back(static_cast<std::byte>((v >> 16) & 0xff));
    if (padding < 2) out.push_back(static_cast<std::byte>((v >> 8) & 0xff));
    if (padding < 1) out.push_back(static_cast<std::byte>(v & 0xff));
  }
  return out;
}

}  // namespace zarrkit
