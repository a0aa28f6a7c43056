// LZ4 blocks decoded through shared memory (the "window" kernels of kernels.cu), written
// once for the device and the host like device_codecs.cuh, so that the host tests run the
// very parse, bounds checks, ring and window logic the kernels run.
//
// Why: one warp decodes one LZ4 block, and on family-N float32 a block is a sequence every
// ~8 output bytes (0.85 literals + a 7.2-byte match, 3.85 compressed bytes). The warp-direct
// decoder (device_codecs.cuh) spends ~700 cycles per sequence: each token, offset and
// literal is a dependent global load, and each match reads output written a moment before,
// from L2. Here:
//   - the compressed stream sits in a ring of shared memory filled ahead of the parse with
//     asynchronous copies (RingInput), so header bytes come from shared memory;
//   - the last W bytes of output sit in a window of shared memory (WindowOutput), so that
//     matches read shared memory; output goes to global memory as it is produced (or, when
//     the whole block fits in the window, once at the end with wide stores); matches that
//     reach further back than the window read global memory;
//   - the 16 bytes at the next token are read (one broadcast load) before the current
//     sequence's copies, so the parse of one sequence overlaps the copies of the previous.
//
// The parse accepts exactly what lz4_decode (device_codecs.cuh), and so LZ4_decompress_safe,
// accepts: the same checks in the same order on the same values; only where each byte is
// read from differs.
#pragma once

#include <cstdint>
#include <cstring>

#include "gpu/device_codecs.cuh"

#if defined(__CUDACC__)
#include <cuda_pipeline_primitives.h>
#endif

namespace zarrkit::gpu {

// 16 consecutive stream bytes in four little-endian words (a token and what follows it).
struct Bytes16 {
  std::uint32_t w[4];
  ZK_HD unsigned byte(std::uint32_t i) const {  // i < 16
    const std::uint32_t word = i < 8 ? (i < 4 ? w[0] : w[1]) : (i < 12 ? w[2] : w[3]);
    return (word >> (8 * (i & 3u))) & 0xFFu;
  }
  // Bytes i and i + 1 as a little-endian 16-bit value (i < 15).
  ZK_HD unsigned pair(std::uint32_t i) const;
};

ZK_HD std::uint32_t funnel_right(std::uint32_t lo, std::uint32_t hi, unsigned bits) {  // bits < 32
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(hi) << 32 | lo) >> bits);
}

ZK_HD unsigned Bytes16::pair(std::uint32_t i) const {
  const std::uint32_t word = i >> 2;
  const std::uint32_t low = word < 2 ? (word == 0 ? w[0] : w[1]) : (word == 2 ? w[2] : w[3]);
  const std::uint32_t high = word < 2 ? (word == 0 ? w[1] : w[2]) : (word == 2 ? w[3] : 0u);
  return funnel_right(low, high, 8 * (i & 3u)) & 0xFFFFu;
}

// ---- The compressed stream, staged through a ring ----------------------------------------
//
// The ring holds `ring_bytes` (a power of two, a multiple of 32) of the stream in two halves,
// and a copy of its first 16 bytes after its end (kRingMirror), so that 16 bytes read across
// the wrap-around are consecutive in memory.
// Positions are counted from the 16-byte boundary at or before the stream's first byte
// (`shift` bytes before it), so that whole 16-byte pieces can be copied asynchronously.
// [lo, landed) is in the ring and complete; [landed, pending) is being copied. A half is
// refilled with the stream's next bytes once the parse has moved past it, and waited for
// only when the parse gets near it. Bytes outside [lo, landed) are read from global memory,
// so a read is always correct; the ring only makes it fast.
constexpr std::uint32_t kRingMirror = 16;

struct RingInput {
  const std::uint8_t* data;  // the stream (global memory on the device), below 2 GiB
  std::uint32_t size;
  std::uint8_t* ring;  // ring_bytes + kRingMirror: shared memory on the device, 16-byte aligned
  std::uint32_t mask;  // ring_bytes - 1
  std::uint32_t half;  // ring_bytes / 2
  std::uint32_t shift;
  std::uint32_t end;  // size + shift
  std::uint32_t lo = 0, landed = 0, pending = 0;
  // Derived from the above (update()), so that the parse's checks are one comparison each:
  // refill once `keep` reaches refill_at; wait once `need` passes wait_at; 16 bytes from g
  // are in the ring and the stream when g + 16 <= fast_end.
  std::uint32_t refill_at = 0, wait_at = 0, fast_end = 0;
  unsigned lane, width;

