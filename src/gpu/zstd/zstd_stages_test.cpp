// The warp-level stages the kernels run (zstd_stages.cuh), on the host with emulated warps
// (zstd_emulated_warp.h: 32 threads each, several warps at once, so the blocks of a frame
// run side by side and wait for each other's bytes), against the host decoder and libzstd:
// the differential set, frames of many blocks, and damaged frames. Output slots are followed
// by guard bytes that must stay untouched; the sanitizer build checks every access.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "gpu/zstd/zstd_batch.h"
#include "gpu/zstd/zstd_emulated_warp.h"
#include "gpu/zstd/zstd_host_decoder.h"
#include "gpu/zstd/zstd_mutations.h"

namespace zarrkit::gpu::zstd {
namespace {

using testing::Bytes;

constexpr std::uint8_t kPoison = 0xA5;
constexpr std::size_t kGuard = 64;

// Chunks in host memory, planned and laid out as the device half lays out a batch.
class HostBatch {
 public:
  HostBatch(const std::vector<Bytes>& inputs, const std::vector<std::uint64_t>& sizes) : inputs_(inputs), sizes_(sizes) {
    const std::size_t n = inputs.size();
    errors_.assign(n, kOk);
    std::vector<std::uint64_t> in, out;
    for (std::size_t i = 0; i < n; ++i) {
      outputs_.push_back(std::make_unique<std::uint8_t[]>(sizes[i] + 2 * kGuard));
      std::memset(outputs_.back().get(), kPoison, sizes[i] + 2 * kGuard);
      ZstdPlannedChunk p;
      if (!plan_zstd_chunk(inputs_[i].data(), inputs_[i].size(), sizes[i], p, &errors_[i])) continue;
      p.status = static_cast<std::uint32_t>(i);
      planned_.push_back(std::move(p));
      in.push_back(reinterpret_cast<std::uint64_t>(inputs_[i].data()));
      out.push_back(reinterpret_cast<std::uint64_t>(outputs_[i].get() + kGuard));
    }
    std::vector<const ZstdPlannedChunk*> chunks;
    for (const auto& p : planned_) chunks.push_back(&p);
    scratch_.resize(zstd_scratch_bytes(chunks) / 8 + 1);
    const auto scratch = reinterpret_cast<std::uint64_t>(scratch_.data());
    EXPECT_TRUE(build_zstd_tables(chunks, in, out, scratch, tables_));
    status_.assign(n, kOk);
    launch_ = zstd_launch(tables_, tables_.chunks.data(), tables_.frames.data(), tables_.blocks.data(), scratch,
                          status_.data());
  }

  void run(unsigned warps) { testing::run_stages_emulated(launch_, warps); }

  std::int32_t status(std::size_t i) const { return errors_[i] != kOk ? errors_[i] : status_[i]; }
  Bytes output(std::size_t i) const { return Bytes(outputs_[i].get() + kGuard, outputs_[i].get() + kGuard + sizes_[i]); }
  bool guards_intact(std::size_t i) const {
    const std::uint8_t* o = outputs_[i].get();
    for (std::size_t k = 0; k < kGuard; ++k) {
      if (o[k] != kPoison || o[kGuard + sizes_[i] + k] != kPoison) return false;
    }
    return true;
  }

