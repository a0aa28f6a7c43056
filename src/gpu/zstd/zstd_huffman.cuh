// The literals stage of the zstd decoder: Huffman tree descriptions, decoding tables and
// streams (RFC 8878 4.2), and the literals of a block (raw, RLE, Huffman with 1 or 4
// streams, treeless). Host and device (zstd_common.cuh).
//
// A decoding table has 1 << max_bits entries (max_bits <= 12); entry i is the symbol whose
// code is the prefix of the max_bits-bit value i, and its code length: symbol | bits << 8.
#pragma once

#include <cstdint>

#include "gpu/zstd/zstd_common.cuh"
#include "gpu/zstd/zstd_fse.cuh"

namespace zarrkit::gpu::zstd {

constexpr std::uint32_t kMaxWeights = 256;

// Decodes the weights of a Huffman tree description with FSE (two interleaved states; the
// stream ends when a state update reads past its start: RFC 8878 4.2.1.2). At most 255
// weights. `cells` holds 64 entries.
ZSTD_HD std::int32_t read_fse_weights(const std::uint8_t* src, std::uint32_t size, std::uint8_t* weights,
                                      std::uint32_t* count, WeightCell* cells, FseScratch& scratch) {
  std::uint32_t symbols = 0, log = 0, used = 0;
  std::int32_t e = read_fse_counts(src, size, kMaxWeights - 1, kWeightsMaxLog, scratch.counts, &symbols, &log, &used);
  if (e != kOk) return kErrHuffmanTable;
  if (!build_fse_cells(scratch.counts, symbols, log, scratch.cell_symbol, scratch.next,
                       [&](std::uint32_t cell, std::uint32_t symbol, std::uint32_t state) {
                         const std::uint32_t bits = fse_state_bits(state, log);
                         cells[cell] = {static_cast<std::uint8_t>(symbol), static_cast<std::uint8_t>(bits),
                                        static_cast<std::uint16_t>(fse_next_base(state, bits, log))};
                       })) {
    return kErrHuffmanTable;
  }
  BackwardBits in;
  if (!in.init(src + used, size - used)) return kErrHuffmanTable;
  std::uint32_t state[2] = {in.read(log), in.read(log)};
  std::uint32_t n = 0;
  constexpr std::uint32_t kMaxOut = kMaxWeights - 1;
  for (std::uint32_t turn = 0;; turn ^= 1) {
    // Room for this weight and for the other state's last one.
    if (n + 2 > kMaxOut) return kErrHuffmanTable;
    const WeightCell c = cells[state[turn]];
    weights[n++] = c.symbol;
    state[turn] = c.next_base + in.read(c.bits);
    if (in.overflowed()) {
      weights[n++] = cells[state[turn ^ 1]].symbol;
      break;
    }
  }
  *count = n;
  return kOk;
}

// Reads a Huffman tree description at [src, src + size): the weights of symbols 0..n-1
// (the last one implied), their number and the table's max_bits; *used: the description's
// bytes. Checks what libzstd checks (weights <= 12, a complete tree, at least two symbols
// of weight 1, an even number of them).
// (No initializers: the kernels keep these in shared memory.)
struct HuffmanWeights {
  std::uint8_t weight[kMaxWeights];
  std::uint32_t symbols;
  std::uint32_t max_bits;
  std::uint32_t rank_count[kHuffmanMaxBits + 1];
};

ZSTD_HD std::int32_t read_huffman_weights(const std::uint8_t* src, std::uint32_t size, HuffmanWeights& w,
                                          std::uint32_t* used, WeightCell* cells, FseScratch& scratch) {
  if (size == 0) return kErrHuffmanTable;
  const std::uint32_t header = src[0];
  std::uint32_t n = 0;
  if (header >= 128) {  // direct: 4 bits per weight
    n = header - 127;
    const std::uint32_t bytes = (n + 1) / 2;
    if (bytes + 1 > size) return kErrHuffmanTable;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t b = src[1 + i / 2];
      w.weight[i] = static_cast<std::uint8_t>(i % 2 == 0 ? b >> 4 : b & 15);
    }
    *used = bytes + 1;
  } else {
    if (header + 1 > size) return kErrHuffmanTable;
    const std::int32_t e = read_fse_weights(src + 1, header, w.weight, &n, cells, scratch);
    if (e != kOk) return e;
    *used = header + 1;
  }
  for (std::uint32_t r = 0; r <= kHuffmanMaxBits; ++r) w.rank_count[r] = 0;
  std::uint32_t total = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (w.weight[i] > kHuffmanMaxBits) return kErrHuffmanTable;
    ++w.rank_count[w.weight[i]];
    total += (1u << w.weight[i]) >> 1;
  }
  if (total == 0) return kErrHuffmanTable;
  const std::uint32_t max_bits = highbit(total) + 1;
  if (max_bits > kHuffmanMaxBits) return kErrHuffmanTable;
  const std::uint32_t rest = (1u << max_bits) - total;
  if ((rest & (rest - 1)) != 0) return kErrHuffmanTable;  // the last weight completes a power of 2
  const std::uint32_t last = highbit(rest) + 1;
  w.weight[n] = static_cast<std::uint8_t>(last);
  ++w.rank_count[last];
  if (w.rank_count[1] < 2 || (w.rank_count[1] & 1) != 0) return kErrHuffmanTable;
  w.symbols = n + 1;
  w.max_bits = max_bits;
  return kOk;
}

