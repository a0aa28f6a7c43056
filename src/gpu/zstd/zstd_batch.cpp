#include "gpu/zstd/zstd_batch.h"

#include <algorithm>
#include <limits>

#include "gpu/zstd/zstd_host_decoder.h"
#include "gpu/zstd/zstd_sequences.cuh"

namespace zarrkit::gpu {
namespace {

constexpr std::uint64_t kMax32 = std::numeric_limits<std::uint32_t>::max();

std::uint64_t align(std::uint64_t v) { return (v + 255) / 256 * 256; }

// The scratch of one chunk: its literal area, then its sequence area.
struct ChunkScratch {
  std::uint64_t literals, sequences, end;
};

ChunkScratch chunk_scratch(const ZstdPlannedChunk& c, std::uint64_t at) {
  ChunkScratch s;
  s.literals = at;
  s.sequences = align(s.literals + c.totals.literals);
  s.end = align(s.sequences + c.totals.sequences * sizeof(zstd::Sequence));
  return s;
}

std::uint64_t states_offset(const std::vector<const ZstdPlannedChunk*>& chunks) {
  std::uint64_t at = 0;
  for (const ZstdPlannedChunk* c : chunks) at = chunk_scratch(*c, at).end;
  return at;
}

}  // namespace

bool plan_zstd_chunk(const std::uint8_t* bytes, std::uint64_t size, std::uint64_t output_size,
                     ZstdPlannedChunk& out, std::int32_t* error) {
  std::int32_t e = zstd::kOk;
  if (size > kMax32 || output_size > kMax32) {
    e = zstd::kErrTooLarge;
  } else {
    zstd::ChunkWalk w = zstd::walk(bytes, size, output_size);
    e = w.error;
    if (e == zstd::kOk &&
        w.totals.sequences * sizeof(zstd::Sequence) > kZstdSequenceAreaFactor * output_size + (1u << 20)) {
      e = zstd::kErrTooLarge;
    }
    if (e == zstd::kOk) {
      out.input_size = static_cast<std::uint32_t>(size);
      out.output_size = static_cast<std::uint32_t>(output_size);
      out.frames = std::move(w.frames);
      out.blocks = std::move(w.blocks);
      out.totals = w.totals;
    }
  }
  if (error != nullptr) *error = e;
  return e == zstd::kOk;
}

std::uint32_t zstd_sequence_block_lanes(std::uint64_t shared_bytes) {
  const std::uint64_t lanes = shared_bytes / sizeof(zstd::SequenceLaneMemory);
  return static_cast<std::uint32_t>(lanes < kMaxSequenceBlockLanes ? lanes : kMaxSequenceBlockLanes);
}

SequenceStageShape zstd_sequence_shape(std::uint64_t blocks, std::uint32_t most_lanes, std::uint32_t at_once,
                                       bool global_lanes) {
  SequenceStageShape s;
  if (blocks == 0 || most_lanes == 0 || at_once == 0) return s;
  const std::uint64_t shared_capacity = std::uint64_t{most_lanes} * at_once;
  // The lanes in shared memory are whole warps, so that no warp runs both kinds.
  const std::uint32_t whole_warps = most_lanes / 32 * 32;
  const bool spill = global_lanes && blocks > shared_capacity && whole_warps > 0;
  const std::uint64_t capacity = spill ? std::uint64_t{kMaxSequenceBlockLanes} * at_once : shared_capacity;
  const std::uint64_t passes = (blocks + capacity - 1) / capacity;
  const std::uint64_t lanes_per_pass = (blocks + passes - 1) / passes;
  const std::uint64_t thread_blocks = std::min<std::uint64_t>(at_once, lanes_per_pass);
  s.lanes_per_block = static_cast<std::uint32_t>((lanes_per_pass + thread_blocks - 1) / thread_blocks);
  s.thread_blocks = static_cast<std::uint32_t>(thread_blocks);
  s.shared_lanes = spill ? whole_warps : s.lanes_per_block;
  return s;
}

std::uint64_t zstd_scratch_bytes(const std::vector<const ZstdPlannedChunk*>& chunks) {
  std::uint64_t blocks = 0;
  for (const ZstdPlannedChunk* c : chunks) blocks += c->blocks.size();
  const std::uint64_t counter = align(states_offset(chunks) + blocks * sizeof(zstd::BlockState));
  return counter + sizeof(std::uint32_t);
}

bool build_zstd_tables(const std::vector<const ZstdPlannedChunk*>& chunks, const std::vector<std::uint64_t>& inputs,
                       const std::vector<std::uint64_t>& outputs, std::uint64_t scratch, ZstdTables& t) {
  t.chunks.clear();
  t.frames.clear();
  t.blocks.clear();
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const ZstdPlannedChunk& c = *chunks[i];
    const ChunkScratch s = chunk_scratch(c, at);
    at = s.end;
    if (t.blocks.size() + c.blocks.size() >= kMax32 || t.frames.size() + c.frames.size() >= kMax32) return false;
    ZstdChunkJob job{};
    job.input = inputs[i];
    job.output = outputs[i];
    job.literals = scratch + s.literals;
    job.sequences = scratch + s.sequences;
    job.input_size = c.input_size;
    job.output_size = c.output_size;
    job.status = c.status;
    job.first_frame = static_cast<std::uint32_t>(t.frames.size());
    job.frames = static_cast<std::uint32_t>(c.frames.size());
    const auto first_block = static_cast<std::uint32_t>(t.blocks.size());
    for (zstd::FrameJob f : c.frames) {
      f.first_block += first_block;
      t.frames.push_back(f);
    }
    for (zstd::BlockJob b : c.blocks) {
      b.chunk = static_cast<std::uint32_t>(i);
      b.frame += job.first_frame;
      t.blocks.push_back(b);
    }
    t.chunks.push_back(job);
  }
  t.at_states = at;
  t.at_counter = align(at + t.blocks.size() * sizeof(zstd::BlockState));
  return true;
}

ZstdLaunch zstd_launch(const ZstdTables& t, const ZstdChunkJob* chunks, const zstd::FrameJob* frames,
                       const zstd::BlockJob* blocks, std::uint64_t scratch, std::int32_t* status) {
  ZstdLaunch l;
  l.chunks = chunks;
  l.frames = frames;
  l.blocks = blocks;
  l.states = reinterpret_cast<zstd::BlockState*>(scratch + t.at_states);
  l.counter = reinterpret_cast<std::uint32_t*>(scratch + t.at_counter);
  l.status = status;
  l.chunk_count = static_cast<std::uint32_t>(t.chunks.size());
  l.frame_count = static_cast<std::uint32_t>(t.frames.size());
  l.block_count = static_cast<std::uint32_t>(t.blocks.size());
  return l;
}

}  // namespace zarrkit::gpu
