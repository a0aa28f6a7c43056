// The decoding primitives of the GPU path, written once for the device and the host.
//
// Every function here is `__host__ __device__` under nvcc and a plain inline function under
// the host compiler, so that the host test suite (which runs in CI, without a GPU) checks
// the very code the kernels run against liblz4, c-blosc and the CPU crc32c.
//
// The stream decoders (LZ4 blocks, BloscLZ blocks) are cooperative: `width` lanes run the
// same parse of the token stream (every lane reads the same bytes, which the hardware
// broadcasts), and lane `lane` copies bytes lane, lane + width, ... of each literal run and
// match. A match may overlap its own output (offset < length); byte k of it equals byte
// (k mod offset) of the `offset` bytes before it, all of which exist before the match
// starts, so the lanes never wait for each other inside a match. The host runs them with
// width 1.
//
// Every read and write is bounds-checked against the sizes passed in, which come from
// validated metadata: corrupt input ends in an error code, never in an access outside the
// stream's own input and output ranges.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ZK_HD __host__ __device__ __forceinline__
#else
#define ZK_HD inline
#endif

namespace zarrkit::gpu {

// Per-stream and per-chunk outcomes; the first non-zero code of a chunk is kept.
enum DecodeStatus : std::int32_t {
  kDecodeOk = 0,
  kDecodeCorrupt = 1,         // the compressed stream is malformed
  kDecodeWrongSize = 2,       // it decoded to a size other than the one required
  kDecodeChecksumMismatch = 3,
};

// Makes the lanes' earlier writes visible to each other: a warp barrier when `width` lanes
// of a warp share the work; a no-op for one lane (the host, where the tests run the decoders
// and the encoder at width 1).
ZK_HD void lane_sync([[maybe_unused]] unsigned width) {
#if defined(__CUDA_ARCH__)
  if (width > 1) __syncwarp();
#endif
}

// ---- Copies used by both decoders -------------------------------------------------------

// Streams are below 4 GiB (their sizes are 32-bit), so positions inside one are 32-bit:
// half the instructions of 64-bit arithmetic in the parse loops.

// out[k] = in[k] for k in [0, n): lane-strided.
ZK_HD void lane_copy(std::uint8_t* out, const std::uint8_t* in, std::uint32_t n, unsigned lane, unsigned width) {
  for (std::uint32_t k = lane; k < n; k += width) out[k] = in[k];
}

// An LZ77 match of `length` bytes at out[0..) copying from `distance` bytes back (the
// bytes before `out` are complete). Overlap (distance < length) repeats the pattern: byte k
// is from[k mod distance], whose index each lane advances by width mod distance per step
// instead of dividing.
ZK_HD void lane_match(std::uint8_t* out, std::uint32_t distance, std::uint32_t length, unsigned lane,
                      unsigned width) {
  const std::uint8_t* from = out - distance;
  if (distance >= length) {
    for (std::uint32_t k = lane; k < length; k += width) out[k] = from[k];
    return;
  }
  std::uint32_t index = lane % distance;
  const std::uint32_t step = width % distance;
#if defined(__CUDA_ARCH__)
  if (width == 32 && distance <= 32) {
    // Short patterns (runs of one byte, repeated elements) live in registers: lane j holds
    // from[j], and every lane takes its byte from the lane that holds it.
    const unsigned pattern = lane < distance ? from[lane] : 0u;
    for (std::uint32_t base = 0; base < length; base += 32) {
      const unsigned value = __shfl_sync(0xFFFFFFFFu, pattern, static_cast<int>(index));
      if (base + lane < length) out[base + lane] = static_cast<std::uint8_t>(value);
      index += step;
      if (index >= distance) index -= distance;
    }
    return;
  }
#endif
  for (std::uint32_t k = lane; k < length; k += width) {
    out[k] = from[index];
    index += step;
    if (index >= distance) index -= distance;
  }
}

// ---- Compressed input -------------------------------------------------------------------
//
// The decoders read their input through a reader: `in(i)` is byte i of the stream, and
// `in.pointer(i)` its address (for bulk copies of literals). DirectInput reads memory as
// is; the kernels also use a reader that stages the stream through shared memory.
struct DirectInput {
  const std::uint8_t* data;
  ZK_HD unsigned operator()(std::uint32_t i) const { return data[i]; }
  ZK_HD const std::uint8_t* pointer(std::uint32_t i) const { return data + i; }
};

// Host and device instantiations of the templates below call host-only or device-only
// readers; nvcc checks such calls per instantiation, so its generic warning is disabled.
#if defined(__CUDACC__)
#define ZK_HD_TEMPLATE _Pragma("nv_exec_check_disable")
#else
#define ZK_HD_TEMPLATE
#endif

// ---- LZ4 block format -------------------------------------------------------------------
//
// Accepts exactly what LZ4_decompress_safe(in, out, in_size, out_size) accepts when its
// result must equal out_size: sequences of (token, literals, offset, match); the last one
// carries literals only and ends exactly at the end of the input; literals that reach into
// the last 12 bytes of the output or the last 8 bytes of the input must be that last
// sequence; a match may not end inside the last 5 bytes of the output, nor reach before
// the start of the output.

ZK_HD_TEMPLATE
template <typename Input>
ZK_HD std::int32_t lz4_decode(Input& in, std::uint32_t in_size, std::uint8_t* out, std::uint32_t out_size,
                              unsigned lane, unsigned width) {
  if (out_size == 0) return in_size == 1 && in(0) == 0 ? kDecodeOk : kDecodeCorrupt;
  std::uint32_t ip = 0;
  std::uint32_t op = 0;
  for (;;) {
    if (ip >= in_size) return kDecodeCorrupt;
    const unsigned token = in(ip++);
    std::uint32_t literals = token >> 4;
    if (literals == 15) {
      unsigned b;
      do {
        if (ip >= in_size || literals > in_size) return kDecodeCorrupt;
        b = in(ip++);
        literals += b;
      } while (b == 255);
    }
    if (literals > in_size - ip || literals > out_size - op) return kDecodeCorrupt;
    if (out_size - op - literals < 12 || in_size - ip - literals < 8) {
      // Must be the last sequence: literals only, ending exactly at the end of the input.
      if (ip + literals != in_size) return kDecodeCorrupt;
      lane_copy(out + op, in.pointer(ip), literals, lane, width);
      op += literals;
      return op == out_size ? kDecodeOk : kDecodeWrongSize;
    }
    lane_copy(out + op, in.pointer(ip), literals, lane, width);
    ip += literals;
    op += literals;

    const std::uint32_t offset = in(ip) | in(ip + 1) << 8;
    ip += 2;  // in range: the literals ended at least 8 bytes before the end of the input
    if (offset == 0 || offset > op) return kDecodeCorrupt;
    std::uint32_t length = token & 15u;
    if (length == 15) {
      unsigned b;
      do {
        if (ip >= in_size || length > out_size) return kDecodeCorrupt;
        b = in(ip++);
        length += b;
      } while (b == 255);
    }
    length += 4;
    if (length > out_size - op || out_size - op - length < 5) return kDecodeCorrupt;
    lane_sync(width);  // the match reads bytes other lanes wrote
    lane_match(out + op, offset, length, lane, width);
    op += length;
  }
}

ZK_HD std::int32_t lz4_decode_block(const std::uint8_t* in, std::uint64_t in_size, std::uint8_t* out,
                                    std::uint64_t out_size, unsigned lane, unsigned width) {
  if (in_size > 0xFFFFFFFFu || out_size > 0xFFFFFFFFu) return kDecodeCorrupt;
  DirectInput input{in};
  return lz4_decode(input, static_cast<std::uint32_t>(in_size), out, static_cast<std::uint32_t>(out_size), lane,
                    width);
}

// ---- BloscLZ (c-blosc 1.x, format version 1) -------------------------------------------
//
// The first byte's low 5 bits start a literal run. A control byte below 32 is a literal run
// of ctrl + 1 bytes. Otherwise it is a match: length (ctrl >> 5) + 2, where 7 << 5 means
// "add the following bytes while they are 255"; distance ((ctrl & 31) << 8) + next byte + 1,
// or, when that byte is 255 and ctrl & 31 is 31, 8192 + the next two bytes (big-endian).
// The stream ends where the input ends.

ZK_HD_TEMPLATE
template <typename Input>
ZK_HD std::int32_t blosclz_decode(Input& in, std::uint32_t in_size, std::uint8_t* out, std::uint32_t out_size,
                                  unsigned lane, unsigned width) {
  constexpr std::uint32_t kMaxDistance = 8191;
  if (in_size == 0) return kDecodeCorrupt;
  std::uint32_t ip = 0;
  std::uint32_t op = 0;
  unsigned ctrl = in(ip++) & 31u;
  for (;;) {
    if (ctrl >= 32) {
      std::uint32_t length = (ctrl >> 5) - 1;
      std::uint32_t ofs = (ctrl & 31u) << 8;
      unsigned code;
      if (length == 6) {
        do {
          if (ip >= in_size || length > out_size) return kDecodeCorrupt;
          code = in(ip++);
          length += code;
        } while (code == 255);
      }
      if (ip >= in_size) return kDecodeCorrupt;
      code = in(ip++);
      std::uint32_t distance = ofs + code + 1;
      if (code == 255 && ofs == (31u << 8)) {
        if (in_size - ip < 2) return kDecodeCorrupt;
        ofs = in(ip) << 8 | in(ip + 1);
        ip += 2;
        distance = ofs + kMaxDistance + 1;
      }
      length += 3;
      if (distance > op || length > out_size - op) return kDecodeCorrupt;
      const bool more = ip < in_size;
      if (more) ctrl = in(ip++);
      lane_sync(width);
      lane_match(out + op, distance, length, lane, width);
      op += length;
      if (!more) break;
    } else {
      const std::uint32_t literals = ctrl + 1u;
      if (literals > in_size - ip || literals > out_size - op) return kDecodeCorrupt;
      lane_copy(out + op, in.pointer(ip), literals, lane, width);
      ip += literals;
      op += literals;
      if (ip >= in_size) break;
      ctrl = in(ip++);
    }
  }
  return op == out_size ? kDecodeOk : kDecodeWrongSize;
}

ZK_HD std::int32_t blosclz_decode_block(const std::uint8_t* in, std::uint64_t in_size, std::uint8_t* out,
                                        std::uint64_t out_size, unsigned lane, unsigned width) {
  if (in_size > 0xFFFFFFFFu || out_size > 0xFFFFFFFFu) return kDecodeCorrupt;
  DirectInput input{in};
  return blosclz_decode(input, static_cast<std::uint32_t>(in_size), out, static_cast<std::uint32_t>(out_size), lane,
                        width);
}

// ---- Blosc shuffles (undo) --------------------------------------------------------------

// Byte unshuffle of one blosc block: the shuffled block holds byte 0 of every element,
// then byte 1, ...; element e's bytes come from those planes. Bytes past the last whole
// element stay where they are (the caller copies them).
ZK_HD void unshuffle_element(const std::uint8_t* in, std::uint8_t* out, std::uint32_t elements, unsigned typesize,
                             std::uint32_t e) {
  for (unsigned b = 0; b < typesize; ++b) out[static_cast<std::uint64_t>(e) * typesize + b] = in[b * elements + e];
}

// Bit unshuffle (bitshuffle's layout, as c-blosc 1.x applies it per block): with n
// elements (n a multiple of 8), bit b of byte j of element i lives in row j * 8 + b (n / 8
// bytes per row) at bit i % 8 of byte i / 8. Blocks whose element count is not a multiple
// of 8 are stored unshuffled; bytes past the last whole element stay in place.
// Returns output bytes 8 * g .. 8 * g + 7 of byte column `j`, that is byte j of elements
// 8 * g .. 8 * g + 7, packed little-endian into one word.
ZK_HD std::uint64_t bitunshuffled_column8(const std::uint8_t* in, std::uint32_t elements, std::uint32_t group,
                                          unsigned j) {
  const std::uint32_t row_bytes = elements / 8;
  std::uint64_t rows = 0;  // byte b of `rows` is bit row j * 8 + b at this group
  for (unsigned b = 0; b < 8; ++b) rows |= static_cast<std::uint64_t>(in[(j * 8u + b) * row_bytes + group]) << (8 * b);
  // Transpose the 8x8 bit matrix: bit i of byte b becomes bit b of byte i.
  std::uint64_t t;
  t = (rows ^ (rows >> 7)) & 0x00AA00AA00AA00AAull;
  rows ^= t ^ (t << 7);
  t = (rows ^ (rows >> 14)) & 0x0000CCCC0000CCCCull;
  rows ^= t ^ (t << 14);
  t = (rows ^ (rows >> 28)) & 0x00000000F0F0F0F0ull;
  rows ^= t ^ (t << 28);
  return rows;
}

// True when c-blosc bit-unshuffles a block of this size (else the block is a plain copy).
ZK_HD bool bitshuffle_applies(std::uint32_t block_size, unsigned typesize) {
  return (block_size / typesize) % 8 == 0;
}

// The forward shuffles (the write path): the inverses of the two above.
ZK_HD void shuffle_element(const std::uint8_t* in, std::uint8_t* out, std::uint32_t elements, unsigned typesize,
                           std::uint32_t e) {
  for (unsigned b = 0; b < typesize; ++b) out[b * elements + e] = in[static_cast<std::uint64_t>(e) * typesize + b];
}

// Bit shuffle of byte column j of elements 8 * group .. 8 * group + 7 into the 8 bit rows.
ZK_HD void bitshuffle_column8(const std::uint8_t* in, std::uint8_t* out, std::uint32_t elements, unsigned typesize,
                              std::uint32_t group, unsigned j) {
  std::uint64_t column = 0;  // byte i: byte j of element 8 * group + i
  for (unsigned i = 0; i < 8; ++i) {
    column |= static_cast<std::uint64_t>(in[(static_cast<std::uint64_t>(group) * 8 + i) * typesize + j]) << (8 * i);
  }
  std::uint64_t t;  // the same 8x8 bit transpose as above: it is its own inverse
  t = (column ^ (column >> 7)) & 0x00AA00AA00AA00AAull;
  column ^= t ^ (t << 7);
  t = (column ^ (column >> 14)) & 0x0000CCCC0000CCCCull;
  column ^= t ^ (t << 14);
  t = (column ^ (column >> 28)) & 0x00000000F0F0F0F0ull;
  column ^= t ^ (t << 28);
  const std::uint32_t row_bytes = elements / 8;
  for (unsigned b = 0; b < 8; ++b) out[(j * 8u + b) * row_bytes + group] = static_cast<std::uint8_t>(column >> (8 * b));
}

// ---- CRC-32C ----------------------------------------------------------------------------

constexpr std::uint32_t kCrc32cPolyReflected = 0x82F63B78u;

// One step of the reflected CRC register over one byte, table-free (used to build tables).
ZK_HD std::uint32_t crc32c_byte_step(std::uint32_t crc) {
  for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kCrc32cPolyReflected : 0u);
  return crc;
}

