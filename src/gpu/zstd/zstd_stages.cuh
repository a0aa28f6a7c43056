// The stages of a zstd batch (zstd_batch.h) as a warp runs them: one warp per block (or
// frame), its 32 lanes sharing the work; the sequences stage, a lane per block. Written
// against a Warp type that supplies the warp's collectives and memory operations: the
// kernels (src/gpu/codecs/zstd_device.cu) run them with the hardware's, and the host tests
// with 32 threads per emulated warp (zstd_emulated_warp.h), so the parallel logic below is
// tested without a GPU.
//
// A Warp w has: lane(); sync(); ballot(bool); any(bool); shfl(u32, lane); shfl_up(u32, d);
// shfl_xor(u32, mask); load_shared(const u8*) (a byte other warps may have written during
// the stage); fetch_add(u32*, u32), load_progress(u32*) (relaxed), acquire() (after the
// progress a wait wanted) and publish_progress(u32*, u32) (lane 0 only: the counter and the
// blocks' progress); failed(const i32*) and fail(i32*, code) (a chunk's status);
// pause(waited) (the waited-th pause of one wait).
#pragma once

#include <cstdint>

#include "gpu/zstd/zstd_batch.h"
#include "gpu/zstd/zstd_common.cuh"
#include "gpu/zstd/zstd_huffman.cuh"
#include "gpu/zstd/zstd_sequences.cuh"
#include "gpu/zstd/zstd_xxhash.cuh"

#if defined(__CUDACC__)
#define ZSTD_WARP_TEMPLATE _Pragma("nv_exec_check_disable")
#else
#define ZSTD_WARP_TEMPLATE
#endif

