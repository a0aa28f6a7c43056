// LZ4 block encoding for the GPU write path, written once for the device and the host.
//
// A block is cut into segments of at most kLz4SegmentBytes (64 KiB: one per blosc split of
// the usual sizes; 256 per 16 MiB numcodecs.lz4 chunk, ratio 1.87 against 1.94 with 256 KiB
// segments and liblz4's 1.96 on family N float32, measured on the host); each segment is
// encoded on its own by one warp (`Width` 32) or, on the host, by one thread (`Width` 1),
// and the segments are then stitched into one standard LZ4 block. Both widths run the same steps and produce
// the same bytes, so the host tests (liblz4 and c-blosc read the blocks back) check the very
// encoder the kernels run.
//
// Encoding a segment. A window of 32 positions is looked at together, each lane taking
// one: it hashes the 5 bytes there and takes as candidate the latest earlier position with
// that hash (from the table, which holds positions before the window, or from an earlier
// lane of the window). The first position whose candidate really matches starts the next
// match: the positions before it go into the table, the match is extended backwards over
// the pending literals and forwards 32 bytes per step, and the sequence is written. A
// window without a match goes into the table whole, and windows after misses spread their
// positions out (LZ4's acceleration). This is LZ4's greedy fast mode with every position
// hashed; the blocks are standard, the bytes are not liblz4's.
//
// Stitching. A segment does not write its first sequence (whose literals may begin in an
// earlier segment, after that one's last match) nor the literals after its last match; it
// reports them (Lz4Segment), and the stitch writes, per segment with a match, the "head"
// sequence (pending literals + its first match) followed by the segment's other sequences,
// and at the end the block's last, literal-only sequence. Matches start at or before
// n - 12 and end at or before n - 5 and the segment's end, as the format requires.
//
// The hash table holds positions modulo 65536 (16 bits each): any earlier position whose
// 4 bytes equal is a valid match within 65535 bytes, so a stale or wrapped entry only costs
// a failed comparison, never a wrong block.
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/device_codecs.cuh"

namespace zarrkit::gpu {

constexpr unsigned kLz4HashBits = 12;
constexpr std::uint32_t kLz4SegmentBytes = 64u << 10;
constexpr unsigned kLz4Window = 32;
constexpr std::uint32_t kLz4NoMatch = 0xFFFFFFFFu;

// What encoding one segment leaves for the stitch (positions are block positions).
struct Lz4Segment {
  std::uint32_t first_match = kLz4NoMatch;  // start of its first match
  std::uint32_t first_offset = 0;
  std::uint32_t first_length = 0;
  std::uint32_t tail = 0;       // start of the literals after its last match
  std::uint32_t rest_size = 0;  // bytes of its other sequences, written at `rest`
  std::uint32_t overflow = 0;   // 1: they did not fit in the capacity given
};

// Bytes a segment's other sequences can take: never more than this (literal runs cost one
// length byte per 255 and at most one per 15-byte run, matches of 4+ bytes at most 3 + one
// per 255).
ZK_HD std::uint32_t lz4_rest_capacity(std::uint32_t segment_bytes) { return segment_bytes + segment_bytes / 8 + 64; }

ZK_HD std::uint32_t lz4_read32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// The hash of the 5 bytes at p (8 must be readable), as liblz4 hashes on 64-bit machines:
// one byte more than a match needs separates positions far better on typed data (measured
// on the host, family N float32 in 64 KiB segments: ratio 1.58 with 4 bytes, 1.87 with 5;
// liblz4 1.96).
ZK_HD std::uint32_t lz4_hash5(const std::uint8_t* p) {
  const std::uint64_t v = static_cast<std::uint64_t>(lz4_read32(p)) | static_cast<std::uint64_t>(lz4_read32(p + 4)) << 32;
  return static_cast<std::uint32_t>(((v << 24) * 889523592379ull) >> (64 - kLz4HashBits));
}

ZK_HD unsigned lowest_bit(std::uint32_t mask) {
#if defined(__CUDA_ARCH__)
  return static_cast<unsigned>(__ffs(static_cast<int>(mask)) - 1);
#else
  return static_cast<unsigned>(__builtin_ctz(mask));
#endif
}

// ---- Sequences ----------------------------------------------------------------------------

// Bytes of a length continuation: for a field of 15 (nibble full), `rest` = value - 15.
ZK_HD std::uint32_t lz4_length_bytes(std::uint32_t rest) { return rest / 255 + 1; }

// The encoded size of one sequence; match_length 0 means the last, literal-only one.
ZK_HD std::uint32_t lz4_sequence_size(std::uint32_t literals, std::uint32_t match_length) {
  std::uint32_t size = 1 + literals + (literals >= 15 ? lz4_length_bytes(literals - 15) : 0);
  if (match_length != 0) size += 2 + (match_length - 4 >= 15 ? lz4_length_bytes(match_length - 4 - 15) : 0);
  return size;
}

// Writes one sequence at out (lz4_sequence_size bytes): literals from `literals`, then
// (unless match_length is 0) the match. Lane `lane` of `width` writes its share.
ZK_HD void lz4_write_sequence(const std::uint8_t* literals, std::uint32_t count, std::uint32_t offset,
                              std::uint32_t match_length, std::uint8_t* out, unsigned lane, unsigned width) {
  const unsigned lit_code = count >= 15 ? 15u : count;
  const std::uint32_t ml = match_length == 0 ? 0 : match_length - 4;
  const unsigned match_code = ml >= 15 ? 15u : ml;
  if (lane == 0) out[0] = static_cast<std::uint8_t>(lit_code << 4 | match_code);
  std::uint32_t at = 1;
  if (lit_code == 15) {
    const std::uint32_t rest = count - 15, n = lz4_length_bytes(rest);
    for (std::uint32_t i = lane; i < n; i += width) out[at + i] = static_cast<std::uint8_t>(i + 1 < n ? 255 : rest % 255);
    at += n;
  }
  for (std::uint32_t i = lane; i < count; i += width) out[at + i] = literals[i];
  at += count;
  if (match_length == 0) return;
  if (lane == 0) {
    out[at] = static_cast<std::uint8_t>(offset);
    out[at + 1] = static_cast<std::uint8_t>(offset >> 8);
  }
  at += 2;
  if (match_code == 15) {
    const std::uint32_t rest = ml - 15, n = lz4_length_bytes(rest);
    for (std::uint32_t i = lane; i < n; i += width) out[at + i] = static_cast<std::uint8_t>(i + 1 < n ? 255 : rest % 255);
  }
}

// ---- Lanes --------------------------------------------------------------------------------
//
// Position k of a window belongs to lane k % Width, in its slot k / Width. On the device
// (Width 32) every lane holds one slot and the warp intrinsics combine them; on the host
// (Width 1) the one lane holds all 32 and loops.

template <unsigned Width>
struct WindowLanes {
  static_assert(Width == 1 || Width == kLz4Window, "a window is one warp or one host thread");
  static constexpr unsigned kSlots = kLz4Window / Width;

