#include "gpu/codecs/lz4_streams.h"

#include <limits>

#include "gpu/cuda_check.h"
#include "gpu/device_read.h"
#include "zarrkit/error.h"

namespace zarrkit::gpu {

void Lz4StreamWork::add_stream(std::uint32_t chunk, const ChunkBytes& input, StreamJob job) {
  if (input.area != ChunkBytes::Area::kInput) {
    throw InternalError("an LZ4-family stream must be planned from the uploaded bytes");
  }
  job.src += input.offset;
  job.chunk = chunk;
  any_to_scratch_ = any_to_scratch_ || job.to_scratch != 0;
  streams_.push_back(job);
}

void Lz4StreamWork::add_block(std::uint32_t chunk, BlockJob job) {
  job.chunk = chunk;
  blocks_.push_back(job);
}

bool Lz4StreamWork::worth_decoding_on_device(const StreamJob& job) {
  return job.codec == StreamCodec::kCopy || job.dst_size <= kLongLz4BlockBytes;
}

void Lz4StreamWork::clear() {
  streams_.clear();
  blocks_.clear();
  any_to_scratch_ = false;
}

void Lz4StreamWork::absorb(BatchWork& other) {
  auto& o = static_cast<Lz4StreamWork&>(other);
  streams_.insert(streams_.end(), o.streams_.begin(), o.streams_.end());
  blocks_.insert(blocks_.end(), o.blocks_.begin(), o.blocks_.end());
  any_to_scratch_ = any_to_scratch_ || o.any_to_scratch_;
  o.clear();
}

void Lz4StreamWork::write_tables(const BatchAddresses& a, TableWriter& tables) {
  if (streams_.size() > std::numeric_limits<std::uint32_t>::max() ||
      blocks_.size() > std::numeric_limits<std::uint32_t>::max()) {
    fail_resource("a batch needs more LZ4 streams than one launch takes");
  }
  for (StreamJob& s : streams_) {
    s.src += (*a.input_offset)[s.chunk];
    s.dst += (*a.slot_index)[s.chunk] * a.slot_bytes;
  }
  for (BlockJob& b : blocks_) b.offset += (*a.slot_index)[b.chunk] * a.slot_bytes;
  if (any_to_scratch_) scratch_.ensure(a.slots_used * a.slot_bytes, a.stream, "allocating device scratch memory");
  at_streams_ = tables.append(streams_);
  at_blocks_ = tables.append(blocks_);
}

void Lz4StreamWork::launch(const BatchAddresses& a, const std::byte* tables) {
  auto* scratch = reinterpret_cast<std::uint8_t*>(scratch_.ptr);
  check_cuda(launch_decode_streams(reinterpret_cast<const StreamJob*>(tables + at_streams_),
                                   static_cast<std::uint32_t>(streams_.size()), a.input, a.slots, scratch, a.status,
                                   a.stream),
             "launching the decode kernel");
  check_cuda(launch_unshuffle_blocks(reinterpret_cast<const BlockJob*>(tables + at_blocks_),
                                     static_cast<std::uint32_t>(blocks_.size()), scratch, a.slots, a.status, a.stream),
             "launching the unshuffle kernel");
}

}  // namespace zarrkit::gpu
