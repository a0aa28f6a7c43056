// A batch of zstd chunks for the decoder's stages (zstd_stages.cuh): the chunks planned by
// the walk on the host, and the tables and scratch layout of one launch over all of them.
// Plain host code (no CUDA): the device half lays out its launches with it, and the host
// tests run the same stages over host memory.
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/zstd/zstd_common.cuh"

namespace zarrkit::gpu {

// The sequences stage decodes each compressed block with one lane, which builds the block's
// tables in its own zstd::SequenceLaneMemory in shared memory: a thread block has as many
// lanes as `shared_bytes` (what one thread block may have) holds, up to kMaxSequenceBlockLanes.
constexpr std::uint32_t kMaxSequenceBlockLanes = 256;
std::uint32_t zstd_sequence_block_lanes(std::uint64_t shared_bytes);

// The launch of the sequences stage over `blocks` blocks, where `at_once` thread blocks with
// at most `most_lanes` lanes in shared memory fit the device at once. When those lanes take
// every block in one pass (a pass: each lane decodes one block): the fewest lanes per thread
// block, so that every multiprocessor has some and keeps more of its memory as L1 cache
// (which holds the lanes' bit streams). Otherwise, with `global_lanes`, one pass still (up to
// kMaxSequenceBlockLanes lanes per thread block): whole warps of lanes whose memory is in
// shared memory, the others' in global memory; without, as few passes as shared memory allows.
struct SequenceStageShape {
  std::uint32_t lanes_per_block = 0;
  std::uint32_t thread_blocks = 0;
  std::uint32_t shared_lanes = 0;  // per thread block, its first lanes: memory in shared memory
};
SequenceStageShape zstd_sequence_shape(std::uint64_t blocks, std::uint32_t most_lanes, std::uint32_t at_once,
                                       bool global_lanes = false);

// One chunk of a batch, as the stages see it (addresses in the memory they run on).
struct ZstdChunkJob {
  std::uint64_t input;      // the chunk's zstd bytes
  std::uint64_t output;     // its decoded bytes (exactly output_size of them)
  std::uint64_t literals;   // its literal area (the walk's totals.literals bytes)
  std::uint64_t sequences;  // its sequence area (totals.sequences entries)
  std::uint32_t input_size;
  std::uint32_t output_size;
  std::uint32_t status;       // its entry of the batch's status table
  std::uint32_t frames;       // its frames: [first_frame, first_frame + frames) of the frame table
  std::uint32_t first_frame;
  std::uint32_t pad;
};

// The tables and scratch of one launch. Blocks and frames of all chunks are in one table
// each, in chunk order; BlockJob::chunk indexes the chunk table, BlockJob::frame and
// FrameJob::first_block the batch's tables.
struct ZstdLaunch {
  const ZstdChunkJob* chunks = nullptr;
  const zstd::FrameJob* frames = nullptr;
  const zstd::BlockJob* blocks = nullptr;
  zstd::BlockState* states = nullptr;  // one per block, zeroed before the stages
  std::uint32_t* counter = nullptr;    // the execution stage's next block, zeroed before
  std::int32_t* status = nullptr;
  std::uint32_t chunk_count = 0;
  std::uint32_t frame_count = 0;
  std::uint32_t block_count = 0;
};

// A chunk the walk accepted: its tables (chunk-relative) and sizes.
struct ZstdPlannedChunk {
  std::uint32_t status = 0;  // its status entry
  std::uint32_t input_size = 0;
  std::uint32_t output_size = 0;
  std::vector<zstd::FrameJob> frames;
  std::vector<zstd::BlockJob> blocks;
  zstd::WalkTotals totals;
};

// Walks `bytes`, which must decode to exactly `output_size` bytes. False (and *error) when
// the walk refuses it or when it is not for the stages: 4 GiB or more, or sequences whose
// area would pass kZstdSequenceAreaFactor times its output (a resource bound: the sequence
// area is sized from counts in the data, each at most a third of the output).
bool plan_zstd_chunk(const std::uint8_t* bytes, std::uint64_t size, std::uint64_t output_size,
                     ZstdPlannedChunk& out, std::int32_t* error = nullptr);
constexpr std::uint64_t kZstdSequenceAreaFactor = 2;

// The scratch a launch over `chunks` needs: their literal and sequence areas, the block
// states and the counter.
std::uint64_t zstd_scratch_bytes(const std::vector<const ZstdPlannedChunk*>& chunks);

// The tables of planned chunks (in chunk order, to upload), with absolute addresses:
// `inputs[i]`, `outputs[i]` are those of chunk i's bytes and decoded slot, `scratch` that
// of zstd_scratch_bytes() of memory, which holds the literal and sequence areas, the block
// states (at_states) and the counter (at_counter).
struct ZstdTables {
  std::vector<ZstdChunkJob> chunks;
  std::vector<zstd::FrameJob> frames;
  std::vector<zstd::BlockJob> blocks;
  std::uint64_t at_states = 0, at_counter = 0;
};
// False when the batch has more blocks or frames than 32-bit indices take.
bool build_zstd_tables(const std::vector<const ZstdPlannedChunk*>& chunks, const std::vector<std::uint64_t>& inputs,
                       const std::vector<std::uint64_t>& outputs, std::uint64_t scratch, ZstdTables& tables);
// The launch of `tables`, held at `chunks`, `frames` and `blocks`.
ZstdLaunch zstd_launch(const ZstdTables& tables, const ZstdChunkJob* chunks, const zstd::FrameJob* frames,
                       const zstd::BlockJob* blocks, std::uint64_t scratch, std::int32_t* status);

}  // namespace zarrkit::gpu