// Where each symbol's entries start in the decoding table: weights ascending, symbols in
// order within a weight; a symbol of weight w takes 1 << (w - 1) entries. `start` has
// w.symbols entries.
ZSTD_HD void huffman_symbol_starts(const HuffmanWeights& w, std::uint16_t* start) {
  std::uint32_t next[kHuffmanMaxBits + 1];
  std::uint32_t at = 0;
  for (std::uint32_t r = 1; r <= kHuffmanMaxBits; ++r) {
    next[r] = at;
    at += w.rank_count[r] << (r - 1);
  }
  for (std::uint32_t s = 0; s < w.symbols; ++s) {
    const std::uint32_t r = w.weight[s];
    start[s] = static_cast<std::uint16_t>(r == 0 ? 0 : next[r]);
    if (r != 0) next[r] += 1u << (r - 1);
  }
}

// Fills the decoding table, lanes lane, lane + width, ... of the symbols' entries.
ZSTD_HD void huffman_fill_table(const HuffmanWeights& w, const std::uint16_t* start, std::uint16_t* table,
                                unsigned lane, unsigned width) {
  for (std::uint32_t s = 0; s < w.symbols; ++s) {
    const std::uint32_t r = w.weight[s];
    if (r == 0) continue;
    const std::uint32_t n = 1u << (r - 1);
    const auto entry = static_cast<std::uint16_t>(s | (w.max_bits + 1 - r) << 8);
    for (std::uint32_t k = lane; k < n; k += width) table[start[s] + k] = entry;
  }
}

// Decodes `count` symbols from the Huffman stream [src, src + size) into out[0..count); the
// stream must be used up exactly.
ZSTD_HD std::int32_t decode_huffman_stream(const std::uint16_t* table, std::uint32_t max_bits, const std::uint8_t* src,
                                           std::uint32_t size, std::uint8_t* out, std::uint32_t count) {
  BackwardBits in;
  if (!in.init(src, size)) return kErrHuffmanStream;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint32_t entry = table[in.peek(max_bits)];
    out[i] = static_cast<std::uint8_t>(entry);
    in.skip(entry >> 8);
    if (in.overflowed()) return kErrHuffmanStream;
  }
  return in.finished_exactly() ? kOk : kErrHuffmanStream;
}

// The streams of a block's Huffman literals: where each starts and ends in the input and
// how many literals it decodes to.
struct HuffmanStreams {
  std::uint32_t src[4];
  std::uint32_t size[4];
  std::uint32_t out[4];    // offset of its literals in the block's literals
  std::uint32_t count[4];
  std::uint32_t streams;
};

