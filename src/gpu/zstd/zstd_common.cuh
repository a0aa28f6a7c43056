// The zstd decoder of the GPU path (RFC 8878 frames, no dictionary), written once for the
// device and the host: the vocabulary its stages share.
//
// A chunk of zstd bytes decodes in stages, each a function of this folder that the kernels
// run (src/gpu/codecs/zstd_device.cu) and the host library runs in the same order
// (zstd_host_decoder.h), so that the host tests check the code the GPU runs:
//   walk       frames, blocks, literal and sequence section headers; which Huffman and FSE
//              table description each block uses (table reuse resolved): zstd_walk.cuh
//   literals   each block's literals (raw, RLE, Huffman 1 or 4 streams): zstd_huffman.cuh
//   sequences  each block's sequences, repeat offsets kept symbolic: zstd_sequences.cuh
//   scan       per frame, in block order: where each block's output starts, and its
//              starting repeat offsets (zstd_sequences.cuh)
//   execute    literals and matches into the output: zstd_execute.cuh
//   checksum   XXH64 of each frame's output, when the frame carries one: zstd_xxhash.cuh
// Blocks of a frame depend on each other only through what the walk and the scan resolve
// and through the bytes their matches copy, so every stage but the scan is parallel over
// the blocks of a frame.
//
// Every read and write is bounds-checked: against the chunk's input, its literal and
// sequence areas (sized from the walk's counts), and its output slot; a match may reach
// back at most to the start of its frame. Malformed input ends in an Error code, never in
// an access outside those ranges. Positions inside a chunk are 32-bit (the device half
// takes chunks below 4 GiB).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ZSTD_HD __host__ __device__ inline
#define ZSTD_HD_FORCE __host__ __device__ __forceinline__
#else
#define ZSTD_HD inline
#define ZSTD_HD_FORCE inline
#endif