  // Bit k set where pred holds for position k.
  static ZK_HD std::uint32_t mask(const bool (&pred)[kSlots], unsigned lane) {
#if defined(__CUDA_ARCH__)
    if constexpr (Width == kLz4Window) return __ballot_sync(0xFFFFFFFFu, pred[0]);
#endif
    std::uint32_t m = 0;
    for (unsigned s = 0; s < kSlots; ++s) m |= static_cast<std::uint32_t>(pred[s]) << (lane + s * Width);
    return m;
  }
  // The value position k holds.
  static ZK_HD std::uint32_t pick(const std::uint32_t (&value)[kSlots], unsigned k) {
#if defined(__CUDA_ARCH__)
    if constexpr (Width == kLz4Window) return __shfl_sync(0xFFFFFFFFu, value[0], static_cast<int>(k));
#endif
    return value[k / Width];
  }
  // For each slot: the positions of the window whose key equals this slot's key.
  static ZK_HD void same_key(const std::uint32_t (&key)[kSlots], std::uint32_t (&same)[kSlots]) {
#if defined(__CUDA_ARCH__)
    if constexpr (Width == kLz4Window) {
      same[0] = __match_any_sync(0xFFFFFFFFu, key[0]);
    } else {
      same_key_in_lane(key, same);
    }
#else
    same_key_in_lane(key, same);
#endif
  }
  static ZK_HD void same_key_in_lane(const std::uint32_t (&key)[kSlots], std::uint32_t (&same)[kSlots]) {
    for (unsigned s = 0; s < kSlots; ++s) {
      same[s] = 0;
      for (unsigned t = 0; t < kSlots; ++t) same[s] |= static_cast<std::uint32_t>(key[t] == key[s]) << (t * Width);
    }
  }
};

ZK_HD unsigned highest_bit(std::uint32_t mask) {
#if defined(__CUDA_ARCH__)
  return 31u - static_cast<unsigned>(__clz(static_cast<int>(mask)));
#else
  return 31u - static_cast<unsigned>(__builtin_clz(mask));
#endif
}

// ---- One segment ------------------------------------------------------------------------------

// Encodes positions [begin, end) of the n-byte block at `block` (all of which is readable:
// matches may reach back before `begin`). `rest` receives the sequences after the first,
// at most `capacity` bytes. `table` holds 1 << kLz4HashBits entries (shared memory on the
// device, the warp's own); every lane of the warp calls this with its lane number.
template <unsigned Width>
ZK_HD Lz4Segment lz4_encode_segment(const std::uint8_t* block, std::uint32_t n, std::uint32_t begin,
                                    std::uint32_t end, std::uint8_t* rest, std::uint32_t capacity,
                                    std::uint16_t* table, unsigned lane) {
  using Lanes = WindowLanes<Width>;
  constexpr unsigned kSlots = Lanes::kSlots;
  Lz4Segment result;
  result.tail = begin;
  // Matches start at or before `last_start` and end at or before `match_end`.
  if (n < 13 || end < begin + 4) return result;
  const std::uint32_t match_end = end < n - 5 ? end : n - 5;
  const std::uint32_t last_start = match_end - 4 < n - 12 ? match_end - 4 : n - 12;
  if (last_start < begin) return result;
  for (std::uint32_t i = lane; i < (1u << kLz4HashBits); i += Width) table[i] = 0;
  lane_sync(Width);

  std::uint32_t ip = begin, anchor = begin, op = 0, misses = 0;
  bool first = true;
  while (ip <= last_start) {
    const std::uint32_t stride = 1 + (misses >> 1);
    std::uint32_t key[kSlots], candidate[kSlots], position[kSlots];
    bool valid[kSlots];
    for (unsigned s = 0; s < kSlots; ++s) {
      const std::uint32_t k = lane + s * Width;
      const std::uint64_t p = ip + static_cast<std::uint64_t>(k) * stride;
      valid[s] = p <= last_start;
      position[s] = valid[s] ? static_cast<std::uint32_t>(p) : 0;
      key[s] = valid[s] ? lz4_hash5(block + p) : (1u << kLz4HashBits) + k;  // unique: no lane shares it
      const std::uint32_t distance = valid[s] ? (position[s] - table[key[s]]) & 0xFFFFu : 0;
      candidate[s] = distance != 0 && distance <= position[s] ? position[s] - distance : kLz4NoMatch;
    }
    lane_sync(Width);  // every lane has read the table before anyone writes it
    std::uint32_t same[kSlots];
    Lanes::same_key(key, same);
    bool found[kSlots];
    for (unsigned s = 0; s < kSlots; ++s) {
      const std::uint32_t k = lane + s * Width;
      const std::uint32_t earlier = same[s] & ((1u << k) - 1u);
      if (earlier != 0) candidate[s] = ip + highest_bit(earlier) * stride;
      found[s] = valid[s] && candidate[s] != kLz4NoMatch && position[s] - candidate[s] <= 65535u &&
                 lz4_read32(block + candidate[s]) == lz4_read32(block + position[s]);
    }
    const std::uint32_t matches = Lanes::mask(found, lane);
    // Into the table: every valid position up to the first match (all when there is none);
    // of positions with the same hash, the latest.
    const std::uint32_t inserted = matches == 0 ? 0xFFFFFFFFu : (2u << lowest_bit(matches)) - 1u;
    for (unsigned s = 0; s < kSlots; ++s) {
      const std::uint32_t k = lane + s * Width;
      if (!valid[s] || !(inserted >> k & 1u)) continue;
      if (Width == 1 || highest_bit(same[s] & inserted) == k) table[key[s]] = static_cast<std::uint16_t>(position[s]);
    }
    lane_sync(Width);
    if (matches == 0) {
      ip += kLz4Window * stride;
      ++misses;
      continue;
    }
    misses = 0;
    const unsigned k0 = lowest_bit(matches);
    std::uint32_t start = ip + k0 * stride;
    std::uint32_t from = Lanes::pick(candidate, k0);
    std::uint32_t length = 4;
    while (start > anchor && from > 0 && block[start - 1] == block[from - 1]) {  // every lane alike
      --start;
      --from;
      ++length;
    }
    for (;;) {  // forwards, a window of bytes at a time
      bool stop[kSlots];
      for (unsigned s = 0; s < kSlots; ++s) {
        const std::uint32_t q = start + length + lane + s * Width;
        stop[s] = q >= match_end || block[q] != block[from + length + lane + s * Width];
      }
      const std::uint32_t stops = Lanes::mask(stop, lane);
      if (stops != 0) {
        length += lowest_bit(stops);
        break;
      }
      length += kLz4Window;
    }
    if (first) {
      result.first_match = start;
      result.first_offset = start - from;
      result.first_length = length;
      first = false;
    } else {
      const std::uint32_t size = lz4_sequence_size(start - anchor, length);
      if (size > capacity - op) {
        result.overflow = 1;
        return result;
      }
      lz4_write_sequence(block + anchor, start - anchor, start - from, length, rest + op, lane, Width);
      op += size;
    }
    ip = start + length;
    anchor = ip;
    result.tail = ip;
    result.rest_size = op;
    // As LZ4 does: the position two before the match's end goes into the table.
    if (ip - 2 >= begin && ip - 2 <= last_start) {
      lane_sync(Width);
      if (lane == 0) table[lz4_hash5(block + ip - 2)] = static_cast<std::uint16_t>(ip - 2);
    }
    lane_sync(Width);
  }
  return result;
}

// ---- Stitching --------------------------------------------------------------------------------

// Where segment s's head sequence goes in the block, and where its literals start.
struct Lz4Piece {
  std::uint32_t at = 0;
  std::uint32_t literals_from = 0;
};
// The block's last sequence: literals [from, n) at `at`.
struct Lz4BlockEnd {
  std::uint32_t from = 0;
  std::uint32_t at = 0;
};

// Lays out the block of `count` encoded segments (n bytes of input): pieces[s] for each
// segment with a match; returns the block's size (at most 2^32 - 1 for any input below 2 GiB).
ZK_HD std::uint64_t lz4_plan_block(const Lz4Segment* segments, std::uint32_t count, std::uint32_t n,
                                   Lz4Piece* pieces, Lz4BlockEnd& end) {
  std::uint64_t at = 0;
  std::uint32_t pending = 0;
  for (std::uint32_t s = 0; s < count; ++s) {
    const Lz4Segment& seg = segments[s];
    if (seg.first_match == kLz4NoMatch) continue;
    pieces[s] = {static_cast<std::uint32_t>(at), pending};
    at += lz4_sequence_size(seg.first_match - pending, seg.first_length) + seg.rest_size;
    pending = seg.tail;
  }
  end = {pending, static_cast<std::uint32_t>(at)};
  return at + lz4_sequence_size(n - pending, 0);
}

// Writes segment s's part of the block planned above: its head and its other sequences
// (`rest`, as the encoder wrote them).
ZK_HD void lz4_write_piece(const std::uint8_t* block, const Lz4Segment& seg, const Lz4Piece& piece,
                           const std::uint8_t* rest, std::uint8_t* out, unsigned lane, unsigned width) {
  if (seg.first_match == kLz4NoMatch) return;
  std::uint8_t* head = out + piece.at;
  const std::uint32_t literals = seg.first_match - piece.literals_from;
  lz4_write_sequence(block + piece.literals_from, literals, seg.first_offset, seg.first_length, head, lane, width);
  std::uint8_t* after = head + lz4_sequence_size(literals, seg.first_length);
  for (std::uint32_t i = lane; i < seg.rest_size; i += width) after[i] = rest[i];
}

ZK_HD void lz4_write_block_end(const std::uint8_t* block, std::uint32_t n, const Lz4BlockEnd& end, std::uint8_t* out,
                               unsigned lane, unsigned width) {
  lz4_write_sequence(block + end.from, n - end.from, 0, 0, out + end.at, lane, width);
}

ZK_HD std::uint32_t lz4_segment_count(std::uint32_t n) {
  return n == 0 ? 1 : (n + kLz4SegmentBytes - 1) / kLz4SegmentBytes;
}

// A whole block on the host, segment by segment then stitched, as the device does it (the
// tests and the host's own checks use it). Returns the block's size, or 0 when it would
// not fit in `capacity`.
inline std::uint32_t lz4_encode_block(const std::uint8_t* in, std::uint32_t n, std::uint8_t* out,
                                      std::uint32_t capacity) {
  const std::uint32_t count = lz4_segment_count(n);
  std::vector<Lz4Segment> segments(count);
  std::vector<Lz4Piece> pieces(count);
  std::vector<std::vector<std::uint8_t>> rests(count);
  std::vector<std::uint16_t> table(1u << kLz4HashBits);
  for (std::uint32_t s = 0; s < count; ++s) {
    const std::uint32_t begin = s * kLz4SegmentBytes;
    const std::uint32_t end = n - begin < kLz4SegmentBytes ? n : begin + kLz4SegmentBytes;
    rests[s].resize(lz4_rest_capacity(end - begin));
    segments[s] = lz4_encode_segment<1>(in, n, begin, end, rests[s].data(), static_cast<std::uint32_t>(rests[s].size()),
                                        table.data(), 0);
    if (segments[s].overflow) return 0;  // cannot happen: the capacity is an upper bound
  }
  Lz4BlockEnd end;
  const std::uint64_t size = lz4_plan_block(segments.data(), count, n, pieces.data(), end);
  if (size > capacity) return 0;
  for (std::uint32_t s = 0; s < count; ++s) lz4_write_piece(in, segments[s], pieces[s], rests[s].data(), out, 0, 1);
  lz4_write_block_end(in, n, end, out, 0, 1);
  return static_cast<std::uint32_t>(size);
}

}  // namespace zarrkit::gpu
