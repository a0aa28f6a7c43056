// The deflate decoder of the GPU path (RFC 1951 in the zlib and gzip containers of RFC 1950
// and 1952), written once for the device and the host: the vocabulary of its stages.
//
// A deflate stream is one chain of blocks whose sizes are known only by decoding them, so a
// chunk is decoded by one warp from its first byte to its last (deflate_stages.cuh): its
// first lane reads the bit stream (headers, code lengths, symbols); the lanes build the
// Huffman tables together, write literals and copy matches together, copy stored blocks
// and compute the adler32 or crc32 of each member together. The kernels run it with the
// hardware's warp (src/gpu/codecs/deflate_device.cu), the host tests with emulated warps
// (gpu/warp/emulated_warp.h) against zlib and libdeflate.
//
// Every read of the bit stream is checked against the chunk's input, every write against
// its output slot, and every match against the bytes its member has written (the window).
// Malformed input ends in an Error code, never in an access outside those ranges; every
// loop ends because each of its steps consumes input or fills output. Positions inside a
// chunk are 32-bit (the device half takes chunks below 4 GiB).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define DEFLATE_HD __host__ __device__ inline
#define DEFLATE_HD_FORCE __host__ __device__ __forceinline__
#define DEFLATE_WARP_TEMPLATE _Pragma("nv_exec_check_disable")
#else
#define DEFLATE_HD inline
#define DEFLATE_HD_FORCE inline
#define DEFLATE_WARP_TEMPLATE
#endif
// Loops unrolled by the device compiler (the host compilers would warn of the pragma).
#if defined(__CUDA_ARCH__)
#define DEFLATE_UNROLL _Pragma("unroll")
#else
#define DEFLATE_UNROLL
#endif