namespace zarrkit::gpu::zstd {

// What went wrong (0: nothing). A chunk's status on the device is the first of these that
// one of its blocks found; the host library returns the same codes.
enum Error : std::int32_t {
  kOk = 0,
  kErrEmpty = 0x100,            // no frame at all (zarrkit's codec refuses an empty chunk)
  kErrFrameMagic,               // bytes that are not a zstd or skippable frame
  kErrFrameHeader,              // a frame header cut short or with the reserved bit set
  kErrWindowTooLarge,           // a window log above 31
  kErrDictionary,               // the frame needs a dictionary
  kErrSkippableFrame,           // a skippable frame cut short
  kErrBlockHeader,              // a block header cut short, or a reserved block type
  kErrBlockTruncated,           // a block's content runs past the input
  kErrBlockTooLarge,            // a compressed block above 128 KiB
  kErrLiteralsHeader,           // a literals section header that does not fit its block
  kErrLiteralsSize,             // a literals size out of range
  kErrTreelessFirst,            // treeless literals with no Huffman table before them
  kErrHuffmanTable,             // a malformed Huffman tree description
  kErrHuffmanStream,            // a Huffman stream that does not decode exactly
  kErrSequencesHeader,          // a sequences section header that does not fit its block
  kErrRepeatFirst,              // a repeated FSE table with none before it
  kErrFseTable,                 // a malformed FSE table description
  kErrSequenceStream,           // a sequence bitstream that does not decode exactly
  kErrLiteralsOverrun,          // sequences that take more literals than the block has
  kErrOffset,                   // a match reaching before the start of its frame
  kErrOutputTooLarge,           // the frames decode to more than the output holds
  kErrOutputSize,               // the frames decode to less than the output needs
  kErrContentSize,              // a frame decodes to another size than its header says
  kErrChecksum,                 // a frame's content checksum does not match
  kErrChecksumMissing,          // a frame ends before its content checksum
  kErrTrailing,                 // bytes after the last frame that are not a frame
  kErrTooLarge,                 // input or output of 4 GiB or more (not for this decoder)
  kErrTableCapacity,            // more frames or blocks than the caller's tables hold
};

ZSTD_HD const char* error_name(std::int32_t e) {
  switch (e) {
    case kOk: return "ok";
    case kErrEmpty: return "no zstd frame";
    case kErrFrameMagic: return "not a zstd frame";
    case kErrFrameHeader: return "bad frame header";
    case kErrWindowTooLarge: return "window too large";
    case kErrDictionary: return "frame needs a dictionary";
    case kErrSkippableFrame: return "skippable frame cut short";
    case kErrBlockHeader: return "bad block header";
    case kErrBlockTruncated: return "block runs past the input";
    case kErrBlockTooLarge: return "compressed block above 128 KiB";
    case kErrLiteralsHeader: return "bad literals section header";
    case kErrLiteralsSize: return "literals size out of range";
    case kErrTreelessFirst: return "treeless literals without a previous Huffman table";
    case kErrHuffmanTable: return "bad Huffman tree description";
    case kErrHuffmanStream: return "corrupt Huffman stream";
    case kErrSequencesHeader: return "bad sequences section header";
    case kErrRepeatFirst: return "repeated FSE table without a previous one";
    case kErrFseTable: return "bad FSE table description";
    case kErrSequenceStream: return "corrupt sequence bitstream";
    case kErrLiteralsOverrun: return "sequences take more literals than the block has";
    case kErrOffset: return "match offset before the start of the frame";
    case kErrOutputTooLarge: return "decoded data larger than the output";
    case kErrOutputSize: return "decoded data smaller than the output";
    case kErrContentSize: return "frame content size mismatch";
    case kErrChecksum: return "content checksum mismatch";
    case kErrChecksumMissing: return "content checksum missing";
    case kErrTrailing: return "bytes after the last frame";
    case kErrTooLarge: return "input or output of 4 GiB or more";
    case kErrTableCapacity: return "more frames or blocks than the tables hold";
    default: return "unknown error";
  }
}

// ---- Limits of the format (and of libzstd 1.5, whose decoder is the reference) -----------

constexpr std::uint32_t kBlockMaxBytes = 128 << 10;    // compressed block content, literals
constexpr std::uint32_t kHuffmanMaxBits = 12;          // libzstd accepts 12 (the RFC says 11)
constexpr std::uint32_t kHuffmanTableSize = 1u << kHuffmanMaxBits;
constexpr std::uint32_t kMaxLiteralsLengthCode = 35;
constexpr std::uint32_t kMaxMatchLengthCode = 52;
constexpr std::uint32_t kMaxOffsetCode = 31;
constexpr std::uint32_t kLiteralsLengthMaxLog = 9;
constexpr std::uint32_t kMatchLengthMaxLog = 9;
constexpr std::uint32_t kOffsetMaxLog = 8;
constexpr std::uint32_t kWeightsMaxLog = 6;            // the FSE table of Huffman weights
constexpr std::uint32_t kMaxSequencesPerBlock = 0x7F00 + 0xFFFF;
constexpr std::uint32_t kMinMatch = 3;

// ---- What the walk finds (chunk-relative offsets, 32-bit) --------------------------------

enum BlockType : std::uint8_t { kRawBlock = 0, kRleBlock = 1, kCompressedBlock = 2 };
enum LiteralsType : std::uint8_t { kRawLiterals = 0, kRleLiterals = 1, kHuffman1 = 2, kHuffman4 = 3 };
enum TableMode : std::uint8_t { kPredefinedTable = 0, kRleTable = 1, kFseTable = 2 };
enum SequenceKind : std::uint8_t { kLiteralsLengths = 0, kOffsets = 1, kMatchLengths = 2 };

// The table one symbol kind of a block decodes with: a predefined distribution, one symbol,
// or the FSE table description at `src` (which the walk has parsed within [src, limit)).
struct TableRef {
  std::uint32_t src = 0;
  std::uint32_t limit = 0;
  std::uint8_t mode = kPredefinedTable;
  std::uint8_t rle_symbol = 0;
};

struct BlockJob {
  std::uint32_t src = 0;       // the block's content (after its 3-byte header)
  std::uint32_t src_size = 0;  // bytes of content (an RLE block: 1)
  std::uint32_t decoded = 0;   // raw and RLE blocks: their decoded size; compressed: their literals
  std::uint32_t frame = 0;     // the index of its frame in the chunk's frame table
  std::uint32_t chunk = 0;     // the chunk of a batch (the device's tables; 0 on the host)
  std::uint8_t type = kRawBlock;
  std::uint8_t literals_type = kRawLiterals;
  std::uint8_t treeless = 0;        // 1: the literals reuse the frame's last Huffman tree
  std::uint8_t sequence_modes = 0;  // the modes byte of the sequences section, as read
  // Literals: raw bytes, the RLE byte, or the Huffman streams (with the jump table for 4).
  std::uint32_t literals_src = 0;
  std::uint32_t literals_src_size = 0;
  // The Huffman tree description this block's literals use (its own or, treeless, the last
  // one of its frame), which must fit in [huffman_src, huffman_limit).
  std::uint32_t huffman_src = 0;
  std::uint32_t huffman_limit = 0;
  std::uint32_t sequences = 0;  // Number_of_Sequences
  std::uint32_t sequences_src = 0;  // the sequence bitstream
  std::uint32_t sequences_src_size = 0;
  TableRef tables[3];           // literals lengths, offsets, match lengths (repeat resolved)
  std::uint64_t literals_offset = 0;   // where its literals go in the chunk's literal area
  std::uint64_t sequences_offset = 0;  // its first sequence in the chunk's sequence area
};

constexpr std::uint64_t kUnknownContentSize = ~std::uint64_t{0};

struct FrameJob {
  std::uint32_t first_block = 0;  // index into the chunk's block table
  std::uint32_t blocks = 0;
  std::uint64_t content_size = kUnknownContentSize;
  std::uint64_t window_size = 0;
  std::uint32_t checksum = 0;     // the low 32 bits of XXH64, when has_checksum
  std::uint8_t has_checksum = 0;
  std::uint8_t pad[3] = {0, 0, 0};
};

// What a walk counted: table sizes, and the areas the stages need.
struct WalkTotals {
  std::uint32_t frames = 0;
  std::uint32_t blocks = 0;
  std::uint64_t literals = 0;    // bytes of the literal area
  std::uint64_t sequences = 0;   // entries of the sequence area
  std::uint64_t min_output = 0;  // bytes the frames decode to at least
};

// ---- Repeat offsets ------------------------------------------------------------------------

// A repeat offset as a block's sequence decoder knows it before the offsets of the blocks
// before it are known: a value, or "slot s of the block's starting history, minus d" (at
// least 1), which is what subtracting one from a repeat offset can make of it.
struct RepeatValue {
  std::uint32_t value = 0;  // the offset (kind 0) or d (kinds 1-3)
  std::uint32_t kind = 0;   // 0: a value; 1 + s: slot s of the starting history
};

ZSTD_HD std::uint32_t resolve_repeat(RepeatValue r, const std::uint32_t* start_history) {
  if (r.kind == 0) return r.value;
  const std::uint32_t base = start_history[r.kind - 1];
  return base > r.value + 1 ? base - r.value : 1;
}

// One decoded sequence. The top two bits of ll_kind are the offset's kind (RepeatValue).
struct Sequence {
  std::uint32_t ll_kind;
  std::uint32_t match_length;
  std::uint32_t offset;
};

ZSTD_HD std::uint32_t sequence_literals(const Sequence& s) { return s.ll_kind & 0x3FFFFFFFu; }
ZSTD_HD RepeatValue sequence_offset(const Sequence& s) { return {s.offset, s.ll_kind >> 30}; }

// Per block, made by the sequence stage and the scan.
struct BlockState {
  std::uint32_t out_size = 0;     // bytes the block decodes to
  std::uint32_t out_offset = 0;   // where they start in the chunk's output
  std::uint32_t frame_pos = 0;    // ... and in its frame's output
  std::uint32_t progress = 0;     // bytes of it written (the device's execution)
  std::uint32_t start_history[3] = {1, 4, 8};  // repeat offsets when the block starts
  RepeatValue end_history[3];     // ... and when it ends, relative to start_history
  std::uint32_t has_history = 0;  // 1 when the block has sequences (it changes the history)
  std::uint32_t pad = 0;
};

// ---- Small helpers -----------------------------------------------------------------------

// The index of the highest set bit of v (v > 0).
ZSTD_HD_FORCE std::uint32_t highbit(std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  return 31u - static_cast<std::uint32_t>(__clz(v));
#else
  return 31u - static_cast<std::uint32_t>(__builtin_clz(v));
#endif
}

ZSTD_HD_FORCE std::uint32_t read_le16(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8;
}
ZSTD_HD_FORCE std::uint32_t read_le24(const std::uint8_t* p) {
  return read_le16(p) | static_cast<std::uint32_t>(p[2]) << 16;
}
ZSTD_HD_FORCE std::uint32_t read_le32(const std::uint8_t* p) {
  return read_le24(p) | static_cast<std::uint32_t>(p[3]) << 24;
}
ZSTD_HD_FORCE std::uint64_t read_le64(const std::uint8_t* p) {
  return static_cast<std::uint64_t>(read_le32(p)) | static_cast<std::uint64_t>(read_le32(p + 4)) << 32;
}

// A little-endian word at a 4-byte-aligned address: one load on the device.
ZSTD_HD_FORCE std::uint32_t aligned_word(const std::uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const std::uint32_t*>(p);
#else
  return read_le32(p);
#endif
}

// ---- Bit streams -------------------------------------------------------------------------

// A stream read backwards (Huffman streams, FSE bitstreams): its last byte holds a 1 bit
// above the last bit of data; reading starts below it and goes down to bit 0. Reads past
// bit 0 give zeros and leave `remaining` negative, which the decoders check.
struct BackwardBits {
  const std::uint8_t* data = nullptr;
  std::uint32_t size = 0;
  std::int64_t remaining = 0;  // bits not yet read
  std::uint64_t window = 0;    // stream bits [window_start, window_start + 64)
  std::int64_t window_start = 0;
  std::uint32_t avail = 0;  // between ensure() and settle(): the window's unread bits

