// Host-side planning of GPU writes: which chains the device encodes, and the standard
// byte streams it produces from them.
//
// The device encodes chains of the form  transpose* bytes (blosc | numcodecs.lz4)? crc32c*
// (in encode order), with blosc holding LZ4 (its "lz4" or "lz4hc" compressor; both write
// the LZ4 format). Every stream is what c-blosc 1.x, numcodecs and liblz4 read: the same
// formats, not the same bytes (the LZ4 encoder is the device's own, and blosc blocks are
// sized for the GPU), the "compatible compressor" idea. Other chains write on the CPU.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gpu/kernels.h"
#include "gpu/write_steps.h"
#include "gpu/write_frames.cuh"
#include "zarrkit/buffer.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/metadata.h"

namespace zarrkit::gpu {

// The frame layout of one chunk of `nbytes` (the same for every chunk of an array).
struct BloscSplit {
  std::uint64_t offset;  // in the (shuffled) chunk
  std::uint32_t size;
};
struct BloscWriteLayout {
  std::uint8_t flags = 0;
  unsigned typesize = 1;
  std::uint32_t blocksize = 0;
  std::uint64_t nbytes = 0;
  std::vector<std::uint32_t> splits_per_block;
  std::vector<BloscSplit> splits;     // in frame order
  std::vector<BlockJob> shuffles;     // blocks to shuffle first (offsets in the chunk)
};
BloscWriteLayout plan_blosc_write(std::uint64_t nbytes, const BloscWriteSettings& settings);
struct WritePlan {
  bool on_gpu = false;
  std::uint32_t swap_unit = 1;
  std::vector<std::int64_t> stored_strides;  // byte stride of each array axis in the stored chunk
  std::uint64_t chunk_bytes = 0;
  enum class Compressor { kNone, kLz4, kBlosc } compressor = Compressor::kNone;
  BloscWriteSettings blosc;
  BloscWriteLayout layout;
  std::vector<bool> checksums;  // crc32c codecs after the compressor; true: checksum first
  // The frame every chunk gets (write_frames.cuh), its streams and their segments.
  FrameTemplate frame;
  std::vector<WriteStream> streams;
  std::vector<WriteSegment> segments;
};
// The plan for `metadata`'s chain, from the device halves registered in `registry`.
WritePlan plan_write(const ArrayMetadata& metadata, const CodecRegistry& registry = CodecRegistry::builtin());
// Fills plan.frame, plan.streams and plan.segments from the compressor, the blosc layout
// and the checksums (plan_write calls it).
void plan_frames(WritePlan& plan);

// The checksum fields of a stored value: `value` holds plan.frame.reserve_start bytes, the
// frame (frame_bytes long, CRC-32C frame_crc), then plan.frame.reserve_end bytes; each
// crc32c codec of the plan, in order, checksums everything inside it and puts its value
// before (location "start") or after it. Each further checksum follows from the frame's
// CRC by combination, without reading the frame again.
void fill_checksums(const WritePlan& plan, std::uint32_t frame_crc, std::uint64_t frame_bytes, std::byte* value);

// One chunk encoded on the host by the device's own steps (write_frames.cuh, one lane):
// `chunk` in its stored layout and byte order; the stored value, checksums included, or
// nothing when plan.on_gpu is false. The GPU's bytes must equal these.
Buffer encode_chunk_like_the_device(const WritePlan& plan, ByteView chunk);

}  // namespace zarrkit::gpu
