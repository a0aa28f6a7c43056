// The execution stage of the zstd decoder (RFC 8878 3.1.2): a block's literals and matches
// into the chunk's output, one byte after another. The host runs it block by block in
// order; the device's execution kernel (src/gpu/codecs/zstd_device.cu) runs the blocks of a
// frame side by side with the same checks, and copies literals and matches in parallel.
#pragma once

#include <cstdint>

#include "gpu/zstd/zstd_common.cuh"

namespace zarrkit::gpu::zstd {

// Writes block `b` (its state from the sequence stage and the scan) into out[0, capacity):
// raw and RLE blocks from the input, compressed blocks from `literals` (the block's
// decoded literals) and `sequences`. A match may reach back to the start of the frame,
// `frame_start` bytes into the output.
ZSTD_HD std::int32_t execute_block(const std::uint8_t* chunk, const BlockJob& b, const BlockState& s,
                                   const std::uint8_t* literals, const Sequence* sequences, std::uint8_t* out,
                                   std::uint64_t capacity, std::uint64_t frame_start) {
  std::uint64_t dst = s.out_offset;
  const std::uint64_t end = dst + s.out_size;
  if (end > capacity || dst < frame_start) return kErrOutputTooLarge;
  if (b.type == kRawBlock) {
    if (s.out_size != b.src_size) return kErrBlockTruncated;
    for (std::uint32_t i = 0; i < s.out_size; ++i) out[dst + i] = chunk[b.src + i];
    return kOk;
  }
  if (b.type == kRleBlock) {
    const std::uint8_t v = chunk[b.src];
    for (std::uint32_t i = 0; i < s.out_size; ++i) out[dst + i] = v;
    return kOk;
  }
  std::uint32_t lit = 0;
  for (std::uint32_t i = 0; i < b.sequences; ++i) {
    const Sequence& q = sequences[i];
    const std::uint32_t ll = sequence_literals(q);
    if (ll > b.decoded - lit) return kErrLiteralsOverrun;
    if (ll > end - dst) return kErrOutputTooLarge;
    for (std::uint32_t k = 0; k < ll; ++k) out[dst + k] = literals[lit + k];
    dst += ll;
    lit += ll;
    const std::uint32_t offset = resolve_repeat(sequence_offset(q), s.start_history);
    if (offset > dst - frame_start) return kErrOffset;
    if (q.match_length > end - dst) return kErrOutputTooLarge;
    const std::uint8_t* from = out + dst - offset;
    for (std::uint32_t k = 0; k < q.match_length; ++k) out[dst + k] = from[k];  // forwards: overlap repeats
    dst += q.match_length;
  }
  const std::uint32_t rest = b.decoded - lit;
  if (rest != end - dst) return kErrOutputTooLarge;
  for (std::uint32_t k = 0; k < rest; ++k) out[dst + k] = literals[lit + k];
  return kOk;
}

}  // namespace zarrkit::gpu::zstd