  // False when the stream is empty or its last byte is 0 (no end mark).
  ZSTD_HD bool init(const std::uint8_t* bytes, std::uint32_t stream_size) {
    data = bytes;
    size = stream_size;
    if (size == 0) return false;
    const std::uint32_t last = bytes[size - 1];
    if (last == 0) return false;
    remaining = static_cast<std::int64_t>(size - 1) * 8 + highbit(last);
    window_start = 1;  // forces a refill on the first read (start > remaining - n)
    refill_for(remaining);
    return true;
  }

  // Loads the 64 bits ending at the byte that holds bit `top` - 1 (bits below 0 are zero).
  ZSTD_HD void refill_for(std::int64_t top) {
    const std::int64_t end_byte = top > 0 ? (top + 7) / 8 : 0;  // bytes [end_byte - 8, end_byte)
    window_start = (end_byte - 8) * 8;
    std::uint64_t w = 0;
    for (int k = 7; k >= 0; --k) {
      const std::int64_t at = end_byte - 8 + k;
      w = (w << 8) | (at >= 0 ? static_cast<std::uint64_t>(data[at]) : 0u);
    }
    window = w;
  }

  // refill_for(remaining) in fewer loads: three aligned words (one load each on the device)
  // when they stay inside the stream, and the 8 bytes from them.
  ZSTD_HD_FORCE void refill() {
    const std::int64_t end_byte = (remaining + 7) / 8;
    if (end_byte < 11 || end_byte + 4 > size) {  // the words could reach outside the stream
      refill_for(remaining);
      return;
    }
    const auto address = reinterpret_cast<std::uintptr_t>(data + (end_byte - 8));
    const std::uint32_t skew = static_cast<std::uint32_t>(address & 3u) * 8;
    const auto* aligned = reinterpret_cast<const std::uint8_t*>(address - (address & 3u));
    std::uint64_t w = static_cast<std::uint64_t>(aligned_word(aligned + 4)) << 32 | aligned_word(aligned);
    if (skew != 0) w = w >> skew | static_cast<std::uint64_t>(aligned_word(aligned + 8)) << (64 - skew);
    window = w;
    window_start = (end_byte - 8) * 8;
#if defined(__CUDA_ARCH__)
    // The bytes the next refills read lie below these: have them in L1 by then (one lane's
    // miss holds up its whole warp). A hint: no load waits for it.
    constexpr std::int64_t kPrefetchBytes = 128;
    const std::int64_t below = end_byte - 8 - kPrefetchBytes;
    asm volatile("prefetch.L1 [%0];" ::"l"(data + (below > 0 ? below : 0)));
#endif
  }

