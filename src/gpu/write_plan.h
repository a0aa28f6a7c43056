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
#include "zarrkit/buffer.h"
#include "zarrkit/metadata.h"

namespace zarrkit::gpu {

struct BloscWriteSettings {
  unsigned typesize = 1;                      // as the header records it (1..255)
  BlockShuffle shuffle = BlockShuffle::kCopy;  // kCopy: no shuffle
  std::uint32_t blocksize = 0;                 // 0: chosen here
  bool compress = true;                        // clevel 0 stores every split raw
};

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
// One chunk's frame: payloads[k] is split k as stored, compressed (fewer bytes than the
// split) or raw (exactly the split's bytes).
Buffer blosc_frame(const BloscWriteLayout& layout, const std::vector<ByteView>& payloads);

struct WritePlan {
  bool on_gpu = false;
  std::uint32_t swap_unit = 1;
  std::vector<std::int64_t> stored_strides;  // byte stride of each array axis in the stored chunk
  std::uint64_t chunk_bytes = 0;
  enum class Compressor { kNone, kLz4, kBlosc } compressor = Compressor::kNone;
  BloscWriteSettings blosc;
  BloscWriteLayout layout;
  std::vector<bool> checksums;  // crc32c codecs after the compressor; true: checksum first
};
WritePlan plan_write(const ArrayMetadata& metadata);

// Appends (or prepends) CRC-32C checksums as the plan's crc32c codecs do.
Buffer add_checksums(const WritePlan& plan, Buffer bytes);

}  // namespace zarrkit::gpu