 private:
  std::vector<Bytes> inputs_;
  std::vector<std::uint64_t> sizes_;
  std::vector<std::unique_ptr<std::uint8_t[]>> outputs_;
  std::vector<std::int32_t> errors_, status_;
  std::vector<ZstdPlannedChunk> planned_;
  std::vector<std::uint64_t> scratch_;
  ZstdTables tables_;
  ZstdLaunch launch_;
};

// Runs the chunks through the emulated stages and checks each against the host decoder:
// the same verdict, the same bytes; `expected` (where not null): the right bytes.
void expect_stages_equal_host(const std::vector<Bytes>& inputs, const std::vector<std::uint64_t>& sizes,
                              const std::vector<std::string>& names, const std::vector<const Bytes*>& expected,
                              unsigned warps) {
  HostBatch batch(inputs, sizes);
  batch.run(warps);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Bytes host(sizes[i]);
    const HostDecodeResult h = decode_on_host(inputs[i].data(), inputs[i].size(), host.data(), sizes[i]);
    const bool host_ok = h.error == kOk && h.size == sizes[i];
    const std::int32_t s = batch.status(i);
    const std::string what = names[i] + ": stages say " + error_name(s) + ", the host decoder " +
                             (host_ok ? "ok" : error_name(h.error));
    ASSERT_TRUE(batch.guards_intact(i)) << what << ": a stage wrote outside the output";
    ASSERT_EQ(s == kOk, host_ok) << what;
    if (!host_ok) continue;
    const Bytes got = batch.output(i);
    ASSERT_TRUE(got == host) << what << ": the bytes differ from the host decoder's";
    if (i < expected.size() && expected[i] != nullptr) {
      ASSERT_TRUE(got == *expected[i]) << what << ": wrong bytes";
    }
  }
}

// Emulated warps switch lanes at every collective: the sets are smaller than the host
// decoder's.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kLargestFrame = 150000;  // the sanitizers' build is ten times slower
constexpr int kDamaged = 300;
#else
constexpr std::size_t kLargestFrame = 400000;
constexpr int kDamaged = 1000;
#endif

// The sequences stage's lanes per thread block: as many as the shared memory holds, up to
// the most; an H100's 227 KiB per thread block holds more than 64 (more than 2 warps).
TEST(ZstdBatch, AsManySequenceLanesAsTheSharedMemoryHolds) {
  constexpr std::uint64_t lane = sizeof(SequenceLaneMemory);
  EXPECT_EQ(zstd_sequence_block_lanes(0), 0u);
  EXPECT_EQ(zstd_sequence_block_lanes(lane - 1), 0u);
  EXPECT_EQ(zstd_sequence_block_lanes(lane * 3 + lane / 2), 3u);
  EXPECT_EQ(zstd_sequence_block_lanes(lane * (kMaxSequenceBlockLanes + 7)), kMaxSequenceBlockLanes);
  EXPECT_GT(zstd_sequence_block_lanes(227 * 1024), 64u);
}

// The fewest passes the device's lanes allow, then the fewest lanes per thread block for them,
// spread over every thread block that fits at once; enough lanes for every block.
TEST(ZstdBatch, SequenceStageShapeTakesTheFewestPassesAndSpreadsTheLanes) {
  auto lanes = [](SequenceStageShape s) { return std::uint64_t{s.lanes_per_block} * s.thread_blocks; };
  EXPECT_EQ(zstd_sequence_shape(0, 83, 132).thread_blocks, 0u);
  EXPECT_EQ(zstd_sequence_shape(5, 0, 132).thread_blocks, 0u);
  const SequenceStageShape few = zstd_sequence_shape(10, 83, 132);
  EXPECT_EQ(few.thread_blocks, 10u);
  EXPECT_EQ(few.lanes_per_block, 1u);
  const SequenceStageShape one_pass = zstd_sequence_shape(8192, 83, 132);  // 512 KiB chunks on an H200
  EXPECT_EQ(one_pass.thread_blocks, 132u);
  EXPECT_EQ(one_pass.lanes_per_block, 63u);
  const SequenceStageShape two_passes = zstd_sequence_shape(16384, 83, 132);  // 64 KiB chunks
  EXPECT_EQ(two_passes.thread_blocks, 132u);
  EXPECT_EQ(two_passes.lanes_per_block, 63u);
  EXPECT_GE(lanes(two_passes) * 2, 16384u);
  EXPECT_EQ(zstd_sequence_shape(10956, 83, 132).lanes_per_block, 83u);  // exactly full
  for (std::uint64_t blocks : {1u, 31u, 1000u, 10957u, 50000u, 123457u}) {
    const SequenceStageShape s = zstd_sequence_shape(blocks, 83, 132);
    const std::uint64_t passes = (blocks + 83 * 132 - 1) / (83 * 132);
    EXPECT_LE(s.lanes_per_block, 83u) << blocks;
    EXPECT_LE(s.thread_blocks, 132u) << blocks;
    EXPECT_GE(lanes(s) * passes, blocks) << blocks;
    EXPECT_EQ(s.shared_lanes, s.lanes_per_block) << blocks;
  }
}

// With lanes in global memory: one pass while thread blocks of kMaxSequenceBlockLanes lanes
// hold every block, whole warps of lanes in shared memory, the rest in global memory; as
// before where shared memory takes every block in one pass.
TEST(ZstdBatch, SequenceStageShapeSpillsLanesToGlobalMemoryForOnePass) {
  const SequenceStageShape fits = zstd_sequence_shape(8192, 83, 132, true);
  EXPECT_EQ(fits.lanes_per_block, 63u);
  EXPECT_EQ(fits.shared_lanes, 63u);
  const SequenceStageShape spills = zstd_sequence_shape(16384, 83, 132, true);  // 64 KiB chunks
  EXPECT_EQ(spills.thread_blocks, 132u);
  EXPECT_EQ(spills.lanes_per_block, 125u);
  EXPECT_EQ(spills.shared_lanes, 64u);
  EXPECT_GE(std::uint64_t{spills.lanes_per_block} * spills.thread_blocks, 16384u);
  EXPECT_EQ(zstd_sequence_shape(10957, 83, 132, true).shared_lanes, 64u);
  EXPECT_EQ(zstd_sequence_shape(10957, 83, 132, true).lanes_per_block, 84u);
  for (std::uint64_t blocks : {10957u, 20000u, 33792u, 33793u, 123457u}) {
    const SequenceStageShape s = zstd_sequence_shape(blocks, 83, 132, true);
    const std::uint64_t passes = (blocks + kMaxSequenceBlockLanes * 132 - 1) / (kMaxSequenceBlockLanes * 132);
    EXPECT_LE(s.lanes_per_block, kMaxSequenceBlockLanes) << blocks;
    EXPECT_EQ(s.shared_lanes % 32, 0u) << blocks;
    EXPECT_LT(s.shared_lanes, s.lanes_per_block) << blocks;
    EXPECT_GE(std::uint64_t{s.lanes_per_block} * s.thread_blocks * passes, blocks) << blocks;
  }
  // Fewer than a warp's lanes fit shared memory: no warp of them, the passes as before.
  EXPECT_EQ(zstd_sequence_shape(5000, 20, 132, true).shared_lanes, zstd_sequence_shape(5000, 20, 132).lanes_per_block);
}

// The block states and the counter lie after the chunks' areas, inside the scratch.
TEST(ZstdBatch, TheStatesAndTheCounterInsideTheScratch) {
  const std::vector<testing::Frame> frames = testing::standard_frames(true);
  std::vector<ZstdPlannedChunk> planned(2);
  std::vector<const ZstdPlannedChunk*> chunks;
  std::vector<std::uint64_t> addresses;
  std::uint64_t blocks = 0;
  for (const auto& f : frames) {
    if (chunks.size() == planned.size()) break;
    ZstdPlannedChunk& p = planned[chunks.size()];
    if (!plan_zstd_chunk(f.bytes.data(), f.bytes.size(), f.original.size(), p)) continue;
    blocks += p.blocks.size();
    chunks.push_back(&p);
    addresses.push_back(0);
  }
  ASSERT_EQ(chunks.size(), 2u);
  ZstdTables t;
  ASSERT_TRUE(build_zstd_tables(chunks, addresses, addresses, 0, t));
  EXPECT_GT(t.at_states, 0u);
  EXPECT_GE(t.at_counter, t.at_states + blocks * sizeof(BlockState));
  EXPECT_EQ(t.at_states % alignof(BlockState), 0u);
  EXPECT_LE(t.at_counter + sizeof(std::uint32_t), zstd_scratch_bytes(chunks));
}

TEST(ZstdWarpStages, DifferentialSetEqualsTheHostDecoder) {
  std::vector<Bytes> inputs;
  std::vector<std::uint64_t> sizes;
  std::vector<std::string> names;
  std::vector<const Bytes*> expected;
  const std::vector<testing::Frame> frames = testing::standard_frames(true);
  for (const auto& f : frames) {
    if (f.original.size() > kLargestFrame) continue;
    inputs.push_back(f.bytes);
    sizes.push_back(f.original.size());
    names.push_back(f.name);
    expected.push_back(&f.original);
    if (inputs.size() % 4 == 0) {  // some with one byte more of output: refused
      inputs.push_back(f.bytes);
      sizes.push_back(f.original.size() + 1);
      names.push_back(f.name + ", output one byte larger");
      expected.push_back(nullptr);
    }
  }
  ASSERT_GT(inputs.size(), 30u);
  expect_stages_equal_host(inputs, sizes, names, expected, 3);
}

// Frames of many small blocks whose matches reach back across blocks: with several warps,
// blocks run at once and wait for the bytes of the blocks before them.
TEST(ZstdWarpStages, BlocksOfAFrameWaitForEachOther) {
  std::vector<Bytes> inputs, originals;
  std::vector<std::string> names;
  for (int k = 0; k < 4; ++k) {
    testing::Settings s;
    s.level = k + 1;
    s.window_log = 17;
    s.single_block_flush = k % 2 == 0;  // blocks of about 1000 bytes
    s.checksum = k == 1;
    originals.push_back(k == 3 ? testing::repeated(kLargestFrame / 2, kLargestFrame / 7 + 1, 3) : testing::text(kLargestFrame / 2, 40 + k));
    inputs.push_back(testing::compress(originals.back(), s));
    names.push_back("frame of many blocks " + std::to_string(k));
  }
  std::vector<std::uint64_t> sizes;
  std::vector<const Bytes*> expected;
  for (const auto& o : originals) {
    sizes.push_back(o.size());
    expected.push_back(&o);
  }
  for (unsigned warps : {2u, 5u}) expect_stages_equal_host(inputs, sizes, names, expected, warps);
}

TEST(ZstdWarpStages, DamagedFramesFailAloneAndNeverDecodeWrong) {
  std::vector<testing::Frame> frames;
  for (auto& f : testing::standard_frames(true)) {
    if (f.original.size() <= kLargestFrame / 2) frames.push_back(std::move(f));
  }
  std::vector<testing::HeaderSpots> spots;
  for (const auto& f : frames) spots.push_back(testing::header_spots(f.bytes));
  std::mt19937 rng(99);
  std::vector<Bytes> inputs;
  std::vector<std::uint64_t> sizes;
  std::vector<std::string> names;
  std::vector<const Bytes*> expected;
  for (int i = 0; i < kDamaged; ++i) {
    const std::size_t k = static_cast<std::size_t>(i) % frames.size();
    inputs.push_back(testing::mutate(frames[k].bytes, frames[rng() % frames.size()].bytes, spots[k], rng));
    sizes.push_back(frames[k].original.size());
    names.push_back(frames[k].name + ", mutation " + std::to_string(i));
    expected.push_back(nullptr);
  }
  for (std::size_t k = 0; k < frames.size(); k += 3) {  // undamaged ones among them
    inputs.push_back(frames[k].bytes);
    sizes.push_back(frames[k].original.size());
    names.push_back(frames[k].name + ", undamaged");
    expected.push_back(&frames[k].original);
  }
  expect_stages_equal_host(inputs, sizes, names, expected, 3);
}

}  // namespace
}  // namespace zarrkit::gpu::zstd
