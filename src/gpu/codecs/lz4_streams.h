// The LZ4-family streams of a batch and the blosc blocks to unshuffle after them: the work
// the blosc and numcodecs.lz4 halves share (one warp per stream, kernels.h).
#pragma once

#include <vector>

#include "gpu/batch_support.h"
#include "gpu/device_codec.h"
#include "gpu/kernels.h"

namespace zarrkit::gpu {

class Lz4StreamWork final : public BatchWork {
 public:
  // A stream of chunk `chunk`: job.src counts from the start of `input` (the stage's input
  // bytes, in the input area); job.dst and (to_scratch) its place count from the start of
  // the chunk's slot.
  void add_stream(std::uint32_t chunk, const ChunkBytes& input, StreamJob job);
  // A block to move from the scratch to the slot, unshuffled; job.offset counts from the
  // start of the chunk's slot.
  void add_block(std::uint32_t chunk, BlockJob job);

  // Streams that decode to more than kLongLz4BlockBytes (device_read.h says why) decode on
  // the host: a chunk holding one is better left to the host codec.
  static bool worth_decoding_on_device(const StreamJob& job);

  Phase phase() const override { return kDecompress; }
  bool empty() const override { return streams_.empty(); }
  void clear() override;
  std::unique_ptr<BatchWork> make_empty() const override { return std::make_unique<Lz4StreamWork>(); }
  void absorb(BatchWork& other) override;
  void write_tables(const BatchAddresses& addresses, TableWriter& tables) override;
  void launch(const BatchAddresses& addresses, const std::byte* tables) override;
  void release(cudaStream_t stream) override { scratch_.release(stream); }

 private:
  std::vector<StreamJob> streams_;  // chunk-relative until write_tables makes them absolute
  std::vector<BlockJob> blocks_;
  bool any_to_scratch_ = false;
  std::uint64_t at_streams_ = 0;
  std::uint64_t at_blocks_ = 0;
  DeviceBuffer scratch_;  // shuffled blocks, laid out like the decode area
};

}  // namespace zarrkit::gpu