  static constexpr std::uint32_t kNever = 0xFFFFFFFFu;

  ZK_HD RingInput(const std::uint8_t* d, std::uint32_t n, std::uint8_t* r, std::uint32_t ring_bytes, unsigned l,
                  unsigned w)
      : data(d),
        size(n),
        ring(r),
        mask(ring_bytes - 1),
        half(ring_bytes / 2),
        shift(static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(d) & 15u)),
        end(n + shift),
        lane(l),
        width(w) {
    issue(0);
    issue(half);
    wait();
    pending = landed = 2 * half;
    update();
  }

  // Byte i of the stream (i < size).
  ZK_HD unsigned operator()(std::uint32_t i) const {
    const std::uint32_t g = i + shift;
    if (g - lo < landed - lo) return ring[g & mask];
    return load_global(i);
  }

  // The 16 bytes from i, when they are all in the stream and in the ring (i at or after the
  // last `keep` given to advance).
  ZK_HD bool bytes16(std::uint32_t i, Bytes16& out) const {
    const std::uint32_t g = i + shift;
    if (g + 16 > fast_end) return false;
    const auto* words = reinterpret_cast<const std::uint32_t*>(ring + (g & mask & ~3u));  // to the mirror's end
    std::uint32_t v[5];
    for (unsigned k = 0; k < 5; ++k) v[k] = words[k];
    const unsigned bits = 8 * (g & 3u);
    for (unsigned k = 0; k < 4; ++k) out.w[k] = funnel_right(v[k], v[k + 1], bits);
    return true;
  }

  // The parse needs bytes up to `need` (exclusive) soon and nothing before `keep` any more.
  ZK_HD void advance(std::uint32_t keep, std::uint32_t need) {
    if (keep + shift >= refill_at) refill(keep + shift);
    if (need + shift > wait_at) {
      wait();
      landed = pending;
      update();
    }
  }

  // Lets the copies still in flight land (before the warp leaves its shared memory).
  ZK_HD void drain() const {
#if defined(__CUDA_ARCH__)
    __pipeline_wait_prior(0);
#endif
  }

 private:
  ZK_HD unsigned load_global(std::uint32_t i) const {
#if defined(__CUDA_ARCH__)
    return __ldg(data + i);
#else
    return data[i];
#endif
  }

  ZK_HD void update() {
    refill_at = pending == landed && landed < end ? lo + half : kNever;
    wait_at = pending != landed ? landed - 16 : kNever;  // landed >= 2 * half >= 32 here
    fast_end = landed < end ? landed : end;
  }

  // The parse has left the ring's first half (keep_g: the oldest byte still needed).
  ZK_HD void refill(std::uint32_t keep_g) {
    lane_sync(width);  // every lane is done reading what is about to be overwritten
    if (keep_g - lo >= 2 * half) {
      // The parse left the whole ring behind (a long literal run): start again from it.
      lo = keep_g & ~(half - 1);
      issue(lo);
      issue(lo + half);
      landed = lo;
      pending = lo + 2 * half;
    } else {
      issue(landed);
      lo += half;
      pending = landed + half;
    }
    update();
  }

  // Ring position `piece` (a multiple of 16) to `to`: 16 bytes asynchronously, or those of
  // its bytes that lie in the stream (the first and last pieces) one by one.
  ZK_HD void copy_piece(std::uint8_t* to, const std::uint8_t* base, std::uint32_t piece) const {
    if (piece >= shift && end - piece >= 16) {
#if defined(__CUDA_ARCH__)
      __pipeline_memcpy_async(to, base + piece, 16);
#else
      std::memcpy(to, base + piece, 16);
#endif
      return;
    }
    for (std::uint32_t k = 0; k < 16; ++k) {
      if (piece + k >= shift && piece + k < end) to[k] = static_cast<std::uint8_t>(load_global(piece + k - shift));
    }
  }

  // Starts copying ring positions [from, from + half) (those inside the stream).
  ZK_HD void issue(std::uint32_t from) {
    const std::uint8_t* base = data - shift;  // 16-byte aligned; only stream bytes are read
    for (std::uint32_t piece = from + 16 * lane; piece < from + half && piece < end; piece += 16 * width) {
      copy_piece(ring + (piece & mask), base, piece);
      if ((piece & mask) == 0) copy_piece(ring + mask + 1, base, piece);  // the mirror
    }
#if defined(__CUDA_ARCH__)
    __pipeline_commit();
#endif
  }

  ZK_HD void wait() const {
    drain();
    lane_sync(width);  // every lane's copies are visible to every lane
  }
};

