#include "gpu/zstd/zstd_host_decoder.h"

#include <limits>
#include <memory>

#include "gpu/zstd/zstd_execute.cuh"
#include "gpu/zstd/zstd_huffman.cuh"
#include "gpu/zstd/zstd_sequences.cuh"
#include "gpu/zstd/zstd_walk.cuh"
#include "gpu/zstd/zstd_xxhash.cuh"

namespace zarrkit::gpu::zstd {
namespace {

struct VectorSink {
  ChunkWalk& walk;
  std::uint32_t block_count() const { return static_cast<std::uint32_t>(walk.blocks.size()); }
  bool add_block(const BlockJob& b) {
    walk.blocks.push_back(b);
    return true;
  }
  bool add_frame(const FrameJob& f) {
    walk.frames.push_back(f);
    return true;
  }
};

constexpr std::uint64_t kMaxChunk = std::numeric_limits<std::uint32_t>::max();

}  // namespace

ChunkWalk walk(const std::uint8_t* input, std::size_t size, std::uint64_t capacity) {
  ChunkWalk w;
  if (size > kMaxChunk || capacity > kMaxChunk) {
    w.error = kErrTooLarge;
    return w;
  }
  VectorSink sink{w};
  w.error = walk_chunk(input, static_cast<std::uint32_t>(size), capacity, sink, w.totals);
  return w;
}

HostDecodeResult decode_on_host(const std::uint8_t* input, std::size_t size, std::uint8_t* out,
                                std::uint64_t capacity) {
  HostDecodeResult r;
  const ChunkWalk w = walk(input, size, capacity);
  if (w.error != kOk) {
    r.error = w.error;
    r.stage = 1;
    return r;
  }
  // The areas the walk sized: at most `capacity` literals and capacity / 3 sequences.
  std::vector<std::uint8_t> literals(w.totals.literals);
  std::vector<Sequence> sequences(w.totals.sequences);
  std::vector<BlockState> states(w.blocks.size());
  auto huffman_table = std::make_unique<std::uint16_t[]>(kHuffmanTableSize);
  auto huffman_scratch = std::make_unique<HuffmanScratch>();
  for (const BlockJob& b : w.blocks) {
    if (b.type != kCompressedBlock) continue;
    const std::int32_t e =
        decode_block_literals(input, b, literals.data() + b.literals_offset, huffman_table.get(), *huffman_scratch);
    if (e != kOk) {
      r.error = e;
      r.stage = 2;
      return r;
    }
  }
  auto tables = std::make_unique<SequenceTables>();
  auto table_scratch = std::make_unique<SequenceTableScratch>();
  SequenceCodes codes;
  fill_sequence_codes(codes, 0, 1);
  for (std::size_t i = 0; i < w.blocks.size(); ++i) {
    const BlockJob& b = w.blocks[i];
    if (b.type != kCompressedBlock) continue;
    std::int32_t e = b.sequences > 0 ? build_block_tables(input, b, *tables, *table_scratch) : kOk;
    if (e == kOk) e = decode_block_sequences(input, b, *tables, codes, sequences.data() + b.sequences_offset, states[i]);
    if (e != kOk) {
      r.error = e;
      r.stage = 3;
      return r;
    }
  }
  std::vector<std::uint64_t> frame_start(w.frames.size());
  std::uint64_t total = 0;
  for (std::size_t f = 0; f < w.frames.size(); ++f) {
    std::uint64_t frame_size = 0;
    frame_start[f] = total;
    const std::int32_t e = scan_frame(w.frames[f], w.blocks.data(), states.data(), total, capacity, &frame_size);
    if (e != kOk) {
      r.error = e;
      r.stage = 4;
      return r;
    }
    total += frame_size;
  }
  for (std::size_t i = 0; i < w.blocks.size(); ++i) {
    const BlockJob& b = w.blocks[i];
    const std::int32_t e = execute_block(input, b, states[i], literals.data() + b.literals_offset,
                                         sequences.data() + b.sequences_offset, out, capacity, frame_start[b.frame]);
    if (e != kOk) {
      r.error = e;
      r.stage = 5;
      return r;
    }
  }
  for (std::size_t f = 0; f < w.frames.size(); ++f) {
    const FrameJob& frame = w.frames[f];
    if (!frame.has_checksum) continue;
    const std::uint64_t end = f + 1 < w.frames.size() ? frame_start[f + 1] : total;
    const auto hash = static_cast<std::uint32_t>(xxh64(out + frame_start[f], end - frame_start[f]));
    if (hash != frame.checksum) {
      r.error = kErrChecksum;
      r.stage = 6;
      return r;
    }
  }
  r.size = total;
  return r;
}

}  // namespace zarrkit::gpu::zstd
