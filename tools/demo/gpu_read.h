// Reading the whole array into GPU memory: Zarr through the library's device read (chunks
// decoded on the GPU where their codecs have a GPU decoder, else on the CPU into pinned
// memory), the raw file as cupy.asarray(np.memmap(...)) does it (one copy from the mapping).
#pragma once

#include <cstdint>
#include <string>

#include "demo/formats.h"
#include "demo/measure.h"
#include "demo/sample_field.h"

namespace zarrkit::demo {

// Empty when reads into GPU memory can run here; otherwise why not, in one line (a build
// without the CUDA path, or no usable device).
std::string gpu_read_skip_reason();

struct GpuReadAll {
  Timing timing;
  std::uint64_t chunks = 0;              // chunks one read decodes (0: the raw file)
  std::uint64_t gpu_decoded_chunks = 0;  // of those, decoded on the GPU
};

// Times reading all of `format` into device memory; after every run the values are copied
// back to the host and checked against `field`.
GpuReadAll time_read_all_into_gpu(const Format& format, const SampleField& field, const TimingOptions& options);

}  // namespace zarrkit::demo