  // True when the next `need` bits (need <= 57) can be taken with take(): they are in the
  // stream and in the window (refilled if not). settle() ends the takes.
  ZSTD_HD_FORCE bool ensure(std::uint32_t need) {
    if (remaining < static_cast<std::int64_t>(need)) return false;
    if (remaining - window_start < static_cast<std::int64_t>(need)) refill();
    avail = static_cast<std::uint32_t>(remaining - window_start);
    return true;
  }

  // The next n bits (n <= 31) after ensure() said they are loaded: no checks, and only the
  // window's count moves (avail & 63: a take of 0 bits from a full window shifts by 0).
  ZSTD_HD_FORCE std::uint32_t take(std::uint32_t n) {
    avail -= n;
    return static_cast<std::uint32_t>(window >> (avail & 63u)) & ((1u << n) - 1u);
  }
  ZSTD_HD_FORCE void settle() { remaining = window_start + avail; }

  // The next n bits (n <= 32), most significant first in stream order.
  ZSTD_HD_FORCE std::uint32_t read(std::uint32_t n) {
    if (n == 0) return 0;
    const std::int64_t low = remaining - static_cast<std::int64_t>(n);
    remaining = low;
    if (low < window_start) {
      if (low + static_cast<std::int64_t>(n) <= 0) return 0;  // wholly past bit 0
      refill_for(low + static_cast<std::int64_t>(n));
    }
    const auto shift = static_cast<std::uint32_t>(low - window_start);
    return static_cast<std::uint32_t>((window >> shift) & ((std::uint64_t{1} << n) - 1));
  }