namespace zarrkit::gpu::deflate {

constexpr unsigned kWarpLanes = 32;

// The containers a chunk may be in (what the codecs' host halves accept, deflate_support.h):
//   kRaw   one raw deflate stream (RFC 1951), no bytes after it;
//   kZlib  one zlib stream (or a gzip member: zlib's automatic header detection), no bytes
//          after it: numcodecs' zlib;
//   kGzip  gzip members (or zlib streams), one after another, with zero bytes between and
//          after them: numcodecs' gzip, Zarr v3's gzip, `cat a.gz b.gz`.
enum Format : std::uint32_t { kRaw = 0, kZlib = 1, kGzip = 2 };

// What went wrong (0: nothing); a chunk's status on the device, and the host decoder's.
enum Error : std::int32_t {
  kOk = 0,
  kErrEmpty = 0x200,        // no bytes at all
  kErrHeader,               // a zlib or gzip header that is not one (method, flags, check)
  kErrDictionary,           // a zlib stream that needs a preset dictionary
  kErrHeaderCrc,            // a gzip header whose FHCRC does not match
  kErrTruncated,            // the input ends inside a header, a block or a trailer
  kErrBlockType,            // the reserved block type 3
  kErrStoredLength,         // a stored block whose LEN and NLEN disagree
  kErrCodeCounts,           // more than 286 literal/length or 30 distance codes
  kErrCodeLengths,          // code lengths that repeat nothing, run past their count, or lack end-of-block
  kErrOversubscribed,       // a Huffman code with more codes than its lengths allow
  kErrIncomplete,           // a Huffman code with fewer (other than a single code of length 1)
  kErrSymbol,               // bits that are no code, or a reserved symbol (286, 287; distance 30, 31)
  kErrDistance,             // a match reaching before the start of its member
  kErrOutputTooLarge,       // the stream decodes to more than the output holds
  kErrOutputSize,           // the stream decodes to less than the output needs
  kErrAdler32,              // a zlib stream's adler32 does not match
  kErrCrc32,                // a gzip member's crc32 does not match
  kErrIsize,                // a gzip member's ISIZE does not match
  kErrTrailing,             // bytes after the stream
  kErrTooLarge,             // input or output of 4 GiB or more (not for this decoder)
};

DEFLATE_HD const char* error_name(std::int32_t e) {
  switch (e) {
    case kOk: return "ok";
    case kErrEmpty: return "no deflate data";
    case kErrHeader: return "bad zlib or gzip header";
    case kErrDictionary: return "stream needs a preset dictionary";
    case kErrHeaderCrc: return "gzip header crc mismatch";
    case kErrTruncated: return "stream cut short";
    case kErrBlockType: return "reserved block type";
    case kErrStoredLength: return "stored block length check failed";
    case kErrCodeCounts: return "too many length or distance codes";
    case kErrCodeLengths: return "bad code lengths";
    case kErrOversubscribed: return "over-subscribed Huffman code";
    case kErrIncomplete: return "incomplete Huffman code";
    case kErrSymbol: return "invalid or reserved symbol";
    case kErrDistance: return "match distance too far back";
    case kErrOutputTooLarge: return "decoded data larger than the output";
    case kErrOutputSize: return "decoded data smaller than the output";
    case kErrAdler32: return "adler32 mismatch";
    case kErrCrc32: return "crc32 mismatch";
    case kErrIsize: return "gzip ISIZE mismatch";
    case kErrTrailing: return "bytes after the stream";
    case kErrTooLarge: return "input or output of 4 GiB or more";
    default: return "unknown error";
  }
}

// ---- Limits of the format ----------------------------------------------------------------

constexpr std::uint32_t kMaxCodeBits = 15;
constexpr std::uint32_t kLitLenSymbols = 288;   // 286 usable, 2 reserved (fixed codes have them)
constexpr std::uint32_t kDistSymbols = 32;      // 30 usable
constexpr std::uint32_t kMaxLitLenCodes = 286;  // HLIT + 257 at most (zlib's limit)
constexpr std::uint32_t kMaxDistCodes = 30;
constexpr std::uint32_t kCodeLengthSymbols = 19;
constexpr std::uint32_t kEndOfBlock = 256;
constexpr std::uint32_t kMaxMatch = 258;
constexpr std::uint32_t kWindow = 32768;
// The most bits one symbol takes: a length code, its extra bits, a distance code and its.
constexpr std::uint32_t kMaxSymbolBits = kMaxCodeBits + 5 + kMaxCodeBits + 13;

// Bits resolved by one look-up of the tables (longer codes take the canonical walk).
constexpr std::uint32_t kLitLenTableBits = 10;
constexpr std::uint32_t kDistTableBits = 8;
constexpr std::uint32_t kCodeLengthTableBits = 7;  // code-length codes are at most 7 bits

// The base and extra bits of length symbols 257-285 and distance symbols 0-29, computed
// (the device has no table for them to read).
DEFLATE_HD_FORCE void length_code(std::uint32_t symbol, std::uint32_t* base, std::uint32_t* extra) {
  const std::uint32_t i = symbol - 257;
  if (i < 8) {
    *base = 3 + i;
    *extra = 0;
  } else if (i == 28) {
    *base = 258;
    *extra = 0;
  } else {
    *extra = (i >> 2) - 1;
    *base = ((4 + (i & 3)) << *extra) + 3;
  }
}
DEFLATE_HD_FORCE void distance_code(std::uint32_t symbol, std::uint32_t* base, std::uint32_t* extra) {
  if (symbol < 4) {
    *base = symbol + 1;
    *extra = 0;
  } else {
    *extra = (symbol >> 1) - 1;
    *base = ((2 + (symbol & 1)) << *extra) + 1;
  }
}

// The order in which a dynamic block lists the lengths of the code-length code.
DEFLATE_HD std::uint32_t code_length_order(std::uint32_t k) {
  // 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15
  switch (k) {
    case 0: return 16;
    case 1: return 17;
    case 2: return 18;
    case 3: return 0;
    case 4: return 8;
    case 5: return 7;
    case 6: return 9;
    case 7: return 6;
    case 8: return 10;
    case 9: return 5;
    case 10: return 11;
    case 11: return 4;
    case 12: return 12;
    case 13: return 3;
    case 14: return 13;
    case 15: return 2;
    case 16: return 14;
    case 17: return 1;
    default: return 15;
  }
}

// ---- The bit stream ----------------------------------------------------------------------

// Bytes p[0, 8) as a little-endian number, read as the three aligned 32-bit words that hold
// them (one load each instead of eight byte loads): the caller guarantees that the words,
// from p - 3 to p + 12 at most, lie inside the buffer. Little-endian machines only (x86-64,
// the GPU).
DEFLATE_HD_FORCE std::uint64_t load_8_bytes_aligned(const std::uint8_t* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  const std::uint8_t* aligned = p - (address & 3u);
  const std::uint32_t shift = static_cast<std::uint32_t>(address & 3u) * 8;
  std::uint32_t w[3];
#if defined(__CUDA_ARCH__)
  const auto* words = reinterpret_cast<const std::uint32_t*>(aligned);
  w[0] = words[0];
  w[1] = words[1];
  w[2] = words[2];
#else
  std::memcpy(w, aligned, sizeof w);
#endif
  const std::uint64_t low = w[0] | static_cast<std::uint64_t>(w[1]) << 32;
  return (low >> shift) | (static_cast<std::uint64_t>(w[2]) << (63 - shift) << 1);
}

// Deflate's bits, least significant first, from data[0, size). Bits above `count` in `buf`
// are zero; a read needs its bits loaded first (need()), which fails at the end of the input
// instead of reading past it.
struct BitReader {
  const std::uint8_t* data = nullptr;
  std::uint32_t size = 0;
  std::uint32_t pos = 0;    // the next byte to load
  std::uint32_t count = 0;  // bits in buf
  std::uint64_t buf = 0;

