// Huffman codes of deflate (RFC 1951 3.2.2): a code from its lengths, the look-up table the
// lanes fill together, and the decode of one symbol (the table, or the canonical walk for
// codes longer than the table resolves). The rules on which codes are accepted are zlib's:
// never over-subscribed; incomplete only as a single code of length 1 (or no code at all,
// which then decodes nothing).
#pragma once

#include <cstdint>

#include "gpu/deflate/deflate_common.cuh"

namespace zarrkit::gpu::deflate {

// A code of up to Symbols symbols: how many codes each length has, the symbols sorted by
// (length, symbol), and a table of 2^TableBits entries indexed by the next TableBits bits of
// the stream: (symbol << 4) | length for a code of at most TableBits bits, else 0.
template <std::uint32_t Symbols, std::uint32_t TableBits>
struct HuffmanCode {
  static constexpr std::uint32_t kSymbols = Symbols;
  static constexpr std::uint32_t kTableBits = TableBits;
  std::uint16_t counts[kMaxCodeBits + 1];
  std::uint16_t sorted[Symbols];
  std::uint16_t table[1u << TableBits];
};

using LitLenCode = HuffmanCode<kLitLenSymbols, kLitLenTableBits>;
using DistCode = HuffmanCode<kDistSymbols, kDistTableBits>;
using CodeLengthCode = HuffmanCode<kCodeLengthSymbols, kCodeLengthTableBits>;

// Counts and sorts the n (<= Code::kSymbols) lengths and checks the code they make.
// `complete`: the code must be complete (the code-length code) unless it is empty.
template <typename Code>
DEFLATE_HD std::int32_t prepare_code(const std::uint8_t* lengths, std::uint32_t n, Code& code, bool complete) {
  for (std::uint32_t len = 0; len <= kMaxCodeBits; ++len) code.counts[len] = 0;
  for (std::uint32_t s = 0; s < n; ++s) ++code.counts[lengths[s]];
  code.counts[0] = 0;
  std::int32_t left = 1;
  std::uint32_t longest = 0;
  for (std::uint32_t len = 1; len <= kMaxCodeBits; ++len) {
    left = left * 2 - code.counts[len];
    if (left < 0) return kErrOversubscribed;
    if (code.counts[len] != 0) longest = len;
  }
  if (longest != 0 && left > 0 && (complete || longest != 1)) return kErrIncomplete;
  std::uint16_t next[kMaxCodeBits + 1];
  next[0] = 0;
  next[1] = 0;
  for (std::uint32_t len = 1; len < kMaxCodeBits; ++len) next[len + 1] = static_cast<std::uint16_t>(next[len] + code.counts[len]);
  for (std::uint32_t s = 0; s < n; ++s) {
    const std::uint32_t len = lengths[s];
    if (len != 0) code.sorted[next[len]++] = static_cast<std::uint16_t>(s);
  }
  return kOk;
}

// The canonical walk over `bits` (stream order, least significant first) for lengths 1 to
// max_len: (symbol << 4) | length, or 0 when no code of at most max_len bits starts so.
template <typename Code>
DEFLATE_HD_FORCE std::uint32_t canonical_lookup(const Code& code, std::uint32_t bits, std::uint32_t max_len) {
  std::int32_t value = 0, first = 0, index = 0;
  for (std::uint32_t len = 1; len <= max_len; ++len) {
    value |= static_cast<std::int32_t>((bits >> (len - 1)) & 1u);
    const std::int32_t count = code.counts[len];
    if (value - first < count) return static_cast<std::uint32_t>(code.sorted[index + value - first]) << 4 | len;
    index += count;
    first = (first + count) << 1;
    value <<= 1;
  }
  return 0;
}

// The lanes fill the table, each its own entries (the code is prepared and visible to them).
DEFLATE_WARP_TEMPLATE
template <typename Warp, typename Code>
DEFLATE_HD void warp_fill_table(Warp& w, Code& code) {
  constexpr std::uint32_t entries = 1u << Code::kTableBits;
  for (std::uint32_t i = w.lane(); i < entries; i += kWarpLanes) {
    code.table[i] = static_cast<std::uint16_t>(canonical_lookup(code, i, Code::kTableBits));
  }
}

// The next symbol of the stream (the first lane's work).
template <typename Code>
DEFLATE_HD_FORCE std::int32_t decode_symbol(BitReader& in, const Code& code, std::uint32_t* symbol) {
  in.need(kMaxCodeBits);  // near the end of the input, fewer bits: checked below
  std::uint32_t entry = code.table[in.peek(Code::kTableBits)];
  if (entry == 0) {
    entry = canonical_lookup(code, in.peek(kMaxCodeBits), kMaxCodeBits);
    if (entry == 0) return in.count < kMaxCodeBits ? kErrTruncated : kErrSymbol;
  }
  const std::uint32_t len = entry & 15u;
  if (len > in.count) return kErrTruncated;
  in.drop(len);
  *symbol = entry >> 4;
  return kOk;
}

}  // namespace zarrkit::gpu::deflate