  // The next n bits without consuming them.
  ZSTD_HD_FORCE std::uint32_t peek(std::uint32_t n) {
    const std::int64_t saved = remaining;
    const std::uint32_t v = read(n);
    remaining = saved;
    return v;
  }
  ZSTD_HD_FORCE void skip(std::uint32_t n) { remaining -= n; }

  ZSTD_HD bool overflowed() const { return remaining < 0; }
  ZSTD_HD bool finished_exactly() const { return remaining == 0; }
};

// A stream read forwards, little-endian (FSE table descriptions); bits past the end read
// as zeros and are counted, so the caller can check how far it read.
struct ForwardBits {
  const std::uint8_t* data = nullptr;
  std::uint32_t size = 0;
  std::uint64_t position = 0;  // bits consumed

  ZSTD_HD std::uint32_t peek(std::uint32_t n) const {  // n <= 24
    std::uint32_t v = 0;
    const std::uint64_t first = position / 8;
    for (std::uint32_t k = 0; k < 4; ++k) {
      const std::uint64_t at = first + k;
      v |= (at < size ? static_cast<std::uint32_t>(data[at]) : 0u) << (8 * k);
    }
    v >>= static_cast<std::uint32_t>(position % 8);
    return n >= 32 ? v : v & ((1u << n) - 1);
  }
  ZSTD_HD void skip(std::uint32_t n) { position += n; }
  ZSTD_HD std::uint32_t read(std::uint32_t n) {
    const std::uint32_t v = peek(n);
    skip(n);
    return v;
  }
  ZSTD_HD std::uint64_t bytes_used() const { return (position + 7) / 8; }
};

}  // namespace zarrkit::gpu::zstd