// table[k * 256 + b]: the register after byte b followed by k zero bytes (slicing-by-8).
ZK_HD void crc32c_fill_tables(std::uint32_t* table, unsigned entry) {
  // Fills entries entry, entry + stride... by the caller's loop; this computes one entry.
  const unsigned k = entry / 256;
  std::uint32_t crc = crc32c_byte_step(entry % 256);
  for (unsigned i = 0; i < k; ++i) crc = (crc >> 8) ^ crc32c_byte_step(crc & 0xFFu);
  table[entry] = crc;
}

// The standard CRC-32C (initial value and final xor 0xFFFFFFFF) of n bytes, with the
// slicing-by-8 `table` (8 x 256 entries).
ZK_HD std::uint32_t crc32c_with_table(const std::uint32_t* table, const std::uint8_t* p, std::uint64_t n) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (; n >= 8; n -= 8, p += 8) {
    const std::uint32_t lo = (static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
                              static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24) ^ crc;
    crc = table[7 * 256 + (lo & 0xFF)] ^ table[6 * 256 + ((lo >> 8) & 0xFF)] ^ table[5 * 256 + ((lo >> 16) & 0xFF)] ^
          table[4 * 256 + (lo >> 24)] ^ table[3 * 256 + p[4]] ^ table[2 * 256 + p[5]] ^ table[1 * 256 + p[6]] ^
          table[0 * 256 + p[7]];
  }
  for (; n > 0; --n, ++p) crc = (crc >> 8) ^ table[(crc ^ *p) & 0xFFu];
  return ~crc;
}

