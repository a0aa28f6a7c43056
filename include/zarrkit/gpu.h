// The GPU path (built when the CUDA toolkit is found; ZARRKIT_HAVE_CUDA is then defined).
//
// Reads land in device memory when the memory kind in force is MemoryKind::kDevice:
//
//   zarrkit::enable_gpu();                      // global: every Array::read returns device memory
//   { zarrkit::ScopedGpu gpu; auto a = array.read(); ... }   // this thread, this scope
//   array.read_into(selection, device_view);   // a view with kind kDevice, e.g. a CuPy array
//
// A device read fetches the chunks of the whole request from the store (several threads,
// into pinned host memory), copies them to the device and decodes them there in batches,
// one kernel launch per kind of work over all chunks: LZ4 and blosc (lz4, blosclz, byte and
// bit shuffle) decompression, crc32c checks, byte order and transpose, and the scatter into
// the output selection. Sharded arrays are read shard by shard and their inner chunks decoded
// in the same batches. Codecs without a GPU decoder (zstd, gzip, ...) decode on the CPU into
// pinned memory and go on to the device from there, so every array reads.
//
// Without a usable CUDA device, asking for device memory (enable_gpu, ScopedGpu, a device
// allocation) throws UnsupportedError naming the reason; everything else keeps working.
#pragma once

#include <string>

#include "zarrkit/buffer.h"
#include "zarrkit/config.h"
#include "zarrkit/ndbuffer.h"
#include "zarrkit/selection.h"

namespace zarrkit {

class Array;

// True when a CUDA device can be used by this process (checked once, then cached).
bool gpu_available();
// Why not, when gpu_available() is false ("" otherwise).
std::string gpu_unavailable_reason();

// Registers the pinned-host and device allocators (register_allocator), the engine's
// device read and write paths and GdsStore's device reads. Idempotent and cheap; works
// without a device (allocations then fail with UnsupportedError). enable_gpu, ScopedGpu and
// the two allocators below call it.
void install_gpu_support();

// Pinned host memory (cudaHostAlloc) and device memory (cudaMalloc). Throw UnsupportedError
// without a device and ResourceExhaustedError when the memory is not there.
Allocator& pinned_host_allocator();
Allocator& device_allocator();

// The global switch: reads land in device memory from now on (global_config().memory).
// UnsupportedError without a device.
void enable_gpu();
// Back to host memory.
void disable_gpu();

// The scoped switch: device reads on this thread while it lives (a ScopedConfig).
class ScopedGpu {
 public:
  ScopedGpu();
  ScopedGpu(const ScopedGpu&) = delete;
  ScopedGpu& operator=(const ScopedGpu&) = delete;

 private:
  static bool prepare();
  bool prepared_;
  ScopedConfig scoped_;
};

// Makes ahead what reading `selection` of `array` into device memory needs, so that the
// first read costs what later ones do: the CUDA context, pinned staging and streams (kept
// for later reads), device memory (the stream-ordered pool grown once to what the batches
// in flight use), the kernels of the array's codecs loaded. UnsupportedError without a
// device.
void warm_up_gpu(const Array& array, const Selection& selection = {});

// Explicit copies (blocking). Any combination of host, pinned and device memory.
void copy_memory(void* dst, const void* src, std::size_t bytes);
// A host copy of `buffer` (returned as-is when it already is host-accessible).
Buffer to_host(const Buffer& buffer);
NDBuffer to_host(const NDBuffer& array);
// A device copy of host bytes.
Buffer to_device(ByteView bytes);

}  // namespace zarrkit
