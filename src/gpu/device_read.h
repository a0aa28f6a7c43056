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

namespace zarrkit {
struct DeviceDecodeBatch;
}

namespace zarrkit::gpu {

// Reads `selection` of `array` into `out` (device memory, any strides, the array's dtype).
void read_into_device(const Array& array, const Selection& selection, const NDView& out);
// zarrkit::warm_up_gpu: what reading `selection` of `array` needs, made ahead.
void warm_up_reads(const Array& array, const Selection& selection);
// The device part of zarrkit::decode_chunks (batch_decode.h): requests into device memory.
void decode_batch_on_device(const DeviceDecodeBatch& batch);

// Counters over the life of the process (for tests and benchmarks).
struct ReadStats {
  std::atomic<std::uint64_t> chunks_decoded_on_gpu{0};
  std::atomic<std::uint64_t> chunks_decoded_on_cpu{0};  // CPU-only codecs or headers
  std::atomic<std::uint64_t> chunks_missing{0};
  // Chunks (or inner chunks) taken from the device's decoded-chunk cache: neither fetched
  // nor decoded (Config::cache.device_bytes).
  std::atomic<std::uint64_t> chunks_from_cache{0};
  std::atomic<std::uint64_t> chunks_decoded_by_nvcomp{0};  // part of chunks_decoded_on_gpu
  std::atomic<std::uint64_t> chunks_decoded_by_zstd_kernels{0};  // part of chunks_decoded_on_gpu
  std::atomic<std::uint64_t> chunks_decoded_by_deflate_kernels{0};  // part of chunks_decoded_on_gpu
  // Chunks a GdsStore read straight into device memory (part of chunks_decoded_on_gpu).
  std::atomic<std::uint64_t> chunks_read_direct{0};
  // Chunks the GPU rejected but the CPU then decoded (should stay 0: a GPU decoder that
  // refuses valid data is a bug; the read still returns the right values).
  std::atomic<std::uint64_t> gpu_rejections_recovered{0};
  std::atomic<std::uint64_t> batches{0};
  // Bytes copied to the device: from the pinned staging (one copy per batch), and from
  // ordinary memory (what overflowed the staging; slower, and should stay near 0).
  std::atomic<std::uint64_t> bytes_uploaded_pinned{0};
  std::atomic<std::uint64_t> bytes_uploaded_pageable{0};
  // Writes from device memory: chunks encoded on the GPU, and requests that went to the CPU.
  std::atomic<std::uint64_t> chunks_encoded_on_gpu{0};
  // Chunks written in part from device memory: old values read, merged and re-encoded there.
  std::atomic<std::uint64_t> chunks_merged_on_gpu{0};
  std::atomic<std::uint64_t> device_writes_on_cpu{0};
  std::atomic<std::uint64_t> device_reads_on_cpu{0};  // whole reads decoded on the host, then uploaded
  // Where a read's time goes: the host phase (store reads, CPU codecs, headers, tables)
  // and the waits for the GPU after it (time the host phase did not hide).
  std::atomic<std::uint64_t> host_phase_ns{0};
  std::atomic<std::uint64_t> gpu_wait_ns{0};
  // Where a device write's time goes: waiting for the GPU's encoded batches (and their copy
  // back), and storing the values.
  std::atomic<std::uint64_t> write_gpu_wait_ns{0};
  std::atomic<std::uint64_t> write_store_ns{0};
};
ReadStats& read_stats();

// Tuning (the batch budget, the batches in flight, nvCOMP, GDS direct reads) comes from
// Config::gpu of the settings in force when a read starts (gpu/device_settings.h).

// Chunks that are one LZ4 block (numcodecs.lz4, raw LZ4) of more than kLongLz4BlockBytes
// decode on the host's threads, in the host phase, not on the GPU, where one warp decodes
// one block at ~20 MB/s. Measured on an H100 (S7, family N, 1 GiB per batch, one launch):
// the direct kernel decodes 1024 blocks of 1 MiB at 17.2 GB/s, 256 of 4 MiB at 4.9 and 64
// of 16 MiB at 1.3, where 16 host threads decode 24.1, 20.8 and 18.8 GB/s (nvCOMP: 24.5,
// 6.6, 1.7); the GPU would need 928 blocks of 16 MiB in one batch to catch up, and a batch
// holds 256 MiB. At 256 KiB the GPU wins (4096 blocks: 57.1 GB/s against 21.0).
constexpr std::uint64_t kLongLz4BlockBytes = 512u << 10;

// Arrays on a GdsStore whose chunks are stored as laid out (no codecs but bytes and
// transposes; not sharded) have the store read their chunks straight into device memory
// (cuFile, or its pinned staging with overlapped copies) instead of into the pinned arena.
// On by default; off with Config::gpu.gds_direct = false or ZARRKIT_GDS_DIRECT=0 (to compare).

// nvCOMP for zstd and gzip chunks (loaded at run time, gpu/nvcomp_runtime.h; the device
// halves of gpu/codecs/nvcomp_device.cpp): off by default, on with Config::gpu.nvcomp_decode
// or ZARRKIT_NVCOMP_DECODE=1 in the environment. Only for chunks of at most
// kNvcompMaxChunkBytes, in batches of at least Config::gpu.nvcomp_min_chunks (512) of them:
// its batched decoders need many chunks (S7 on an H100: 33-68 GB/s on 1024-16384 chunks of
// 64 KiB..1 MiB against 7-8 GB/s on 16 host threads, 2.7 GB/s on 64 chunks of 16 MiB; no
// gain on S10's batches of 128 chunks of 800 KiB). Opt-in because nvCOMP documents
// undefined behaviour, out-of-bounds accesses included, on corrupt input: a chunk it
// reports as failed is decoded again on the CPU (the CPU's error or values), but damage it
// does not report is not caught. For data one trusts.
constexpr std::uint64_t kNvcompMaxChunkBytes = 2u << 20;

}  // namespace zarrkit::gpu