// a * b modulo the CRC polynomial, in the reflected representation (bit 31 is x^0).
ZK_HD std::uint32_t crc32c_mulmod(std::uint32_t a, std::uint32_t b) {
  std::uint32_t product = 0;
  for (int i = 0; i < 32; ++i) {
    if (a & (0x80000000u >> i)) product ^= b;
    b = (b & 1u) ? (b >> 1) ^ kCrc32cPolyReflected : b >> 1;
  }
  return product;
}

// x^(8 * bytes) modulo the polynomial: the operator that moves a CRC past `bytes` bytes.
ZK_HD std::uint32_t crc32c_shift_operator(std::uint64_t bytes) {
  std::uint32_t result = 0x80000000u;  // x^0
  std::uint32_t square = 0x00800000u;  // x^8: one byte
  while (bytes != 0) {
    if (bytes & 1u) result = crc32c_mulmod(square, result);
    square = crc32c_mulmod(square, square);
    bytes >>= 1;
  }
  return result;
}

// crc32c(A followed by B) from crc32c(A), crc32c(B) and the length of B.
ZK_HD std::uint32_t crc32c_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t length_b) {
  return crc32c_mulmod(crc32c_shift_operator(length_b), crc_a) ^ crc_b;
}

}  // namespace zarrkit::gpu
