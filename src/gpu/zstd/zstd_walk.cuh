// The walk of the zstd decoder: one pass over a chunk's frames that reads every header the
// later stages need and resolves what blocks take from the blocks before them (RFC 8878
// 3.1.1, 3.1.1.3.1, 3.1.1.3.2.1). Host and device (zstd_common.cuh).
//
// For each frame: its header (window, content size, checksum flag; a dictionary or the
// reserved bit refuse it) and, after its last block, its checksum. For each block: its type
// and content; for a compressed block, its literals section header (type, sizes, streams)
// and its sequences section header (count, modes, FSE table descriptions, which the walk
// parses to find where they end). A treeless literals block gets the tree description of
// the last compressed literals block of its frame; a repeated FSE table gets the last table
// of its kind. Blocks also get their place in the chunk's literal and sequence areas.
//
// The checks are libzstd 1.5's (ZSTD_decompressDCtx, the host codec), in the places it
// makes them: a frame decoded here or refused agrees with the host's result. The walk
// reads only headers: O(blocks) work.
#pragma once

#include <cstdint>

#include "gpu/zstd/zstd_common.cuh"
#include "gpu/zstd/zstd_fse.cuh"

namespace zarrkit::gpu::zstd {

constexpr std::uint32_t kFrameMagic = 0xFD2FB528u;
constexpr std::uint32_t kSkippableMagic = 0x184D2A50u;
constexpr std::uint32_t kSkippableMask = 0xFFFFFFF0u;

namespace detail {

// What a frame's blocks inherit from the blocks before them.
struct FrameTables {
  bool have_huffman = false;
  std::uint32_t huffman_src = 0, huffman_limit = 0;
  bool repeat_allowed = false;  // a block with sequences came before (libzstd's fseEntropy)
  TableRef last[3];
};

// The literals section of a compressed block whose content is [p, p + size): fills the
// block's literal fields and *section (the section's bytes).
ZSTD_HD std::int32_t walk_literals(const std::uint8_t* in, std::uint32_t p, std::uint32_t size, BlockJob& b,
                                   FrameTables& f, std::uint32_t* section) {
  if (size < 2) return kErrLiteralsHeader;
  const std::uint32_t b0 = in[p];
  const std::uint32_t type = b0 & 3, format = (b0 >> 2) & 3;
  if (type <= 1) {  // raw or RLE
    std::uint32_t header = 1, n = b0 >> 3;
    if (format == 1) {
      header = 2;
      if (type == 1 && size < 3) return kErrLiteralsHeader;
      n = read_le16(in + p) >> 4;
    } else if (format == 3) {
      header = 3;
      if (size < (type == 1 ? 4u : 3u)) return kErrLiteralsHeader;
      n = read_le24(in + p) >> 4;
    }
    b.decoded = n;
    b.literals_src = p + header;
    if (type == 0) {
      if (std::uint64_t{header} + n > size) return kErrLiteralsHeader;
      b.literals_type = kRawLiterals;
      b.literals_src_size = n;
      *section = header + n;
    } else {
      if (n > kBlockMaxBytes) return kErrLiteralsSize;
      b.literals_type = kRleLiterals;
      b.literals_src_size = 1;
      *section = header + 1;
    }
    return kOk;
  }
  // Huffman-coded: compressed (with a tree description) or treeless.
  if (type == 3 && !f.have_huffman) return kErrTreelessFirst;
  if (size < 5) return kErrLiteralsHeader;
  const std::uint32_t word = read_le32(in + p);
  std::uint32_t header, n, compressed;
  if (format <= 1) {
    header = 3;
    n = (word >> 4) & 0x3FF;
    compressed = (word >> 14) & 0x3FF;
  } else if (format == 2) {
    header = 4;
    n = (word >> 4) & 0x3FFF;
    compressed = word >> 18;
  } else {
    header = 5;
    n = (word >> 4) & 0x3FFFF;
    compressed = (word >> 22) + (static_cast<std::uint32_t>(in[p + 4]) << 10);
  }
  const bool four = format != 0;
  if (n > kBlockMaxBytes) return kErrLiteralsSize;
  if (four && n < 6) return kErrLiteralsSize;
  if (std::uint64_t{compressed} + header > size) return kErrLiteralsHeader;
  const std::uint32_t start = p + header;
  b.decoded = n;
  b.literals_type = four ? kHuffman4 : kHuffman1;
  if (type == 2) {
    // The description's size is in its first byte; the streams after it need a byte.
    if (compressed == 0) return kErrHuffmanTable;
    const std::uint32_t h = in[start];
    const std::uint32_t description = h >= 128 ? 1 + (h - 127 + 1) / 2 : 1 + h;
    if (description >= compressed) return kErrHuffmanTable;
    f.have_huffman = true;
    f.huffman_src = start;
    f.huffman_limit = start + compressed;
    b.literals_src = start + description;
    b.literals_src_size = compressed - description;
  } else {
    b.treeless = 1;
    b.literals_src = start;
    b.literals_src_size = compressed;
  }
  b.huffman_src = f.huffman_src;
  b.huffman_limit = f.huffman_limit;
  *section = header + compressed;
  return kOk;
}

// The sequences section [q, q + size) of a compressed block.
ZSTD_HD std::int32_t walk_sequences(const std::uint8_t* in, std::uint32_t q, std::uint32_t size, BlockJob& b,
                                    FrameTables& f) {
  if (size < 1) return kErrSequencesHeader;
  const std::uint32_t b0 = in[q];
  b.sequences = 0;
  if (b0 == 0) {
    if (size != 1) return kErrSequencesHeader;
    b.sequences_src = q + 1;
    b.sequences_src_size = 0;
    for (std::uint32_t k = 0; k < 3; ++k) b.tables[k] = f.last[k];
    return kOk;
  }
  std::uint32_t at = 1;
  if (b0 < 128) {
    b.sequences = b0;
  } else if (b0 < 255) {
    if (size < 2) return kErrSequencesHeader;
    b.sequences = ((b0 - 128) << 8) + in[q + 1];
    at = 2;
  } else {
    if (size < 3) return kErrSequencesHeader;
    b.sequences = read_le16(in + q + 1) + 0x7F00;
    at = 3;
  }
  if (at + 1 > size) return kErrSequencesHeader;
  const std::uint32_t modes = in[q + at];
  b.sequence_modes = static_cast<std::uint8_t>(modes);
  ++at;
  SequenceTableScratch scratch;
  for (std::uint32_t kind = 0; kind < 3; ++kind) {
    const std::uint32_t mode = (modes >> (6 - 2 * kind)) & 3;
    TableRef ref;
    if (mode == 0) {
      ref.mode = kPredefinedTable;
    } else if (mode == 1) {
      if (at >= size) return kErrSequencesHeader;
      ref.mode = kRleTable;
      ref.rle_symbol = in[q + at];
      if (ref.rle_symbol > max_code(kind)) return kErrFseTable;
      ++at;
    } else if (mode == 2) {
      std::uint32_t symbols = 0, log = 0, used = 0;
      const std::int32_t e =
          read_fse_counts(in + q + at, size - at, max_code(kind), max_log(kind), scratch.counts, &symbols, &log, &used);
      if (e != kOk) return e;
      ref.mode = kFseTable;
      ref.src = q + at;
      ref.limit = q + size;
      at += used;
    } else {
      if (!f.repeat_allowed) return kErrRepeatFirst;
      ref = f.last[kind];
    }
    f.last[kind] = ref;
    b.tables[kind] = ref;
  }
  if (b.sequences > 0) f.repeat_allowed = true;
  b.sequences_src = q + at;
  b.sequences_src_size = size - at;
  return kOk;
}

}  // namespace detail

// Walks the frames of in[0, size), whose output may hold `capacity` bytes. For each block,
// sink.add_block(BlockJob) (false: the sink is full), and for each frame, after its blocks,
// sink.add_frame(FrameJob); sink.block_count() is the number of blocks added. `totals` gets
// the counts and the sizes of the literal and sequence areas.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <typename Sink>
ZSTD_HD std::int32_t walk_chunk(const std::uint8_t* in, std::uint32_t size, std::uint64_t capacity, Sink& sink,
                                WalkTotals& totals) {
  totals = WalkTotals{};
  if (size == 0) return kErrEmpty;
  std::uint32_t pos = 0;
  while (size - pos >= 5) {
    const std::uint32_t magic = read_le32(in + pos);
    if ((magic & kSkippableMask) == kSkippableMagic) {
      if (size - pos < 8) return kErrSkippableFrame;
      const std::uint64_t frame_size = std::uint64_t{read_le32(in + pos + 4)} + 8;
      if (frame_size > 0xFFFFFFFFu || frame_size > size - pos) return kErrSkippableFrame;
      pos += static_cast<std::uint32_t>(frame_size);
      continue;
    }
    if (magic != kFrameMagic) return kErrFrameMagic;
    const std::uint32_t remaining = size - pos;
    if (remaining < 9) return kErrFrameHeader;
    const std::uint32_t fhd = in[pos + 4];
    const bool single = (fhd >> 5) & 1;
    const std::uint32_t did_code = fhd & 3, fcs_code = fhd >> 6;
    constexpr std::uint32_t kDidSize[4] = {0, 1, 2, 4};
    constexpr std::uint32_t kFcsSize[4] = {0, 2, 4, 8};
    const std::uint32_t header = 5 + (single ? 0 : 1) + kDidSize[did_code] + kFcsSize[fcs_code] + (single && fcs_code == 0 ? 1 : 0);
    if (remaining < header + 3) return kErrFrameHeader;
    if (fhd & 0x08) return kErrFrameHeader;
    FrameJob frame;
    std::uint32_t at = pos + 5;
    if (!single) {
      const std::uint32_t wd = in[at++];
      const std::uint32_t log = (wd >> 3) + 10;
      if (log > 31) return kErrWindowTooLarge;
      const std::uint64_t base = std::uint64_t{1} << log;
      frame.window_size = base + (base >> 3) * (wd & 7);
    }
    std::uint32_t dictionary = 0;
    if (did_code == 1) dictionary = in[at];
    if (did_code == 2) dictionary = read_le16(in + at);
    if (did_code == 3) dictionary = read_le32(in + at);
    at += kDidSize[did_code];
    if (dictionary != 0) return kErrDictionary;
    if (fcs_code == 0 && single) frame.content_size = in[at];
    if (fcs_code == 1) frame.content_size = read_le16(in + at) + 256;
    if (fcs_code == 2) frame.content_size = read_le32(in + at);
    if (fcs_code == 3) frame.content_size = read_le64(in + at);
    if (single) frame.window_size = frame.content_size;
    frame.has_checksum = (fhd >> 2) & 1;
    pos += header;

    frame.first_block = sink.block_count();
    detail::FrameTables tables;
    for (;;) {
      if (size - pos < 3) return kErrBlockHeader;
      const std::uint32_t h = read_le24(in + pos);
      const std::uint32_t type = (h >> 1) & 3, block_size = h >> 3;
      const bool last = h & 1;
      if (type == 3) return kErrBlockHeader;
      pos += 3;
      const std::uint32_t content = type == kRleBlock ? 1 : block_size;
      if (content > size - pos) return kErrBlockTruncated;
      BlockJob b;
      b.src = pos;
      b.src_size = content;
      b.frame = totals.frames;
      b.type = static_cast<std::uint8_t>(type);
      std::uint64_t min_output = block_size;
      if (type == kCompressedBlock) {
        if (block_size > kBlockMaxBytes) return kErrBlockTooLarge;
        std::uint32_t section = 0;
        std::int32_t e = detail::walk_literals(in, pos, block_size, b, tables, &section);
        if (e != kOk) return e;
        e = detail::walk_sequences(in, pos + section, block_size - section, b, tables);
        if (e != kOk) return e;
        b.literals_offset = totals.literals;
        b.sequences_offset = totals.sequences;
        totals.literals += b.decoded;
        totals.sequences += b.sequences;
        min_output = std::uint64_t{b.decoded} + std::uint64_t{kMinMatch} * b.sequences;
      } else {
        b.decoded = block_size;
      }
      totals.min_output += min_output;
      if (totals.min_output > capacity) return kErrOutputTooLarge;
      if (!sink.add_block(b)) return kErrTableCapacity;
      ++totals.blocks;
      pos += content;
      if (last) break;
    }
    frame.blocks = sink.block_count() - frame.first_block;
    if (frame.has_checksum) {
      if (size - pos < 4) return kErrChecksumMissing;
      frame.checksum = read_le32(in + pos);
      pos += 4;
    }
    if (!sink.add_frame(frame)) return kErrTableCapacity;
    ++totals.frames;
  }
  if (pos != size) return kErrTrailing;
  return kOk;
}

}  // namespace zarrkit::gpu::zstd