// ---- The output, through a window of the recent bytes ------------------------------------
//
// Output byte p lives at window[p & mask] until byte p + W replaces it. Unless the whole
// output fits in the window (`buffered`: written out at the end), every byte also goes to
// global memory as it is produced. A match reads the window when its source and its own
// output together fit in the window with a warp's width to spare (then no lane's write can
// land on a byte another lane still has to read, without lanes waiting for each other);
// otherwise it reads global memory, which holds every byte before the match.
struct WindowOutput {
  std::uint8_t* out;     // the decoded stream (global memory on the device)
  std::uint8_t* window;  // shared memory on the device, 16-byte aligned
  std::uint32_t mask;    // window_bytes - 1
  std::uint32_t near_span;
  bool buffered;

  ZK_HD WindowOutput(std::uint8_t* o, std::uint32_t out_size, std::uint8_t* w, std::uint32_t window_bytes)
      : out(o), window(w), mask(window_bytes - 1), near_span(window_bytes - 32), buffered(out_size <= window_bytes) {}

  ZK_HD void put(std::uint32_t p, unsigned v) const {
    window[p & mask] = static_cast<std::uint8_t>(v);
    if (!buffered) out[p] = static_cast<std::uint8_t>(v);
  }

  // Literals: n bytes from stream position `from` to output position `op`; when `have_head`,
  // the ones that lie in `head` (the 16 bytes from stream position `head_at`) come from it.
  template <typename Input>
  ZK_HD void literals(std::uint32_t op, Input& in, std::uint32_t from, std::uint32_t n, Bytes16 head, bool have_head,
                      std::uint32_t head_at, unsigned lane, unsigned width) const {
    if (n > width) lane_sync(width);  // a long run may reach window bytes a lagging lane still reads
    if (have_head && from - head_at + n <= 16) {
      for (std::uint32_t k = lane; k < n; k += width) put(op + k, head.byte(from - head_at + k));
      return;
    }
    for (std::uint32_t k = lane; k < n; k += width) put(op + k, in(from + k));
  }

  // A match of `length` bytes at op from `distance` back (validated: distance <= op).
  ZK_HD void match(std::uint32_t op, std::uint32_t distance, std::uint32_t length, unsigned lane,
                   unsigned width) const {
    const bool near = buffered || (distance <= near_span && length <= near_span - distance);
    const std::uint32_t from = op - distance;
    if (distance >= length) {
      for (std::uint32_t k = lane; k < length; k += width) put(op + k, source(near, from + k));
      return;
    }
    // Overlapping: byte k repeats byte k mod distance of the `distance` bytes before op.
    std::uint32_t index = lane % distance;
    const std::uint32_t step = width % distance;
#if defined(__CUDA_ARCH__)
    if (width == 32 && distance <= 32) {
      const unsigned pattern = lane < distance ? source(near, from + lane) : 0u;
      for (std::uint32_t base = 0; base < length; base += 32) {
        const unsigned value = __shfl_sync(0xFFFFFFFFu, pattern, static_cast<int>(index));
        if (base + lane < length) put(op + base + lane, value);
        index += step;
        if (index >= distance) index -= distance;
      }
      return;
    }
#endif
    for (std::uint32_t k = lane; k < length; k += width) {
      put(op + k, source(near, from + index));
      index += step;
      if (index >= distance) index -= distance;
    }
  }

  // Writes a buffered output to global memory (every lane, after the last sequence).
  ZK_HD void finish(std::uint32_t size, unsigned lane, unsigned width) const {
    if (!buffered) return;
    lane_sync(width);
    const auto misalignment = reinterpret_cast<std::uintptr_t>(out) & 15u;
    if (misalignment == 0) {
      const std::uint32_t words = size / 16;
      for (std::uint32_t k = lane; k < words; k += width) {
#if defined(__CUDA_ARCH__)
        reinterpret_cast<uint4*>(out)[k] = reinterpret_cast<const uint4*>(window)[k];
#else
        std::memcpy(out + 16 * k, window + 16 * k, 16);
#endif
      }
      for (std::uint32_t k = words * 16 + lane; k < size; k += width) out[k] = window[k];
    } else {
      for (std::uint32_t k = lane; k < size; k += width) out[k] = window[k];
    }
  }

