// A deflate chunk decoded by one warp (deflate_common.cuh): headers and symbols read by its
// first lane, tables, writes, copies and checksums shared by its 32 lanes. Written against
// a Warp type with lane(), sync(), ballot(bool), shfl(u32, lane), shfl_up(u32, d) and
// shfl_xor(u32, mask): the kernels (src/gpu/codecs/deflate_device.cu) give it the
// hardware's, the host tests the emulated warps of gpu/warp/emulated_warp.h.
//
// Symbols are decoded in rounds of up to 32: the first lane decodes them into the warp's
// memory and checks each against the output slot and the window; then each lane takes one and
// a prefix sum over the lanes gives every symbol its place. The round's bytes are then written
// by the lanes together, each byte by one lane: a literal of the round gives its value, and a
// match byte is traced back through the round's own symbols (at most one step per symbol, each
// to an earlier one) to a literal of the round or to a byte written before it, which is read.
// So no lane copies a match byte by byte, and the reads of a round are issued together.
#pragma once

#include <cstdint>

#include "gpu/deflate/deflate_common.cuh"
#include "gpu/deflate/deflate_huffman.cuh"

namespace zarrkit::gpu::deflate {

// One chunk of a batch (addresses in the memory the stages run on).
struct DeflateChunkJob {
  std::uint64_t input;
  std::uint64_t output;  // exactly output_size bytes
  std::uint32_t input_size;
  std::uint32_t output_size;
  std::uint32_t status;  // its entry of the batch's status table
  std::uint32_t format;  // a Format
};

struct DeflateLaunch {
  const DeflateChunkJob* chunks = nullptr;
  std::int32_t* status = nullptr;  // zeroed before the launch
  std::uint32_t chunk_count = 0;
};

// A literal (distance 0, value the byte) or a match (value its length).
struct Token {
  std::uint32_t value;
  std::uint32_t distance;
};

// What a warp keeps while it decodes a chunk (shared memory on the device).
struct DeflateWarpMemory {
  LitLenCode litlen;
  DistCode dist;
  CodeLengthCode codelen;
  std::uint8_t lengths[kLitLenSymbols + kDistSymbols];
  std::uint32_t crc_table[256];
  // Length symbols 257-285 and distance symbols 0-29: base | extra bits << 16 (read by the
  // first lane's fast path instead of computing them).
  std::uint32_t length_codes[32];
  std::uint32_t distance_codes[32];
  Token tokens[kWarpLanes];
  std::uint32_t ends[kWarpLanes];  // where each token of the round ends, from the round's start
};

// ---- Headers and trailers (the first lane) ---------------------------------------------------

enum MemberKind : std::uint32_t { kRawMember = 0, kZlibMember = 1, kGzipMember = 2 };

DEFLATE_HD std::uint32_t crc32_bytes(const std::uint32_t* table, const std::uint8_t* p, std::uint32_t n,
                                     std::uint32_t c) {
  for (std::uint32_t k = 0; k < n; ++k) c = table[(c ^ p[k]) & 0xFFu] ^ (c >> 8);
  return c;
}

// The header of the member at `at` (at <= size): its kind and where its deflate data starts.
DEFLATE_HD std::int32_t read_member_header(const std::uint8_t* in, std::uint32_t size, std::uint32_t at,
                                           std::uint32_t format, const std::uint32_t* crc_table, std::uint32_t* kind,
                                           std::uint32_t* data_at) {
  if (format == kRaw) {
    *kind = kRawMember;
    *data_at = at;
    return kOk;
  }
  const std::uint32_t left = size - at;
  if (left >= 2 && in[at] == 0x1F && in[at + 1] == 0x8B) {
    if (left < 10) return kErrTruncated;
    const std::uint32_t flags = in[at + 3];
    if (in[at + 2] != 8 || (flags & 0xE0u) != 0) return kErrHeader;
    std::uint32_t p = at + 10;
    if (flags & 4u) {  // FEXTRA
      if (size - p < 2) return kErrTruncated;
      const std::uint32_t xlen = static_cast<std::uint32_t>(in[p]) | static_cast<std::uint32_t>(in[p + 1]) << 8;
      if (size - p - 2 < xlen) return kErrTruncated;
      p += 2 + xlen;
    }
    for (std::uint32_t field = 8; field <= 16; field <<= 1) {  // FNAME, FCOMMENT: zero-terminated
      if ((flags & field) == 0) continue;
      while (p < size && in[p] != 0) ++p;
      if (p == size) return kErrTruncated;
      ++p;
    }
    if (flags & 2u) {  // FHCRC: the low 16 bits of the crc32 of the header before it
      if (size - p < 2) return kErrTruncated;
      const std::uint32_t crc = ~crc32_bytes(crc_table, in + at, p - at, 0xFFFFFFFFu);
      const std::uint32_t stored = static_cast<std::uint32_t>(in[p]) | static_cast<std::uint32_t>(in[p + 1]) << 8;
      if ((crc & 0xFFFFu) != stored) return kErrHeaderCrc;
      p += 2;
    }
    *kind = kGzipMember;
    *data_at = p;
    return kOk;
  }
  if (left < 2) return left == 0 ? kErrEmpty : kErrTruncated;
  const std::uint32_t cmf = in[at], flg = in[at + 1];
  if ((cmf & 15u) != 8 || (cmf >> 4) > 7 || ((cmf << 8) | flg) % 31 != 0) return kErrHeader;
  if (flg & 0x20u) return kErrDictionary;
  *kind = kZlibMember;
  *data_at = at + 2;
  return kOk;
}

// ---- Warp helpers -----------------------------------------------------------------------------

// The first lane's value, in every lane.
DEFLATE_WARP_TEMPLATE
template <typename Warp>
DEFLATE_HD_FORCE std::uint32_t from_first(Warp& w, std::uint32_t v) {
  return w.shfl(v, 0);
}
DEFLATE_WARP_TEMPLATE
template <typename Warp>
DEFLATE_HD_FORCE std::int32_t from_first(Warp& w, std::int32_t v) {
  return static_cast<std::int32_t>(w.shfl(static_cast<std::uint32_t>(v), 0));
}

// n bytes from `in` to `out` (not overlapping) by the lanes.
DEFLATE_WARP_TEMPLATE
template <typename Warp>
DEFLATE_HD void warp_copy(Warp& w, std::uint8_t* out, const std::uint8_t* in, std::uint32_t n) {
  for (std::uint32_t k = w.lane(); k < n; k += kWarpLanes) out[k] = in[k];
}

// Sums (mod 2^32) of one value per lane, in every lane.
DEFLATE_WARP_TEMPLATE
template <typename Warp>
DEFLATE_HD std::uint32_t warp_sum(Warp& w, std::uint32_t v) {
  for (unsigned m = kWarpLanes / 2; m > 0; m >>= 1) v += w.shfl_xor(v, m);
  return v;
}
DEFLATE_WARP_TEMPLATE
template <typename Warp>
DEFLATE_HD std::uint32_t warp_xor(Warp& w, std::uint32_t v) {
  for (unsigned m = kWarpLanes / 2; m > 0; m >>= 1) v ^= w.shfl_xor(v, m);
  return v;
}

// Lane `lane`'s share [*begin, *end) of n bytes: 32 runs in order.
DEFLATE_HD void lane_share(std::uint32_t n, std::uint32_t lane, std::uint32_t* begin, std::uint32_t* end) {
  const std::uint32_t per = n / kWarpLanes + (n % kWarpLanes != 0 ? 1 : 0);
  const std::uint64_t b = static_cast<std::uint64_t>(per) * lane;
  const std::uint64_t e = b + per;
  *begin = static_cast<std::uint32_t>(b < n ? b : n);
  *end = static_cast<std::uint32_t>(e < n ? e : n);
}

// adler32 of p[0, n): each lane sums its run; the runs' sums combine by their positions.
DEFLATE_WARP_TEMPLATE
template <typename Warp>
DEFLATE_HD std::uint32_t warp_adler32(Warp& w, const std::uint8_t* p, std::uint32_t n) {
  std::uint32_t begin = 0, end = 0;
  lane_share(n, w.lane(), &begin, &end);
  std::uint64_t a = 0, b = 0;
  for (std::uint32_t k = begin; k < end;) {
    const std::uint32_t stop = end - k > 4096 ? k + 4096 : end;  // a and b stay far below 2^64
    for (; k < stop; ++k) {
      a += p[k];
      b += a;
    }
    a %= kAdlerModulus;
    b %= kAdlerModulus;
  }
  // Each byte counts once in b for every position from its own to the end of the data.
  const std::uint64_t after = n - end;
  const auto part_a = static_cast<std::uint32_t>(a);
  const auto part_b = static_cast<std::uint32_t>((b + a * (after % kAdlerModulus)) % kAdlerModulus);
  const std::uint32_t sum_a = warp_sum(w, part_a);  // 32 values below 2^16: no wrap
  const std::uint32_t sum_b = warp_sum(w, part_b);
  const std::uint32_t total_a = (1 + sum_a) % kAdlerModulus;
  const std::uint32_t total_b = static_cast<std::uint32_t>((n % kAdlerModulus + static_cast<std::uint64_t>(sum_b)) % kAdlerModulus);
  return total_b << 16 | total_a;
}

// crc32 of p[0, n): each lane's run from a zero register, moved over the bytes after it;
// the initial value's share and the final inversion added once.
DEFLATE_WARP_TEMPLATE
template <typename Warp>
DEFLATE_HD std::uint32_t warp_crc32(Warp& w, const std::uint32_t* table, const std::uint8_t* p, std::uint32_t n) {
  std::uint32_t begin = 0, end = 0;
  lane_share(n, w.lane(), &begin, &end);
  const std::uint32_t part = crc32_shift(crc32_bytes(table, p + begin, end - begin, 0), n - end);
  const std::uint32_t raw = warp_xor(w, part);
  return raw ^ crc32_shift(0xFFFFFFFFu, n) ^ 0xFFFFFFFFu;
}

// ---- Blocks -----------------------------------------------------------------------------------

// Where a member's decoding stands (the same in every lane after each step).
struct MemberState {
  std::uint32_t out_pos;       // bytes of the chunk written
  std::uint32_t member_start;  // where the member's output starts (its window's start)
};

// A stored block: its length read by the first lane, its bytes copied by the lanes.
DEFLATE_WARP_TEMPLATE
template <typename Warp>
DEFLATE_HD std::int32_t warp_stored_block(Warp& w, BitReader& br, const std::uint8_t* in, std::uint32_t in_size,
                                          std::uint8_t* out, std::uint32_t out_size, MemberState& s) {
  std::int32_t e = kOk;
  std::uint32_t at = 0, len = 0;
  if (w.lane() == 0) {
    at = br.align();
    if (in_size - at < 4) {
      e = kErrTruncated;
    } else {
      len = static_cast<std::uint32_t>(in[at]) | static_cast<std::uint32_t>(in[at + 1]) << 8;
      const std::uint32_t nlen = static_cast<std::uint32_t>(in[at + 2]) | static_cast<std::uint32_t>(in[at + 3]) << 8;
      at += 4;
      if ((len ^ 0xFFFFu) != nlen) {
        e = kErrStoredLength;
      } else if (in_size - at < len) {
        e = kErrTruncated;
      } else if (out_size - s.out_pos < len) {
        e = kErrOutputTooLarge;
      } else {
        br.start(in, in_size, at + len);
      }
    }
  }
  e = from_first(w, e);
  if (e != kOk) return e;
  at = from_first(w, at);
  len = from_first(w, len);
  warp_copy(w, out + s.out_pos, in + at, len);
  s.out_pos += len;
  w.sync();
  return kOk;
}

// The fixed codes (RFC 1951 3.2.6) into the warp's tables.
DEFLATE_WARP_TEMPLATE
template <typename Warp>
DEFLATE_HD void warp_fixed_codes(Warp& w, DeflateWarpMemory& m) {
  for (std::uint32_t s = w.lane(); s < kLitLenSymbols + kDistSymbols; s += kWarpLanes) {
    std::uint8_t len = 5;  // the distance codes
    if (s < 144) len = 8;
    else if (s < 256) len = 9;
    else if (s < 280) len = 7;
    else if (s < kLitLenSymbols) len = 8;
    m.lengths[s] = len;
  }
  w.sync();
  if (w.lane() == 0) {
    prepare_code(m.lengths, kLitLenSymbols, m.litlen, false);
    prepare_code(m.lengths + kLitLenSymbols, kDistSymbols, m.dist, false);
  }
  w.sync();
  warp_fill_table(w, m.litlen);
  warp_fill_table(w, m.dist);
  w.sync();
}

// read_code_lengths' work, on a reader in registers.
DEFLATE_HD_FORCE std::int32_t read_code_lengths_with(BitReader& br, DeflateWarpMemory& m, std::uint32_t total) {
  std::uint32_t i = 0;
  while (i < total) {
    std::uint32_t symbol = 0;
    const std::int32_t e = decode_symbol(br, m.codelen, &symbol);
    if (e != kOk) return e;
    if (symbol < 16) {
      m.lengths[i++] = static_cast<std::uint8_t>(symbol);
      continue;
    }
    std::uint32_t value = 0, repeat = 0;
    if (symbol == 16) {
      if (i == 0) return kErrCodeLengths;
      if (!br.need(2)) return kErrTruncated;
      value = m.lengths[i - 1];
      repeat = 3 + br.peek(2);
      br.drop(2);
    } else if (symbol == 17) {
      if (!br.need(3)) return kErrTruncated;
      repeat = 3 + br.peek(3);
      br.drop(3);
    } else {
      if (!br.need(7)) return kErrTruncated;
      repeat = 11 + br.peek(7);
      br.drop(7);
    }
    if (total - i < repeat) return kErrCodeLengths;
    for (std::uint32_t k = 0; k < repeat; ++k) m.lengths[i++] = static_cast<std::uint8_t>(value);
  }
  return kOk;
}

// The first lane reads the code lengths of a dynamic block (its code-length code already
// prepared and its table filled).
DEFLATE_HD std::int32_t read_code_lengths(BitReader& reader, DeflateWarpMemory& m, std::uint32_t total) {
  BitReader br = reader;  // in registers, as in decode_round
  const std::int32_t e = read_code_lengths_with(br, m, total);
  reader = br;
  return e;
}

// A dynamic block's codes: its header read by the first lane, the tables filled by all.
DEFLATE_WARP_TEMPLATE
template <typename Warp>
DEFLATE_HD std::int32_t warp_dynamic_codes(Warp& w, BitReader& br, DeflateWarpMemory& m) {
  std::int32_t e = kOk;
  std::uint32_t hlit = 0, hdist = 0;
  if (w.lane() == 0) {
    if (!br.need(14)) {
      e = kErrTruncated;
    } else {
      hlit = br.peek(5) + 257;
      hdist = (br.peek(10) >> 5) + 1;
      const std::uint32_t hclen = (br.peek(14) >> 10) + 4;
      br.drop(14);
      if (hlit > kMaxLitLenCodes || hdist > kMaxDistCodes) e = kErrCodeCounts;
      for (std::uint32_t k = 0; k < kCodeLengthSymbols; ++k) m.lengths[k] = 0;
      for (std::uint32_t k = 0; e == kOk && k < hclen; ++k) {
        if (!br.need(3)) {
          e = kErrTruncated;
        } else {
          m.lengths[code_length_order(k)] = static_cast<std::uint8_t>(br.peek(3));
          br.drop(3);
        }
      }
      if (e == kOk) e = prepare_code(m.lengths, kCodeLengthSymbols, m.codelen, true);
    }
  }
  e = from_first(w, e);
  if (e != kOk) return e;
  w.sync();
  warp_fill_table(w, m.codelen);
  w.sync();
  if (w.lane() == 0) {
    e = read_code_lengths(br, m, hlit + hdist);
    if (e == kOk && m.lengths[kEndOfBlock] == 0) e = kErrCodeLengths;
    if (e == kOk) e = prepare_code(m.lengths, hlit, m.litlen, false);
    if (e == kOk) e = prepare_code(m.lengths + hlit, hdist, m.dist, false);
  }
  e = from_first(w, e);
  if (e != kOk) return e;
  w.sync();
  warp_fill_table(w, m.litlen);
  warp_fill_table(w, m.dist);
  w.sync();
  return kOk;
}

// The first lane decodes up to 32 symbols into m.tokens: literals and matches checked
// against the output slot and the window, until the end of the block. Sets *count and *end.
// The reader is copied in and out so that it lives in registers: the caller's lives in the
// warp's stack (local memory), where every bit taken would be a load and a store.
DEFLATE_HD std::int32_t decode_round(BitReader& reader, DeflateWarpMemory& m, std::uint32_t out_pos,
                                     std::uint32_t out_size, std::uint32_t member_start, std::uint32_t* count,
                                     std::uint32_t* end) {
  BitReader br = reader;
  std::uint32_t n = 0, pos = out_pos;
  std::int32_t e = kOk;
  while (n < kWarpLanes) {
    // While 8 bytes of input are left, a refill loads 56 bits or more: all that one symbol
    // can take (litlen code 15, length bits 5, distance code 15, distance bits 13), so its
    // fields are read without checking for each that its bits are there. Near the end of the
    // input, the careful path below checks each read.
    if (br.count < kMaxSymbolBits) br.refill();
    if (br.count >= kMaxSymbolBits) {
      std::uint32_t entry = m.litlen.table[br.peek(kLitLenTableBits)];
      if (entry == 0) entry = canonical_lookup(m.litlen, br.peek(kMaxCodeBits), kMaxCodeBits);
      br.drop(entry & 15u);
      const std::uint32_t symbol = entry >> 4;
      if (symbol < 256 && entry != 0 && pos != out_size) {
        m.tokens[n++] = Token{symbol, 0};
        ++pos;
        continue;
      }
      if (symbol == kEndOfBlock) {
        *end = 1;
        break;
      }
      if (entry == 0 || symbol > 285) {
        e = kErrSymbol;
        break;
      }
      if (symbol < 256) {
        e = kErrOutputTooLarge;
        break;
      }
      const std::uint32_t length_code_bits = m.length_codes[symbol - 257];
      const std::uint32_t length = (length_code_bits & 0xFFFFu) + br.peek(length_code_bits >> 16);
      br.drop(length_code_bits >> 16);
      std::uint32_t dentry = m.dist.table[br.peek(kDistTableBits)];
      if (dentry == 0) dentry = canonical_lookup(m.dist, br.peek(kMaxCodeBits), kMaxCodeBits);
      const std::uint32_t dsym = dentry >> 4;
      br.drop(dentry & 15u);
      const std::uint32_t distance_code_bits = m.distance_codes[dsym & 31u];
      const std::uint32_t distance = (distance_code_bits & 0xFFFFu) + br.peek(distance_code_bits >> 16);
      br.drop(distance_code_bits >> 16);
      // One test for the four ways a match can be wrong; which one, only when it is.
      if (dentry == 0 || dsym >= kMaxDistCodes || distance > pos - member_start || length > out_size - pos) {
        if (dentry == 0 || dsym >= kMaxDistCodes) e = kErrSymbol;
        else if (distance > pos - member_start) e = kErrDistance;
        else e = kErrOutputTooLarge;
        break;
      }
      m.tokens[n++] = Token{length, distance};
      pos += length;
      continue;
    }
    std::uint32_t symbol = 0;
    e = decode_symbol(br, m.litlen, &symbol);
    if (e != kOk) break;
    if (symbol < 256) {
      if (pos == out_size) {
        e = kErrOutputTooLarge;
        break;
      }
      m.tokens[n++] = Token{symbol, 0};
      ++pos;
      continue;
    }
    if (symbol == kEndOfBlock) {
      *end = 1;
      break;
    }
    if (symbol > 285) {
      e = kErrSymbol;
      break;
    }
    std::uint32_t base = 0, extra = 0;
    length_code(symbol, &base, &extra);
    if (!br.need(extra)) {
      e = kErrTruncated;
      break;
    }
    const std::uint32_t length = base + br.peek(extra);
    br.drop(extra);
    std::uint32_t dsym = 0;
    e = decode_symbol(br, m.dist, &dsym);
    if (e != kOk) break;
    if (dsym >= kMaxDistCodes) {
      e = kErrSymbol;
      break;
    }
    distance_code(dsym, &base, &extra);
    if (!br.need(extra)) {
      e = kErrTruncated;
      break;
    }
    const std::uint32_t distance = base + br.peek(extra);
    br.drop(extra);
    if (distance > pos - member_start) {
      e = kErrDistance;
      break;
    }
    if (length > out_size - pos) {
      e = kErrOutputTooLarge;
      break;
    }
    m.tokens[n++] = Token{length, distance};
    pos += length;
  }
  reader = br;
  *count = n;
  return e;
}

// Where byte q of a round of n tokens (q below the round's total) comes from: true with its
// value when a literal of the round gives it, else false with its position before the round
// (negative, from the round's start). A byte of a match at distance d repeats the byte d
// before it, so it is the byte (q - start) mod d after start - d: before its token's start.
// Each step goes to an earlier token, so there are at most n steps.
DEFLATE_HD_FORCE bool trace_round_byte(const DeflateWarpMemory& m, std::uint32_t n, std::uint32_t q,
                                       std::uint32_t* value, std::int32_t* back) {
  for (;;) {
    std::uint32_t lo = 0, hi = n - 1;  // the first token ending after q (ends[n - 1] > q)
    while (lo < hi) {
      const std::uint32_t mid = (lo + hi) >> 1;
      if (m.ends[mid] > q) hi = mid;
      else lo = mid + 1;
    }
    const Token t = m.tokens[lo];
    if (t.distance == 0) {
      *value = t.value;
      return true;
    }
    const std::uint32_t start = lo == 0 ? 0 : m.ends[lo - 1];
    const std::uint32_t offset = q - start;
    const std::uint32_t period = offset < t.distance ? offset : offset % t.distance;
    const auto from = static_cast<std::int64_t>(start) - t.distance + period;
    if (from < 0) {
      *back = static_cast<std::int32_t>(from);
      return false;
    }
    q = static_cast<std::uint32_t>(from);
  }
}

// Bytes each lane writes per pass of a round: their sources are resolved first, then read
// together, then written.
constexpr std::uint32_t kRoundBytesPerLane = 4;

// A Huffman block's symbols, in rounds (see the top of this file).
DEFLATE_WARP_TEMPLATE
template <typename Warp>
DEFLATE_HD std::int32_t warp_huffman_block(Warp& w, BitReader& br, std::uint8_t* out, std::uint32_t out_size,
                                           MemberState& s, DeflateWarpMemory& m) {
  const std::uint32_t lane = w.lane();
  // Each round decodes at least one symbol (or ends the block), and each symbol takes at
  // least one bit of the input: the rounds are bounded by the input's size.
  for (;;) {
    std::uint32_t n = 0, end = 0, word = 0;
    if (lane == 0) {
      const std::int32_t e = decode_round(br, m, s.out_pos, out_size, s.member_start, &n, &end);
      word = n | end << 6 | static_cast<std::uint32_t>(e) << 7;  // one shuffle for the three
    }
    w.sync();  // the tokens, visible to the lanes
    word = from_first(w, word);
    const auto e = static_cast<std::int32_t>(word >> 7);
    if (e != kOk) return e;
    n = word & 63u;
    end = (word >> 6) & 1u;
    std::uint32_t len = 0;
    if (lane < n) {
      const Token t = m.tokens[lane];
      len = t.distance != 0 ? t.value : 1u;
    }
    std::uint32_t sum = len;  // inclusive prefix sum over the lanes
    for (unsigned d = 1; d < kWarpLanes; d <<= 1) {
      const std::uint32_t v = w.shfl_up(sum, d);
      if (lane >= d) sum += v;
    }
    if (lane < n) m.ends[lane] = sum;
    const std::uint32_t total = w.shfl(sum, kWarpLanes - 1);
    w.sync();  // the ends, visible to the lanes
    std::uint8_t* round = out + s.out_pos;
    for (std::uint32_t pass = 0; pass < total; pass += kWarpLanes * kRoundBytesPerLane) {
      std::uint32_t value[kRoundBytesPerLane];
      std::int32_t back[kRoundBytesPerLane];
      DEFLATE_UNROLL
      for (std::uint32_t i = 0; i < kRoundBytesPerLane; ++i) {
        const std::uint32_t q = pass + i * kWarpLanes + lane;
        value[i] = 0;
        back[i] = 0;
        if (q < total) trace_round_byte(m, n, q, &value[i], &back[i]);
      }
      DEFLATE_UNROLL
      for (std::uint32_t i = 0; i < kRoundBytesPerLane; ++i) {
        if (back[i] < 0) value[i] = round[back[i]];  // written by an earlier round
      }
      DEFLATE_UNROLL
      for (std::uint32_t i = 0; i < kRoundBytesPerLane; ++i) {
        const std::uint32_t q = pass + i * kWarpLanes + lane;
        if (q < total) round[q] = static_cast<std::uint8_t>(value[i]);
      }
    }
    s.out_pos += total;
    w.sync();  // the round's bytes, and the tokens read before the next round writes them
    if (end != 0) return kOk;
  }
}

// ---- A chunk ------------------------------------------------------------------------------------

// Decodes the chunk in[0, in_size) (a Format) into out[0, out_size); *produced: the bytes it
// decoded to (when it returns kOk).
DEFLATE_WARP_TEMPLATE
template <typename Warp>
DEFLATE_HD std::int32_t warp_inflate(Warp& w, const std::uint8_t* in, std::uint32_t in_size, std::uint8_t* out,
                                     std::uint32_t out_size, std::uint32_t format, DeflateWarpMemory& m,
                                     std::uint32_t* produced) {
  const std::uint32_t lane = w.lane();
  *produced = 0;
  if (in_size == 0) return kErrEmpty;
  if (format != kRaw) {
    for (std::uint32_t i = lane; i < 256; i += kWarpLanes) m.crc_table[i] = crc32_table_entry(i);
  }
  {
    // One entry per lane; the reserved symbols' entries (length 286-288, distance 30 and 31)
    // are zero: no extra bits (the fast path reads them before it refuses the symbol).
    std::uint32_t base = 0, extra = 0;
    if (lane < 29) length_code(257 + lane, &base, &extra);
    m.length_codes[lane] = lane < 29 ? (base | extra << 16) : 0u;
    base = 0;
    extra = 0;
    if (lane < kMaxDistCodes) distance_code(lane, &base, &extra);
    m.distance_codes[lane] = lane < kMaxDistCodes ? (base | extra << 16) : 0u;
  }
  w.sync();
  BitReader br;  // the first lane's
  MemberState s{0, 0};
  std::uint32_t at = 0;  // the next member's first byte
  // Each member takes at least 3 bytes of the input (a raw one: the whole input).
  for (;;) {
    std::int32_t e = kOk;
    std::uint32_t kind = 0, data_at = 0;
    if (lane == 0) {
      e = read_member_header(in, in_size, at, format, m.crc_table, &kind, &data_at);
      br.start(in, in_size, data_at);
    }
    e = from_first(w, e);
    if (e != kOk) return e;
    kind = from_first(w, kind);
    s.member_start = s.out_pos;
    // Each block takes at least 3 bits of the input.
    for (std::uint32_t last = 0; last == 0;) {
      std::uint32_t header = 0;
      if (lane == 0) {
        if (br.need(3)) {
          header = br.peek(3);
          br.drop(3);
        } else {
          e = kErrTruncated;
        }
      }
      e = from_first(w, e);
      if (e != kOk) return e;
      header = from_first(w, header);
      last = header & 1u;
      const std::uint32_t type = header >> 1;
      if (type == 0) {
        e = warp_stored_block(w, br, in, in_size, out, out_size, s);
      } else if (type == 3) {
        e = kErrBlockType;
      } else {
        if (type == 1) {
          warp_fixed_codes(w, m);
        } else {
          e = warp_dynamic_codes(w, br, m);
        }
        if (e == kOk) e = warp_huffman_block(w, br, out, out_size, s, m);
      }
      if (e != kOk) return e;
    }
    std::uint32_t end_at = 0;
    if (lane == 0) end_at = br.align();
    end_at = from_first(w, end_at);
    const std::uint32_t member_bytes = s.out_pos - s.member_start;
    if (kind == kZlibMember) {
      if (in_size - end_at < 4) return kErrTruncated;
      const std::uint32_t adler = warp_adler32(w, out + s.member_start, member_bytes);
      if (adler != read_be32(in + end_at)) return kErrAdler32;
      end_at += 4;
    } else if (kind == kGzipMember) {
      if (in_size - end_at < 8) return kErrTruncated;
      const std::uint32_t crc = warp_crc32(w, m.crc_table, out + s.member_start, member_bytes);
      if (crc != read_le32(in + end_at)) return kErrCrc32;
      if (member_bytes != read_le32(in + end_at + 4)) return kErrIsize;
      end_at += 8;
    }
    at = end_at;
    if (format == kGzip) {
      while (at < in_size && in[at] == 0) ++at;  // zero padding between and after members
      if (at == in_size) break;
      continue;  // another member
    }
    if (at != in_size) return kErrTrailing;
    break;
  }
  *produced = s.out_pos;
  return kOk;
}

// Chunk c of a launch, by one warp: its status set when it fails (or decodes to another size
// than its output slot).
DEFLATE_WARP_TEMPLATE
template <typename Warp>
DEFLATE_HD void warp_inflate_chunk(Warp& w, const DeflateLaunch& L, std::uint32_t c, DeflateWarpMemory& m) {
  const DeflateChunkJob& job = L.chunks[c];
  std::uint32_t produced = 0;
  std::int32_t e = warp_inflate(w, reinterpret_cast<const std::uint8_t*>(job.input), job.input_size,
                                reinterpret_cast<std::uint8_t*>(job.output), job.output_size, job.format, m, &produced);
  if (e == kOk && produced != job.output_size) e = kErrOutputSize;
  if (w.lane() == 0 && e != kOk) L.status[job.status] = e;
  w.sync();  // the warp's memory is reused for its next chunk
}

}  // namespace zarrkit::gpu::deflate
