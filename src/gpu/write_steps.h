// What the device halves of codecs contribute to the device encoder (write_plan.h): the
// steps the write kernels know (an LZ4 frame, a blosc frame of LZ4 streams, CRC-32C fields).
#pragma once

#include <cstdint>
#include <optional>

#include "gpu/kernels.h"
#include "zarrkit/codec.h"

namespace zarrkit::gpu {

struct BloscWriteSettings {
  unsigned typesize = 1;                      // as the header records it (1..255)
  BlockShuffle shuffle = BlockShuffle::kCopy;  // kCopy: no shuffle
  std::uint32_t blocksize = 0;                 // 0: chosen here
  bool compress = true;                        // clevel 0 stores every split raw
};

struct WriteStep {
  enum class Kind : std::uint8_t { kLz4, kBlosc, kChecksum };
  Kind kind = Kind::kChecksum;
  BloscWriteSettings blosc;     // kBlosc
  bool checksum_first = false;  // kChecksum: the field precedes the data
};

// Implemented by the device halves of bytes->bytes codecs that the device encoder can write.
class DeviceEncoderStep {
 public:
  virtual ~DeviceEncoderStep() = default;
  // The step for chunks of `spec`, or nullopt when this configuration writes on the host.
  virtual std::optional<WriteStep> write_step(const ChunkSpec& spec) const = 0;
};

}  // namespace zarrkit::gpu
