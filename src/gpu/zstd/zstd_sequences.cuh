// The sequences stage of the zstd decoder (RFC 8878 3.1.1.3.2 and 3.1.2), and the scan that
// links the blocks of a frame. Host and device (zstd_common.cuh).
//
// A block's sequences decode without the blocks before it: the repeat offsets it starts
// with are kept symbolic (RepeatValue: "slot s of the starting history, minus d"), so the
// decoded offsets and the history it ends with are functions of the history it starts with.
// The scan then walks the blocks of each frame in order: the history each block starts
// with (1, 4, 8 at the start of a frame; blocks without sequences leave it as it is), where
// each block's output starts, and the frame's size against its header and the output.
#pragma once

#include <cstdint>

#include "gpu/zstd/zstd_common.cuh"
#include "gpu/zstd/zstd_fse.cuh"

namespace zarrkit::gpu::zstd {

// A block's three decoding tables (SequenceCell's packed words) and their logs.
struct SequenceTables {
  std::uint16_t literals_lengths[kSequenceTableCells[kLiteralsLengths]];
  std::uint16_t offsets[kSequenceTableCells[kOffsets]];
  std::uint16_t match_lengths[kSequenceTableCells[kMatchLengths]];
  std::uint32_t log[3];

  ZSTD_HD std::uint16_t* table(std::uint32_t kind) {
    return kind == kLiteralsLengths ? literals_lengths : kind == kOffsets ? offsets : match_lengths;
  }
};

// What one lane of the sequences stage keeps while it decodes a block: the block's tables and
// the scratch their build needs. On the device each lane has its own in shared memory (each
// sequence's three cells are loads that the next sequence waits for).
struct SequenceLaneMemory {
  SequenceTables tables;
  SequenceTableScratch scratch;
};

ZSTD_HD std::int32_t build_block_tables(const std::uint8_t* chunk, const BlockJob& block, SequenceTables& t,
                                        SequenceTableScratch& scratch) {
  for (std::uint32_t kind = 0; kind < 3; ++kind) {
    const std::int32_t e = build_sequence_table(chunk, block.tables[kind], kind, t.table(kind), &t.log[kind], scratch);
    if (e != kOk) return e;
  }
  return kOk;
}

// The bits of a sequence, read with checks (BackwardBits::read) or, once ensure() has said
// they are loaded, without (take).
struct CheckedBits {
  BackwardBits& in;
  ZSTD_HD_FORCE std::uint32_t operator()(std::uint32_t n) const { return in.read(n); }
};
struct LoadedBits {
  BackwardBits& in;
  ZSTD_HD_FORCE std::uint32_t operator()(std::uint32_t n) const { return in.take(n); }
};

// What one sequence's cells make of the next bits: its lengths and offset (the repeat
// history updated), and the next states unless it is the last.
template <typename Bits>
ZSTD_HD_FORCE Sequence decode_sequence(Bits read, const CellView& ll, const CellView& of, const CellView& ml, bool last,
                                       RepeatValue* history, std::uint32_t& ll_state, std::uint32_t& of_state,
                                       std::uint32_t& ml_state) {
  // Offset bits first, then match length, then literals length.
  const std::uint32_t code = of.code;
  RepeatValue offset;
  if (code > 1) {
    const std::uint64_t value = std::uint64_t{of.baseline} + read(code) - 3;
    offset = {static_cast<std::uint32_t>(value), 0};
    history[2] = history[1];
    history[1] = history[0];
    history[0] = offset;
  } else {
    // Repeat codes; with no literals they shift by one, and the third becomes the most
    // recent offset minus one (which libzstd turns into 1 when it would be 0).
    const std::uint32_t ll0 = ll.code == 0 ? 1 : 0;  // no literals
    const std::uint32_t index = code == 0 ? ll0 : 1 + ll0 + read(1);
    if (index == 0) {
      offset = history[0];
    } else if (index == 3) {
      offset = history[0];
      if (offset.kind == 0) {
        offset.value = offset.value > 1 ? offset.value - 1 : 1;
      } else {
        offset.value += 1;
      }
      history[2] = history[1];
      history[1] = history[0];
      history[0] = offset;
    } else {
      offset = index == 1 ? history[1] : history[2];  // constant indices: the history stays in registers
      if (index == 2) history[2] = history[1];
      history[1] = history[0];
      history[0] = offset;
    }
  }
  const std::uint32_t match_length = ml.baseline + read(ml.extra);
  const std::uint32_t literal_length = ll.baseline + read(ll.extra);
  if (!last) {
    ll_state = ll.next_base + read(ll.bits);
    ml_state = ml.next_base + read(ml.bits);
    of_state = of.next_base + read(of.bits);
  }
  return {literal_length | offset.kind << 30, match_length, offset.value};
}

// The most bits a take() path handles in one sequence (BackwardBits::ensure).
constexpr std::uint32_t kLoadedSequenceBits = 57;

// Decodes the block's sequences into out[0..block.sequences) and sets state.out_size and
// state.end_history. Literal lengths must add up to at most the block's literals. A
// sequence whose bits are all loaded and inside the stream is read without checks; the
// others (long offsets, the stream's last bits) with them.
ZSTD_HD std::int32_t decode_block_sequences(const std::uint8_t* chunk, const BlockJob& block, const SequenceTables& t,
                                            const SequenceCodes& codes, Sequence* out, BlockState& state) {
  RepeatValue history[3] = {{0, 1}, {0, 2}, {0, 3}};
  std::uint64_t literals = 0, matches = 0;
  const std::uint32_t n = block.sequences;
  if (n > 0) {
    BackwardBits in;
    if (!in.init(chunk + block.sequences_src, block.sequences_src_size)) return kErrSequenceStream;
    const std::uint32_t ll_log = t.log[kLiteralsLengths], of_log = t.log[kOffsets], ml_log = t.log[kMatchLengths];
    std::uint32_t ll_state = in.read(ll_log);
    std::uint32_t of_state = in.read(of_log);
    std::uint32_t ml_state = in.read(ml_log);
    for (std::uint32_t i = 0; i < n; ++i) {
      const CellView ll = view_cell(SequenceCell{t.literals_lengths[ll_state]}, ll_log, kLiteralsLengths, codes);
      const CellView of = view_cell(SequenceCell{t.offsets[of_state]}, of_log, kOffsets, codes);
      const CellView ml = view_cell(SequenceCell{t.match_lengths[ml_state]}, ml_log, kMatchLengths, codes);
      const bool last = i + 1 == n;
      // At most: the offset's extra bits or a repeat code's bit, both lengths' extra bits,
      // the three states' bits.
      const std::uint32_t need = of.all_bits() + 1u + ml.all_bits() + ll.all_bits();
      Sequence q;
      if (need <= kLoadedSequenceBits && in.ensure(need)) {
        q = decode_sequence(LoadedBits{in}, ll, of, ml, last, history, ll_state, of_state, ml_state);
        in.settle();
      } else {
        q = decode_sequence(CheckedBits{in}, ll, of, ml, last, history, ll_state, of_state, ml_state);
        if (in.overflowed()) return kErrSequenceStream;
      }
      literals += sequence_literals(q);
      matches += q.match_length;
      out[i] = q;
    }
    if (!in.finished_exactly()) return kErrSequenceStream;
  }
  if (literals > block.decoded) return kErrLiteralsOverrun;
  const std::uint64_t size = std::uint64_t{block.decoded} + matches;
  if (size > 0xFFFFFFFFu) return kErrOutputTooLarge;
  state.out_size = static_cast<std::uint32_t>(size);
  for (int k = 0; k < 3; ++k) state.end_history[k] = history[k];
  state.has_history = n > 0 ? 1 : 0;
  return kOk;
}

// The scan of one frame: blocks[frame.first_block ..) in order, their states already made
// by the sequence stage (raw and RLE blocks: out_size = decoded). Sets each block's
// out_offset (from `frame_start`, the frame's place in the chunk's output), frame_pos and
// start_history, and *frame_size. Checks the frame's size against its content size and
// against `capacity`, the chunk's output.
ZSTD_HD std::int32_t scan_frame(const FrameJob& frame, const BlockJob* blocks, BlockState* states,
                                std::uint64_t frame_start, std::uint64_t capacity, std::uint64_t* frame_size) {
  std::uint32_t history[3] = {1, 4, 8};
  std::uint64_t pos = 0;
  for (std::uint32_t b = frame.first_block; b < frame.first_block + frame.blocks; ++b) {
    BlockState& s = states[b];
    if (blocks[b].type != kCompressedBlock) s.out_size = blocks[b].decoded;
    if (frame_start + pos + s.out_size > capacity) return kErrOutputTooLarge;
    s.out_offset = static_cast<std::uint32_t>(frame_start + pos);
    s.frame_pos = static_cast<std::uint32_t>(pos);
    for (int k = 0; k < 3; ++k) s.start_history[k] = history[k];
    if (blocks[b].type == kCompressedBlock && s.has_history) {
      std::uint32_t next[3];
      for (int k = 0; k < 3; ++k) next[k] = resolve_repeat(s.end_history[k], history);
      for (int k = 0; k < 3; ++k) history[k] = next[k];
    }
    pos += s.out_size;
  }
  if (frame.content_size != kUnknownContentSize && pos != frame.content_size) return kErrContentSize;
  *frame_size = pos;
  return kOk;
}

}  // namespace zarrkit::gpu::zstd