  DEFLATE_HD void start(const std::uint8_t* d, std::uint32_t n, std::uint32_t at) {
    data = d;
    size = n;
    pos = at;
    count = 0;
    buf = 0;
  }
  DEFLATE_HD_FORCE void refill() {
    if (count <= 56 && pos >= 3 && size - pos >= 12) {
      // Three aligned words hold bytes [pos, pos + 8); all of them lie inside the input.
      buf |= load_8_bytes_aligned(data + pos) << count;
      pos += (63 - count) >> 3;
      count |= 56;
      buf &= (std::uint64_t{1} << count) - 1;  // count <= 63
      return;
    }
    if (count <= 56 && size - pos >= 8) {
      std::uint64_t v = 0;
      for (int k = 7; k >= 0; --k) v = (v << 8) | data[pos + static_cast<std::uint32_t>(k)];
      buf |= v << count;
      pos += (63 - count) >> 3;
      count |= 56;
      buf &= (std::uint64_t{1} << count) - 1;  // count <= 63
      return;
    }
    while (count <= 56 && pos < size) {
      buf |= static_cast<std::uint64_t>(data[pos++]) << count;
      count += 8;
    }
  }
  // Whether n (<= 32) bits are loaded (loading them if the input has them).
  DEFLATE_HD_FORCE bool need(std::uint32_t n) {
    if (count < n) refill();
    return count >= n;
  }
  // The next n (<= 31) bits; 32-bit arithmetic, which the device does in one instruction.
  DEFLATE_HD_FORCE std::uint32_t peek(std::uint32_t n) const {
    return static_cast<std::uint32_t>(buf) & ((1u << n) - 1u);
  }
  DEFLATE_HD_FORCE void drop(std::uint32_t n) {
    buf >>= n;
    count -= n;
  }
  // To the next byte boundary; returns the position of that byte in the input.
  DEFLATE_HD std::uint32_t align() {
    drop(count & 7);
    return pos - count / 8;
  }
};

// ---- Checksums (one lane's part; deflate_stages.cuh combines the lanes') -------------------

constexpr std::uint32_t kAdlerModulus = 65521;
constexpr std::uint32_t kCrc32Polynomial = 0xEDB88320u;  // reflected

DEFLATE_HD std::uint32_t crc32_table_entry(std::uint32_t i) {
  std::uint32_t c = i;
  for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kCrc32Polynomial : c >> 1;
  return c;
}

// a * b modulo the CRC polynomial, both in the reflected representation (x^0 is bit 31).
DEFLATE_HD std::uint32_t crc32_multiply(std::uint32_t a, std::uint32_t b) {
  std::uint32_t product = 0;
  for (std::uint32_t bit = 1u << 31; bit != 0; bit >>= 1) {
    if (a & bit) product ^= b;
    b = (b & 1) ? (b >> 1) ^ kCrc32Polynomial : b >> 1;
  }
  return product;
}

// c * x^(8 n): a CRC register moved over n zero bytes (no conditioning).
DEFLATE_HD std::uint32_t crc32_shift(std::uint32_t c, std::uint32_t n) {
  std::uint32_t power = 1u << (31 - 8);  // x^8
  while (n != 0) {
    if (n & 1) c = crc32_multiply(power, c);
    power = crc32_multiply(power, power);
    n >>= 1;
  }
  return c;
}

DEFLATE_HD_FORCE std::uint32_t read_le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}
DEFLATE_HD_FORCE std::uint32_t read_be32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[3]) | static_cast<std::uint32_t>(p[2]) << 8 |
         static_cast<std::uint32_t>(p[1]) << 16 | static_cast<std::uint32_t>(p[0]) << 24;
}

}  // namespace zarrkit::gpu::deflate
