// FSE for the zstd decoder: table descriptions (normalized counts), decoding tables, and
// the codes of literals lengths, match lengths and offsets (RFC 8878 sections 3.1.1.3.2.1
// and 4.1). Host and device (zstd_common.cuh).
#pragma once

#include <cstdint>

#include "gpu/zstd/zstd_common.cuh"

namespace zarrkit::gpu::zstd {

// ---- Code tables ---------------------------------------------------------------------------
// Each table is kept once for the host and once in the device's constant memory; the
// accessors pick the one of the side they run on.

#define ZSTD_LL_BASELINES                                                                              \
  {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, \
   256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536}
#define ZSTD_LL_BITS \
  {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
#define ZSTD_ML_BASELINES                                                                                     \
  {3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17,  18,  19,  20,   21,   22,   23,   24,   25,    \
   26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051, \
   4099, 8195, 16387, 32771, 65539}
#define ZSTD_ML_BITS                                                                                        \
  {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, \
   2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
// The predefined distributions (RFC 8878 3.1.1.3.2.2).
#define ZSTD_LL_DEFAULT \
  {4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1}
#define ZSTD_ML_DEFAULT                                                                                         \
  {1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, \
   1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1}
#define ZSTD_OF_DEFAULT \
  {1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1}

namespace detail {
inline constexpr std::uint32_t kLlBaselinesHost[] = ZSTD_LL_BASELINES;
inline constexpr std::uint8_t kLlBitsHost[] = ZSTD_LL_BITS;
inline constexpr std::uint32_t kMlBaselinesHost[] = ZSTD_ML_BASELINES;
inline constexpr std::uint8_t kMlBitsHost[] = ZSTD_ML_BITS;
inline constexpr std::int16_t kLlDefaultHost[] = ZSTD_LL_DEFAULT;
inline constexpr std::int16_t kMlDefaultHost[] = ZSTD_ML_DEFAULT;
inline constexpr std::int16_t kOfDefaultHost[] = ZSTD_OF_DEFAULT;
#if defined(__CUDACC__)
__constant__ const std::uint32_t kLlBaselinesDevice[] = ZSTD_LL_BASELINES;
__constant__ const std::uint8_t kLlBitsDevice[] = ZSTD_LL_BITS;
__constant__ const std::uint32_t kMlBaselinesDevice[] = ZSTD_ML_BASELINES;
__constant__ const std::uint8_t kMlBitsDevice[] = ZSTD_ML_BITS;
__constant__ const std::int16_t kLlDefaultDevice[] = ZSTD_LL_DEFAULT;
__constant__ const std::int16_t kMlDefaultDevice[] = ZSTD_ML_DEFAULT;
__constant__ const std::int16_t kOfDefaultDevice[] = ZSTD_OF_DEFAULT;
#endif
}  // namespace detail

#if defined(__CUDA_ARCH__)
#define ZSTD_TABLE(name) detail::name##Device
#else
#define ZSTD_TABLE(name) detail::name##Host
#endif

// ---- Normalized counts -----------------------------------------------------------------------

constexpr std::uint32_t kFseMinLog = 5;
constexpr std::uint32_t kFseMaxSymbols = 256;  // Huffman weights have up to 256 symbols

// Parses an FSE table description (RFC 8878 4.1.1) from [src, src + size): at most
// max_symbol + 1 counts (counts[s], -1 meaning "less than 1"), an accuracy log of at most
// max_log. Sets *symbols (the counts read), *log and *used (bytes of the description).
// Reading past `size` counts as corrupt; so does a distribution that does not add up.
ZSTD_HD std::int32_t read_fse_counts(const std::uint8_t* src, std::uint32_t size, std::uint32_t max_symbol,
                                     std::uint32_t max_log, std::int16_t* counts, std::uint32_t* symbols,
                                     std::uint32_t* log, std::uint32_t* used) {
  ForwardBits in{src, size, 0};
  const std::uint32_t accuracy = in.read(4) + kFseMinLog;
  if (accuracy > max_log) return kErrFseTable;
  const std::uint32_t limit = max_symbol + 1;
  std::int32_t remaining = (1 << accuracy) + 1;
  std::int32_t threshold = 1 << accuracy;
  std::uint32_t bits = accuracy + 1;
  std::uint32_t symbol = 0;
  bool previous_zero = false;
  for (;;) {
    if (previous_zero) {
      // Runs of zero counts: 2-bit repeat flags, 3 meaning "3 more, and another flag".
      std::uint32_t flag;
      do {
        flag = in.read(2);
        for (std::uint32_t k = 0; k < flag && symbol < limit; ++k) counts[symbol++] = 0;
        if (symbol >= limit && flag == 3) break;
      } while (flag == 3);
      if (symbol >= limit) break;  // zeros up to the end: the distribution cannot add up
    }
    const auto max = static_cast<std::uint32_t>(2 * threshold - 1 - remaining);
    std::int32_t count;
    const std::uint32_t low = in.peek(bits - 1);
    if (low < max) {
      count = static_cast<std::int32_t>(low);
      in.skip(bits - 1);
    } else {
      std::uint32_t v = in.peek(bits);
      if (v >= static_cast<std::uint32_t>(threshold)) v -= max;
      count = static_cast<std::int32_t>(v);
      in.skip(bits);
    }
    --count;  // stored as count + 1; -1 means "less than 1" and takes one slot
    remaining -= count < 0 ? -count : count;
    counts[symbol++] = static_cast<std::int16_t>(count);
    previous_zero = count == 0;
    if (remaining < threshold) {
      if (remaining <= 1) break;
      bits = highbit(static_cast<std::uint32_t>(remaining)) + 1;
      threshold = 1 << (bits - 1);
    }
    if (symbol >= limit) break;
  }
  if (remaining != 1) return kErrFseTable;
  if (in.bytes_used() > size) return kErrFseTable;
  *symbols = symbol;
  *log = accuracy;
  *used = static_cast<std::uint32_t>(in.bytes_used());
  return kOk;
}

// ---- Decoding tables -----------------------------------------------------------------------

// A cell's state (in [count, 2 * count) of its symbol) gives the bits to read for the next
// state and that state's base.
ZSTD_HD_FORCE std::uint32_t fse_state_bits(std::uint32_t state, std::uint32_t log) { return log - highbit(state); }
ZSTD_HD_FORCE std::uint32_t fse_next_base(std::uint32_t state, std::uint32_t bits, std::uint32_t log) {
  return (state << bits) - (1u << log);
}

// Spreads the symbols over the 1 << log cells of a decoding table (RFC 8878 4.1.1): cells
// of "less than 1" symbols from the top, the others along the step sequence. Then each cell
// gets its state; `emit(cell, symbol, state)` stores one cell. `cell_symbol` (1 << log
// entries; it may be the table itself) and `next` (symbols entries) are scratch.
template <typename Symbol, typename Emit>
ZSTD_HD bool build_fse_cells(const std::int16_t* counts, std::uint32_t symbols, std::uint32_t log, Symbol* cell_symbol,
                             std::uint16_t* next, Emit emit) {
  const std::uint32_t size = 1u << log;
  std::uint32_t high = size - 1;
  for (std::uint32_t s = 0; s < symbols; ++s) {
    if (counts[s] == -1) {
      cell_symbol[high--] = static_cast<Symbol>(s);
      next[s] = 1;
    } else {
      next[s] = static_cast<std::uint16_t>(counts[s]);
    }
  }
  const std::uint32_t mask = size - 1;
  const std::uint32_t step = (size >> 1) + (size >> 3) + 3;
  std::uint32_t position = 0;
  for (std::uint32_t s = 0; s < symbols; ++s) {
    for (std::int32_t i = 0; i < counts[s]; ++i) {
      cell_symbol[position] = static_cast<Symbol>(s);
      do {
        position = (position + step) & mask;
      } while (position > high);
    }
  }
  if (position != 0) return false;  // the counts did not fill the table exactly
  for (std::uint32_t cell = 0; cell < size; ++cell) {
    const std::uint32_t s = cell_symbol[cell];
    emit(cell, s, std::uint32_t{next[s]++});
  }
  return true;
}

// A cell of the tables of literals lengths, match lengths and offsets, in 16 bits so that
// the sequences stage's lanes keep their three tables in shared memory: the code (6 bits)
// and the cell's state (10), from which the table's log gives the bits to read for the next
// state and its base. An RLE table is one cell of state 1 and log 0 (no bits, base 0).
struct SequenceCell {
  std::uint16_t packed;

  ZSTD_HD_FORCE std::uint32_t code() const { return packed & 0x3Fu; }
  ZSTD_HD_FORCE std::uint32_t state() const { return packed >> 6; }
};
// A state is below twice the table's size (a count is at most the size): 10 bits hold it.
static_assert(kLiteralsLengthMaxLog <= 9 && kMatchLengthMaxLog <= 9 && kOffsetMaxLog <= 9);
ZSTD_HD_FORCE SequenceCell sequence_cell(std::uint32_t code, std::uint32_t state) {
  return SequenceCell{static_cast<std::uint16_t>(code | state << 6)};
}

// The largest table of each kind, in cells.
constexpr std::uint32_t kSequenceTableCells[3] = {1u << kLiteralsLengthMaxLog, 1u << kOffsetMaxLog,
                                                  1u << kMatchLengthMaxLog};

// The baseline and extra bits of each code of literals lengths and match lengths, as one
// word (baseline | extra bits << 24), where the lanes of a warp look them up with different
// codes: the kernels copy them to shared memory (constant memory serves one address at a
// time). Offsets need no table: code c has c extra bits and baseline 1 << c.
struct SequenceCodes {
  std::uint32_t literals_lengths[kMaxLiteralsLengthCode + 1];
  std::uint32_t match_lengths[kMaxMatchLengthCode + 1];
};
constexpr std::uint32_t kSequenceCodeEntries = kMaxLiteralsLengthCode + 1 + kMaxMatchLengthCode + 1;

// Fills entries first, first + step, ... of `codes` (a block's threads share the work).
ZSTD_HD void fill_sequence_codes(SequenceCodes& codes, std::uint32_t first, std::uint32_t step) {
  for (std::uint32_t i = first; i < kSequenceCodeEntries; i += step) {
    if (i <= kMaxLiteralsLengthCode) {
      codes.literals_lengths[i] = ZSTD_TABLE(kLlBaselines)[i] | std::uint32_t{ZSTD_TABLE(kLlBits)[i]} << 24;
    } else {
      const std::uint32_t c = i - (kMaxLiteralsLengthCode + 1);
      codes.match_lengths[c] = ZSTD_TABLE(kMlBaselines)[c] | std::uint32_t{ZSTD_TABLE(kMlBits)[c]} << 24;
    }
  }
}

// What a sequence takes from one cell: its code's baseline and extra bits, and the bits and
// base of the next state.
struct CellView {
  std::uint32_t code, baseline, extra, bits, next_base;
  ZSTD_HD_FORCE std::uint32_t all_bits() const { return extra + bits; }
};
ZSTD_HD_FORCE CellView view_cell(SequenceCell cell, std::uint32_t log, std::uint32_t kind, const SequenceCodes& codes) {
  CellView v;
  v.code = cell.code();
  if (kind == kOffsets) {
    v.baseline = 1u << v.code;
    v.extra = v.code;
  } else {
    const std::uint32_t entry = kind == kLiteralsLengths ? codes.literals_lengths[v.code] : codes.match_lengths[v.code];
    v.baseline = entry & 0xFFFFFFu;
    v.extra = entry >> 24;
  }
  v.bits = fse_state_bits(cell.state(), log);
  v.next_base = fse_next_base(cell.state(), v.bits, log);
  return v;
}

ZSTD_HD std::uint32_t max_code(std::uint32_t kind) {
  return kind == kLiteralsLengths ? kMaxLiteralsLengthCode : kind == kMatchLengths ? kMaxMatchLengthCode : kMaxOffsetCode;
}
ZSTD_HD std::uint32_t max_log(std::uint32_t kind) {
  return kind == kLiteralsLengths ? kLiteralsLengthMaxLog : kind == kMatchLengths ? kMatchLengthMaxLog : kOffsetMaxLog;
}

// Scratch of one table build of Huffman weights (the sequence tables have their own).
struct FseScratch {
  std::int16_t counts[kFseMaxSymbols];
  std::uint16_t next[kFseMaxSymbols];
  std::uint8_t cell_symbol[1u << kWeightsMaxLog];
};

// Scratch of one sequence table's build: the spread writes the symbols into the table's
// cells, so only the counts and the next states.
struct SequenceTableScratch {
  std::int16_t counts[kMaxMatchLengthCode + 1];
  std::uint16_t next[kMaxMatchLengthCode + 1];
};

// Builds the decoding table a TableRef names into `table` (kSequenceTableCells[kind]
// cells, SequenceCell's packed words) and sets *log; the description lies in `chunk` (the
// chunk's input).
ZSTD_HD std::int32_t build_sequence_table(const std::uint8_t* chunk, const TableRef& ref, std::uint32_t kind,
                                          std::uint16_t* table, std::uint32_t* log, SequenceTableScratch& scratch) {
  if (ref.mode == kRleTable) {
    if (ref.rle_symbol > max_code(kind)) return kErrFseTable;
    table[0] = sequence_cell(ref.rle_symbol, 1).packed;
    *log = 0;
    return kOk;
  }
  std::uint32_t symbols = 0, accuracy = 0;
  if (ref.mode == kPredefinedTable) {
    const std::int16_t* d = kind == kLiteralsLengths ? ZSTD_TABLE(kLlDefault)
                            : kind == kMatchLengths  ? ZSTD_TABLE(kMlDefault)
                                                     : ZSTD_TABLE(kOfDefault);
    symbols = kind == kLiteralsLengths ? 36 : kind == kMatchLengths ? 53 : 29;
    accuracy = kind == kOffsets ? 5 : 6;
    for (std::uint32_t s = 0; s < symbols; ++s) scratch.counts[s] = d[s];
  } else {
    if (ref.src > ref.limit) return kErrFseTable;
    std::uint32_t used = 0;
    const std::int32_t e = read_fse_counts(chunk + ref.src, ref.limit - ref.src, max_code(kind), max_log(kind),
                                           scratch.counts, &symbols, &accuracy, &used);
    if (e != kOk) return e;
  }
  const bool ok = build_fse_cells(scratch.counts, symbols, accuracy, table, scratch.next,
                                  [&](std::uint32_t cell, std::uint32_t symbol, std::uint32_t state) {
                                    table[cell] = sequence_cell(symbol, state).packed;
                                  });
  if (!ok) return kErrFseTable;
  *log = accuracy;
  return kOk;
}

// A cell of the FSE table of Huffman weights.
struct WeightCell {
  std::uint8_t symbol;
  std::uint8_t bits;
  std::uint16_t next_base;
};

}  // namespace zarrkit::gpu::zstd