namespace zarrkit::gpu::zstd {

constexpr unsigned kWarpLanes = 32;

// The lowest lane of a non-empty mask.
ZSTD_HD_FORCE unsigned lowest_lane(unsigned mask) {
#if defined(__CUDA_ARCH__)
  return static_cast<unsigned>(__ffs(static_cast<int>(mask)) - 1);
#else
  return static_cast<unsigned>(__builtin_ctz(mask));
#endif
}

ZSTD_HD const std::uint8_t* host_or_device_pointer(std::uint64_t address) {
  return reinterpret_cast<const std::uint8_t*>(address);
}
ZSTD_HD std::uint8_t* mutable_pointer(std::uint64_t address) { return reinterpret_cast<std::uint8_t*>(address); }

// The chunk's status as lane 0 reads it, the same for the whole warp.
ZSTD_WARP_TEMPLATE
template <typename Warp>
ZSTD_HD bool warp_chunk_failed(Warp& w, const std::int32_t* status) {
  std::uint32_t failed = 0;
  if (w.lane() == 0) failed = w.failed(status) ? 1 : 0;
  return w.shfl(failed, 0) != 0;
}

// n bytes from `in` to `out` by the lanes (`in` is not written during the stage). Each lane
// loads several values before it stores them, so that its loads are in flight together
// (the compiler cannot move a load above a store that might alias it).
ZSTD_WARP_TEMPLATE
template <typename Warp>
ZSTD_HD void warp_copy(Warp& w, std::uint8_t* out, const std::uint8_t* in, std::uint32_t n) {
  constexpr std::uint32_t kBatch = 4;
  const unsigned lane = w.lane();
  std::uint32_t done = 0;
  if (((reinterpret_cast<std::uintptr_t>(out) | reinterpret_cast<std::uintptr_t>(in)) & 3u) == 0) {
    const std::uint32_t words = n / 4;
    auto* o = reinterpret_cast<std::uint32_t*>(out);
    const auto* i = reinterpret_cast<const std::uint32_t*>(in);
    for (std::uint32_t base = 0; base < words; base += kBatch * kWarpLanes) {
      std::uint32_t v[kBatch];
      for (std::uint32_t j = 0; j < kBatch; ++j) {
        const std::uint32_t k = base + j * kWarpLanes + lane;
        v[j] = k < words ? i[k] : 0;
      }
      for (std::uint32_t j = 0; j < kBatch; ++j) {
        const std::uint32_t k = base + j * kWarpLanes + lane;
        if (k < words) o[k] = v[j];
      }
    }
    done = words * 4;
  }
  for (std::uint32_t base = done; base < n; base += kBatch * kWarpLanes) {
    std::uint8_t v[kBatch];
    for (std::uint32_t j = 0; j < kBatch; ++j) {
      const std::uint32_t k = base + j * kWarpLanes + lane;
      v[j] = k < n ? in[k] : 0;
    }
    for (std::uint32_t j = 0; j < kBatch; ++j) {
      const std::uint32_t k = base + j * kWarpLanes + lane;
      if (k < n) out[k] = v[j];
    }
  }
}

// n bytes of a lane's own literal run, 8 loads at a time.
ZSTD_HD void lane_copy(std::uint8_t* out, const std::uint8_t* in, std::uint32_t n) {
  for (std::uint32_t base = 0; base < n; base += 8) {
    std::uint8_t v[8];
    for (std::uint32_t j = 0; j < 8; ++j) v[j] = base + j < n ? in[base + j] : 0;
    for (std::uint32_t j = 0; j < 8; ++j) {
      if (base + j < n) out[base + j] = v[j];
    }
  }
}

// ---- Literals: a warp per compressed block -----------------------------------------------

// What the literals stage keeps per warp (shared memory on the device).
struct LiteralsWarpMemory {
  std::uint16_t table[kHuffmanTableSize];
  HuffmanScratch scratch;
  HuffmanStreams streams;
  std::int32_t error;
};

ZSTD_WARP_TEMPLATE
template <typename Warp>
ZSTD_HD void warp_literals(Warp& w, const ZstdLaunch& L, std::uint32_t b, LiteralsWarpMemory& s) {
  const BlockJob& block = L.blocks[b];
  if (block.type != kCompressedBlock) return;
  const ZstdChunkJob& chunk = L.chunks[block.chunk];
  if (warp_chunk_failed(w, L.status + chunk.status)) return;
  const std::uint8_t* in = host_or_device_pointer(chunk.input);
  std::uint8_t* out = mutable_pointer(chunk.literals) + block.literals_offset;
  const std::uint32_t n = block.decoded;
  const unsigned lane = w.lane();
  if (block.literals_type == kRawLiterals) {
    warp_copy(w, out, in + block.literals_src, n);
    return;
  }
  if (block.literals_type == kRleLiterals) {
    const std::uint8_t v = in[block.literals_src];
    for (std::uint32_t k = lane; k < n; k += kWarpLanes) out[k] = v;
    return;
  }
  // Lane 0 reads the tree description and splits the streams; the lanes fill the table;
  // then lane k decodes stream k.
  if (lane == 0) {
    std::int32_t e = kErrHuffmanTable;
    std::uint32_t used = 0;
    if (block.huffman_src < block.huffman_limit) {
      e = read_huffman_weights(in + block.huffman_src, block.huffman_limit - block.huffman_src, s.scratch.weights,
                               &used, s.scratch.cells, s.scratch.fse);
    }
    if (e == kOk) {
      huffman_symbol_starts(s.scratch.weights, s.scratch.start);
      e = split_huffman_streams(in, block.literals_src, block.literals_src_size, n, block.literals_type == kHuffman4,
                                s.streams);
    }
    s.error = e;
  }
  w.sync();
  const std::int32_t error = s.error;
  if (error != kOk) {
    if (lane == 0) w.fail(L.status + chunk.status, error);
    w.sync();
    return;
  }
  huffman_fill_table(s.scratch.weights, s.scratch.start, s.table, lane, kWarpLanes);
  w.sync();
  if (lane < s.streams.streams) {
    const std::int32_t e = decode_huffman_stream(s.table, s.scratch.weights.max_bits, in + s.streams.src[lane],
                                                 s.streams.size[lane], out + s.streams.out[lane], s.streams.count[lane]);
    if (e != kOk) w.fail(L.status + chunk.status, e);
  }
  w.sync();  // the warp's memory is reused for its next block
}

// ---- Sequences: a lane per compressed block ----------------------------------------------

// One lane decodes block b's sequences with its own tables (`s`): the lanes of a warp decode
// different blocks side by side, each a serial bit stream. Only the lane's own operations of
// the Warp are used (the chunk's status), no collective: lanes may have different blocks or none.
ZSTD_WARP_TEMPLATE
template <typename Warp>
ZSTD_HD void lane_sequences(Warp& w, const ZstdLaunch& L, std::uint32_t b, const SequenceCodes& codes,
                            SequenceLaneMemory& s) {
  const BlockJob& block = L.blocks[b];
  if (block.type != kCompressedBlock) return;
  const ZstdChunkJob& chunk = L.chunks[block.chunk];
  if (w.failed(L.status + chunk.status)) return;
  const std::uint8_t* in = host_or_device_pointer(chunk.input);
  std::int32_t e = block.sequences > 0 ? build_block_tables(in, block, s.tables, s.scratch) : kOk;
  if (e == kOk) {
    auto* out = reinterpret_cast<Sequence*>(chunk.sequences) + block.sequences_offset;
    e = decode_block_sequences(in, block, s.tables, codes, out, L.states[b]);
  }
  if (e != kOk) w.fail(L.status + chunk.status, e);
}

// ---- Scan: one thread per chunk -------------------------------------------------------------

// Places the blocks of chunk c (zstd_sequences.cuh, scan_frame); returns an Error.
ZSTD_HD std::int32_t scan_chunk(const ZstdLaunch& L, std::uint32_t c) {
  const ZstdChunkJob& chunk = L.chunks[c];
  std::uint64_t total = 0;
  for (std::uint32_t f = chunk.first_frame; f < chunk.first_frame + chunk.frames; ++f) {
    std::uint64_t size = 0;
    const std::int32_t e = scan_frame(L.frames[f], L.blocks, L.states, total, chunk.output_size, &size);
    if (e != kOk) return e;
    total += size;
  }
  return total == chunk.output_size ? kOk : kErrOutputSize;
}

// ---- Execution: a warp per block, blocks in order -------------------------------------------

// A block's progress once it has failed: the blocks waiting for it stop and give up.
constexpr std::uint32_t kFailedProgress = 0xFFFFFFFFu;

ZSTD_WARP_TEMPLATE
template <typename Warp>
ZSTD_HD std::uint32_t warp_inclusive_sum(Warp& w, std::uint32_t v) {
  for (unsigned d = 1; d < kWarpLanes; d <<= 1) {
    const std::uint32_t n = w.shfl_up(v, d);
    if (w.lane() >= d) v += n;
  }
  return v;
}

ZSTD_WARP_TEMPLATE
template <typename Warp>
ZSTD_HD std::uint32_t warp_max(Warp& w, std::uint32_t v) {
  for (unsigned d = kWarpLanes / 2; d > 0; d >>= 1) {
    const std::uint32_t o = w.shfl_xor(v, d);
    v = o > v ? o : v;
  }
  return v;
}

// A match copied by one lane: byte k is from[k mod offset] (an overlapping match repeats
// its pattern), and the bytes before dst are final, so the loads do not wait for the
// stores: 8 at a time.
ZSTD_WARP_TEMPLATE
template <typename Warp>
ZSTD_HD void lane_match_copy(Warp& w, std::uint8_t* dst, std::uint32_t offset, std::uint32_t n) {
  const std::uint8_t* from = dst - offset;
  std::uint32_t index = 0;
  for (std::uint32_t base = 0; base < n; base += 8) {
    std::uint8_t v[8];
    for (std::uint32_t j = 0; j < 8; ++j) {
      v[j] = base + j < n ? w.load_shared(from + index) : 0;
      index = index + 1 == offset ? 0 : index + 1;
    }
    for (std::uint32_t j = 0; j < 8; ++j) {
      if (base + j < n) dst[base + j] = v[j];
    }
  }
}

// A match copied by the whole warp: byte k is from[k mod offset] (the bytes before dst are
// final), each lane advancing its index by 32 mod offset.
ZSTD_WARP_TEMPLATE
template <typename Warp>
ZSTD_HD void warp_match_copy(Warp& w, std::uint8_t* dst, std::uint32_t offset, std::uint32_t n) {
  const std::uint8_t* from = dst - offset;
  const unsigned lane = w.lane();
  if (offset >= n) {
    for (std::uint32_t k = lane; k < n; k += kWarpLanes) dst[k] = w.load_shared(from + k);
    return;
  }
  std::uint32_t index = lane % offset;
  const std::uint32_t step = kWarpLanes % offset;
  for (std::uint32_t k = lane; k < n; k += kWarpLanes) {
    dst[k] = w.load_shared(from + index);
    index += step;
    if (index >= offset) index -= offset;
  }
}

// Marks `value` bytes of a block written (or kFailedProgress), after the warp's writes.
ZSTD_WARP_TEMPLATE
template <typename Warp>
ZSTD_HD void publish(Warp& w, std::uint32_t* progress, std::uint32_t value) {
  w.sync();
  if (w.lane() == 0) w.publish_progress(progress, value);
  w.sync();
}

// What a warp knows of its frame: bytes [0, known) are written, and `block` holds byte
// `known`.
struct KnownPrefix {
  std::uint32_t known;
  std::uint32_t block;
};

// Waits until bytes [0, need) of the frame (all in blocks before `self`) are written.
// False when one of those blocks failed.
ZSTD_WARP_TEMPLATE
template <typename Warp>
ZSTD_HD bool wait_for(Warp& w, const ZstdLaunch& L, std::uint32_t self, std::uint32_t need, KnownPrefix& k) {
  std::uint32_t ok = 1, waited = 0;
  if (w.lane() == 0) {
    while (k.known < need) {
      if (k.block >= self) {  // never wait on oneself (the scan placed the blocks otherwise)
        ok = 0;
        break;
      }
      const std::uint32_t p = w.load_progress(&L.states[k.block].progress);
      if (p == kFailedProgress) {
        ok = 0;
        break;
      }
      const std::uint32_t start = L.states[k.block].frame_pos, size = L.states[k.block].out_size;
      if (p >= size) {
        k.known = start + size;
        ++k.block;
      } else if (start + p >= need) {
        k.known = start + p;
      } else {
        w.pause(waited++);
      }
    }
    w.acquire();  // the bytes the progress covered are read after it (the others: after the shuffles)
  }
  k.known = w.shfl(k.known, 0);
  k.block = w.shfl(k.block, 0);
  return w.shfl(ok, 0) != 0;
}

constexpr std::uint32_t kLaneLiterals = 16;  // longer literal runs: the whole warp copies
constexpr std::uint32_t kLaneMatch = 32;     // longer matches: the whole warp copies
constexpr std::uint32_t kPublishEvery = 4096;

// The sequences of a compressed block, 32 at a time: each lane takes one, a scan of their
// lengths places them, the lanes copy their literal runs, then their matches in rounds: a
// match whose source ends before the first match not yet copied is ready (every byte
// before that one is final), and the first one always is. A match reaching into an earlier
// block of the frame first waits for those bytes. Returns an Error.
ZSTD_WARP_TEMPLATE
template <typename Warp>
ZSTD_HD std::int32_t warp_execute_sequences(Warp& w, const ZstdLaunch& L, const BlockJob& block, const BlockState& st,
                                            std::uint32_t b, const ZstdChunkJob& chunk, KnownPrefix& known) {
  const std::uint8_t* literals = host_or_device_pointer(chunk.literals) + block.literals_offset;
  const Sequence* sequences = reinterpret_cast<const Sequence*>(chunk.sequences) + block.sequences_offset;
  std::uint8_t* out = mutable_pointer(chunk.output) + st.out_offset;
  const std::uint32_t size = st.out_size, literal_count = block.decoded, block_start = st.frame_pos;
  const unsigned lane = w.lane();
  std::uint32_t pos = 0, lit = 0, published = 0;
  for (std::uint32_t g = 0; g < block.sequences; g += kWarpLanes) {
    const std::uint32_t i = g + lane;
    const bool valid = i < block.sequences;
    std::uint32_t ll = 0, ml = 0, offset = 0;
    if (valid) {
      const Sequence q = sequences[i];
      ll = sequence_literals(q);
      ml = q.match_length;
      offset = resolve_repeat(sequence_offset(q), st.start_history);
    }
    const std::uint32_t end = warp_inclusive_sum(w, ll + ml);
    const std::uint32_t lit_end = warp_inclusive_sum(w, ll);
    const std::uint32_t total = w.shfl(end, kWarpLanes - 1);
    const std::uint32_t total_literals = w.shfl(lit_end, kWarpLanes - 1);
    if (total_literals > literal_count - lit) return kErrLiteralsOverrun;
    if (total > size - pos) return kErrOutputTooLarge;
    const std::uint32_t lit_dst = pos + end - ll - ml, match_dst = lit_dst + ll;
    const std::uint32_t lit_src = lit + lit_end - ll;
    // A match may reach back to its frame's start, no further.
    if (w.any(valid && offset > block_start + match_dst)) return kErrOffset;
    // Literal runs: short ones by their lane, long ones by the warp.
    if (ll <= kLaneLiterals) lane_copy(out + lit_dst, literals + lit_src, ll);
    for (unsigned long_runs = w.ballot(ll > kLaneLiterals); long_runs != 0; long_runs &= long_runs - 1) {
      const unsigned l = lowest_lane(long_runs);
      warp_copy(w, out + w.shfl(lit_dst, l), literals + w.shfl(lit_src, l), w.shfl(ll, l));
    }
    // Sources in earlier blocks: wait until they are written.
    const std::uint32_t source = block_start + match_dst - offset;  // frame-relative
    const std::uint32_t need = valid && source < block_start ? (source + ml < block_start ? source + ml : block_start) : 0;
    const std::uint32_t most = warp_max(w, need);
    if (most > known.known && !wait_for(w, L, b, most, known)) return kErrOffset;  // an earlier block failed
    w.sync();
    // Matches, in rounds.
    unsigned pending = w.ballot(valid && ml > 0);
    while (pending != 0) {
      const unsigned first = lowest_lane(pending);
      const std::uint32_t first_dst = w.shfl(match_dst, first);
      const bool mine = ((pending >> lane) & 1u) != 0;
      const bool ready = mine && (lane == first || source + ml <= block_start + first_dst);
      const unsigned ready_mask = w.ballot(ready);
      if (ready && ml <= kLaneMatch) lane_match_copy(w, out + match_dst, offset, ml);
      for (unsigned long_ones = w.ballot(ready && ml > kLaneMatch); long_ones != 0; long_ones &= long_ones - 1) {
        const unsigned l = lowest_lane(long_ones);
        warp_match_copy(w, out + w.shfl(match_dst, l), w.shfl(offset, l), w.shfl(ml, l));
      }
      w.sync();
      pending &= ~ready_mask;
    }
    pos += total;
    lit += total_literals;
    if (pos - published >= kPublishEvery) {
      publish(w, &L.states[b].progress, pos);
      published = pos;
    }
  }
  // The literals after the last sequence.
  const std::uint32_t rest = literal_count - lit;
  if (rest != size - pos) return kErrOutputTooLarge;
  warp_copy(w, out + pos, literals + lit, rest);
  return kOk;
}

// Executes block b: raw and RLE blocks are copies, compressed blocks their sequences. Then
// publishes its end (or its failure) to the blocks waiting for it.
ZSTD_WARP_TEMPLATE
template <typename Warp>
ZSTD_HD void warp_execute_block(Warp& w, const ZstdLaunch& L, std::uint32_t b) {
  const BlockJob& block = L.blocks[b];
  const ZstdChunkJob& chunk = L.chunks[block.chunk];
  std::uint32_t* progress = &L.states[b].progress;
  if (warp_chunk_failed(w, L.status + chunk.status)) {
    publish(w, progress, kFailedProgress);
    return;
  }
  const BlockState st = L.states[b];
  std::int32_t e = kOk;
  std::uint8_t* out = mutable_pointer(chunk.output) + st.out_offset;
  const std::uint8_t* in = host_or_device_pointer(chunk.input);
  if (std::uint64_t{st.out_offset} + st.out_size > chunk.output_size) {
    e = kErrOutputTooLarge;
  } else if (block.type == kRawBlock) {
    if (st.out_size != block.src_size) {
      e = kErrBlockTruncated;
    } else {
      warp_copy(w, out, in + block.src, st.out_size);
    }
  } else if (block.type == kRleBlock) {
    const std::uint8_t v = in[block.src];
    for (std::uint32_t k = w.lane(); k < st.out_size; k += kWarpLanes) out[k] = v;
  } else {
    KnownPrefix known{0, L.frames[block.frame].first_block};
    e = warp_execute_sequences(w, L, block, st, b, chunk, known);
  }
  if (e != kOk && w.lane() == 0) w.fail(L.status + chunk.status, e);
  publish(w, progress, e == kOk ? st.out_size : kFailedProgress);
}

// Takes blocks from the counter, in order, until none are left. A block waits only for
// blocks before it, which warps took earlier and are running: the wait always ends.
ZSTD_WARP_TEMPLATE
template <typename Warp>
ZSTD_HD void warp_execute_loop(Warp& w, const ZstdLaunch& L) {
  for (;;) {
    std::uint32_t b = 0;
    if (w.lane() == 0) b = w.fetch_add(L.counter, 1u);
    b = w.shfl(b, 0);
    if (b >= L.block_count) return;
    warp_execute_block(w, L, b);
  }
}

// ---- Checksums: a warp per frame that has one; lanes 0-3 run XXH64's accumulators ------------

ZSTD_WARP_TEMPLATE
template <typename Warp>
ZSTD_HD void warp_checksum(Warp& w, const ZstdLaunch& L, std::uint32_t f) {
  const FrameJob& frame = L.frames[f];
  if (!frame.has_checksum || frame.blocks == 0) return;
  const ZstdChunkJob& chunk = L.chunks[L.blocks[frame.first_block].chunk];
  if (warp_chunk_failed(w, L.status + chunk.status)) return;
  const BlockState& first = L.states[frame.first_block];
  const BlockState& last = L.states[frame.first_block + frame.blocks - 1];
  const std::uint8_t* data = host_or_device_pointer(chunk.output) + first.out_offset;
  const std::uint64_t size = std::uint64_t{last.out_offset} + last.out_size - first.out_offset;
  const unsigned lane = w.lane();
  std::uint64_t acc = 0;
  if (lane < 4) acc = xxh64_lane(data, size / 32, lane);
  std::uint64_t all[4];
  for (unsigned k = 0; k < 4; ++k) {
    const std::uint32_t low = w.shfl(static_cast<std::uint32_t>(acc), k);
    const std::uint32_t high = w.shfl(static_cast<std::uint32_t>(acc >> 32), k);
    all[k] = std::uint64_t{high} << 32 | low;
  }
  if (lane == 0 && static_cast<std::uint32_t>(xxh64_finish(all, data, size)) != frame.checksum) {
    w.fail(L.status + chunk.status, kErrChecksum);
  }
}

}  // namespace zarrkit::gpu::zstd