 private:
  ZK_HD unsigned source(bool near, std::uint32_t p) const {
    if (near) return window[p & mask];
    return out[p];  // written by this warp before the match (not a read-only load)
  }
};

// ---- The decoder -----------------------------------------------------------------------
//
// The checks are lz4_decode's (device_codecs.cuh), in its order; see there for the format
// rules. A sequence's header (token, length bytes, offset) is parsed and checked, the 16 bytes
// at the next token are fetched (as soon as the token says where it is), then the sequence's
// literals and match are copied: the next header's loads overlap this sequence's copies.

ZK_HD_TEMPLATE
template <typename Input>
ZK_HD std::int32_t lz4_decode_window(Input& in, std::uint32_t in_size, WindowOutput& out, std::uint32_t out_size,
                                     unsigned lane, unsigned width) {
  if (out_size == 0) return in_size == 1 && in(0) == 0 ? kDecodeOk : kDecodeCorrupt;
  std::uint32_t ip = 0;
  std::uint32_t op = 0;
  Bytes16 head, next_head;
  bool have_head = in.bytes16(0, head), have_next = false;
  for (;;) {
    if (ip >= in_size) return kDecodeCorrupt;
    const std::uint32_t token_at = ip;
    // Byte i of the stream, from the fetched 16 bytes when it lies in them.
    auto byte = [&](std::uint32_t i) -> unsigned {
      return have_head && i - token_at < 16 ? head.byte(i - token_at) : in(i);
    };
    const unsigned token = have_head ? head.w[0] & 0xFFu : in(ip);
    ++ip;
    // The common sequence (no length bytes, at most 13 literals): the fetched bytes hold its
    // offset and say where the next token is, whose 16 bytes are fetched at once.
    const bool quick = have_head && (token >> 4) < 14 && (token & 15u) < 15;
    unsigned quick_offset = 0;
    if (quick) {
      quick_offset = head.pair(1 + (token >> 4));
      const std::uint32_t next = token_at + 3 + (token >> 4);
      in.advance(ip, next);
      have_next = in.bytes16(next, next_head);
    }
    std::uint32_t literals = token >> 4;
    if (literals == 15) {
      unsigned b;
      do {
        if (ip >= in_size || literals > in_size) return kDecodeCorrupt;
        b = byte(ip++);
        literals += b;
      } while (b == 255);
    }
    if (literals > in_size - ip || literals > out_size - op) return kDecodeCorrupt;
    if (out_size - op - literals < 12 || in_size - ip - literals < 8) {
      // Must be the last sequence: literals only, ending exactly at the end of the input.
      if (ip + literals != in_size) return kDecodeCorrupt;
      out.literals(op, in, ip, literals, head, have_head, token_at, lane, width);
      op += literals;
      if (op != out_size) return kDecodeWrongSize;
      out.finish(out_size, lane, width);
      return kDecodeOk;
    }
    const std::uint32_t literals_at = ip;
    ip += literals;
    const std::uint32_t offset = quick ? quick_offset : byte(ip) | byte(ip + 1) << 8;
    ip += 2;  // in range: the literals ended at least 8 bytes before the end of the input
    if (offset == 0 || offset > op + literals) return kDecodeCorrupt;
    std::uint32_t length = token & 15u;
    if (length == 15) {
      unsigned b;
      do {
        if (ip >= in_size || length > out_size) return kDecodeCorrupt;
        b = byte(ip++);
        length += b;
      } while (b == 255);
    }
    length += 4;
    if (length > out_size - op - literals || out_size - op - literals - length < 5) return kDecodeCorrupt;
    if (!quick) {  // the next header, fetched before this sequence's copies
      in.advance(literals_at, ip);
      have_next = in.bytes16(ip, next_head);
    }
    out.literals(op, in, literals_at, literals, head, have_head, token_at, lane, width);
    op += literals;
    lane_sync(width);  // the match reads bytes other lanes wrote
    out.match(op, offset, length, lane, width);
    op += length;
    head = next_head;
    have_head = have_next;
  }
}

}  // namespace zarrkit::gpu
