// Which stream-decode kernel a batch runs (kernels.h, DecodeVariant), chosen on the host
// from the batch's shape and the device.
//
// One warp decodes one stream, so what matters is how many streams a batch has and how long
// they are. Blosc's splits (byte planes of shuffled blocks: 16 KiB each in 64 KiB chunks,
// 128 KiB in chunks of 1 MiB and more, thousands per batch) keep the warp-direct kernel
// (S7: 156 GB/s on 64 KiB chunks, 100 GB/s on 1 and 16 MiB), whose 64 warps per SM suit
// their long literal runs and long matches. LZ4 blocks (numcodecs.lz4, raw LZ4) of tens of
// KiB and more take a window kernel when the batch's streams all fit on the SMs at once: a
// lone warp through shared memory decodes several times faster than one reading global
// memory (latency-bound), and the window size trades the speed of each warp (a smaller
// window sends more matches to global memory) against how many warps share an SM: the
// largest window that still holds every stream. With more streams than that (thousands of
// 64 or 256 KiB blocks) the SMs are busy issuing instructions either way, and the direct
// kernel, with fewer instructions per sequence and 64 warps per SM, keeps them.
// The thresholds are the predictions of bench/results/GPU.md, to be set from S7's
// variant table (zarrkit_s7_bench --variants all).
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/kernels.h"

namespace zarrkit::gpu {

struct StreamBatchShape {
  std::uint64_t streams = 0;      // every stream job (copies, BloscLZ, LZ4)
  std::uint64_t lz4_streams = 0;  // LZ4 streams
  std::uint64_t lz4_bytes = 0;    // their decoded bytes
  bool blosc = false;             // the streams are blosc splits
};
StreamBatchShape shape_of(const std::vector<StreamJob>& streams, bool blosc);

// LZ4 streams shorter than this on average keep the warp-direct kernel.
constexpr std::uint64_t kWindowMinMeanStreamBytes = 32u << 10;

DecodeVariant choose_decode_variant(const StreamBatchShape& shape, const WindowResidency& residency);

}  // namespace zarrkit::gpu
