// Reading Zarr chunks into device memory: the GPU batch reader behind Array::read_into.
//
// A request is split into batches of chunks (bounded by a decoded-bytes budget). For each
// batch, the shared thread pool reads the chunk values straight into a pinned staging
// arena and runs any CPU-only codecs; the host then parses the headers into job tables,
// and the whole batch goes to the device in one copy and is decoded by a few kernel
// launches (checksums, streams, unshuffles, then the scatter into the output). Several
// batches are in flight: the CPU prepares one while the GPU works on the others.
#pragma once

#include <atomic>
#include <cstdint>

#include "zarrkit/array.h"

namespace zarrkit::gpu {

// Reads `selection` of `array` into `out` (device memory, any strides, the array's dtype).
void read_into_device(const Array& array, const Selection& selection, const NDView& out);

// Counters over the life of the process (for tests and benchmarks).
struct ReadStats {
  std::atomic<std::uint64_t> chunks_decoded_on_gpu{0};
  std::atomic<std::uint64_t> chunks_decoded_on_cpu{0};  // CPU-only codecs or headers
  std::atomic<std::uint64_t> chunks_missing{0};
  // Chunks the GPU rejected but the CPU then decoded (should stay 0: a GPU decoder that
  // refuses valid data is a bug; the read still returns the right values).
  std::atomic<std::uint64_t> gpu_rejections_recovered{0};
  std::atomic<std::uint64_t> batches{0};
  // Writes from device memory: chunks encoded on the GPU, and requests that went to the CPU.
  std::atomic<std::uint64_t> chunks_encoded_on_gpu{0};
  std::atomic<std::uint64_t> device_writes_on_cpu{0};
  // Where a read's time goes: the host phase (store reads, CPU codecs, headers, tables)
  // and the waits for the GPU after it (time the host phase did not hide).
  std::atomic<std::uint64_t> host_phase_ns{0};
  std::atomic<std::uint64_t> gpu_wait_ns{0};
};
ReadStats& read_stats();

// Tuning: the decoded bytes one batch may hold (default 256 MiB), and how many batches may
// be in flight at once (default 4: the host prepares one while the GPU works on the others;
// a batch of blosc chunks rarely has enough streams to fill a GPU by itself).
void set_batch_budget(std::uint64_t bytes);
std::uint64_t batch_budget();
void set_pipeline_depth(std::size_t batches);

}  // namespace zarrkit::gpu