// Splits [src, src + size) into the block's streams (a jump table of three sizes first,
// for 4 streams); `literals` is the block's literal count.
ZSTD_HD std::int32_t split_huffman_streams(const std::uint8_t* chunk, std::uint32_t src, std::uint32_t size,
                                           std::uint32_t literals, bool four, HuffmanStreams& s) {
  if (!four) {
    s.streams = 1;
    s.src[0] = src;
    s.size[0] = size;
    s.out[0] = 0;
    s.count[0] = literals;
    return kOk;
  }
  if (size < 10) return kErrHuffmanStream;  // the jump table and a byte per stream
  const std::uint32_t sizes[3] = {read_le16(chunk + src), read_le16(chunk + src + 2), read_le16(chunk + src + 4)};
  const std::uint64_t first_three = std::uint64_t{sizes[0]} + sizes[1] + sizes[2];
  if (first_three + 6 > size) return kErrHuffmanStream;
  const std::uint32_t segment = (literals + 3) / 4;
  if (3 * segment > literals) return kErrHuffmanStream;
  s.streams = 4;
  std::uint32_t at = src + 6;
  for (std::uint32_t k = 0; k < 4; ++k) {
    s.src[k] = at;
    s.size[k] = k < 3 ? sizes[k] : size - 6 - static_cast<std::uint32_t>(first_three);
    s.out[k] = k * segment;
    s.count[k] = k < 3 ? segment : literals - 3 * segment;
    at += s.size[k];
  }
  return kOk;
}

// Scratch of one block's literals.
struct HuffmanScratch {
  HuffmanWeights weights;
  std::uint16_t start[kMaxWeights];
  WeightCell cells[1u << kWeightsMaxLog];
  FseScratch fse;
};

// Builds the decoding table of a tree description at [src, limit) into `table`; the streams
// that follow it must leave at least one byte (libzstd's rule). Sets *max_bits and *used.
ZSTD_HD std::int32_t build_huffman_table(const std::uint8_t* chunk, std::uint32_t src, std::uint32_t limit,
                                         std::uint16_t* table, std::uint32_t* max_bits, std::uint32_t* used,
                                         HuffmanScratch& scratch) {
  if (src >= limit) return kErrHuffmanTable;
  const std::int32_t e = read_huffman_weights(chunk + src, limit - src, scratch.weights, used, scratch.cells, scratch.fse);
  if (e != kOk) return e;
  huffman_symbol_starts(scratch.weights, scratch.start);
  huffman_fill_table(scratch.weights, scratch.start, table, 0, 1);
  *max_bits = scratch.weights.max_bits;
  return kOk;
}

// The literals of one block (sequential: the host, or one lane) into `out`, which holds
// block.decoded bytes. `table` is scratch for a decoding table (kHuffmanTableSize entries).
ZSTD_HD std::int32_t decode_block_literals(const std::uint8_t* chunk, const BlockJob& block, std::uint8_t* out,
                                           std::uint16_t* table, HuffmanScratch& scratch) {
  const std::uint32_t n = block.decoded;
  switch (block.literals_type) {
    case kRawLiterals:
      for (std::uint32_t i = 0; i < n; ++i) out[i] = chunk[block.literals_src + i];
      return kOk;
    case kRleLiterals:
      for (std::uint32_t i = 0; i < n; ++i) out[i] = chunk[block.literals_src];
      return kOk;
    default: {
      std::uint32_t max_bits = 0, used = 0;
      std::int32_t e = build_huffman_table(chunk, block.huffman_src, block.huffman_limit, table, &max_bits, &used, scratch);
      if (e != kOk) return e;
      HuffmanStreams s{};
      e = split_huffman_streams(chunk, block.literals_src, block.literals_src_size, n, block.literals_type == kHuffman4, s);
      if (e != kOk) return e;
      for (std::uint32_t k = 0; k < s.streams; ++k) {
        e = decode_huffman_stream(table, max_bits, chunk + s.src[k], s.size[k], out + s.out[k], s.count[k]);
        if (e != kOk) return e;
      }
      return kOk;
    }
  }
}

}  // namespace zarrkit::gpu::zstd
