#include "gpu/deflate/deflate_host_decoder.h"

#include <limits>
#include <memory>

#include "gpu/deflate/deflate_stages.cuh"
#include "gpu/warp/emulated_warp.h"

namespace zarrkit::gpu::deflate {
namespace {

constexpr std::uint64_t kMax32 = std::numeric_limits<std::uint32_t>::max();

}  // namespace

bool plan_deflate_chunk(std::uint64_t input_size, std::uint64_t output_size, std::int32_t* error) {
  const bool ok = input_size <= kMax32 && output_size <= kMax32;
  if (error != nullptr) *error = ok ? kOk : kErrTooLarge;
  return ok;
}

HostDecodeResult decode_on_host(Format format, const std::uint8_t* input, std::size_t size, std::uint8_t* out,
                                std::uint64_t capacity) {
  HostDecodeResult r;
  if (!plan_deflate_chunk(size, capacity, &r.error)) return r;
  // One warp and its memory per thread, kept: making 32 fiber stacks per chunk would cost
  // more than most chunks' decoding.
  thread_local std::unique_ptr<warp_testing::FiberWarp> warp;
  thread_local std::unique_ptr<DeflateWarpMemory> memory;
  if (!warp) warp = std::make_unique<warp_testing::FiberWarp>();
  if (!memory) memory = std::make_unique<DeflateWarpMemory>();
  std::uint32_t produced = 0;
  std::int32_t error = kOk;
  warp->run([&](unsigned lane) {
    warp_testing::EmulatedWarp w(lane, *warp);
    std::uint32_t p = 0;
    const std::int32_t e = warp_inflate(w, input, static_cast<std::uint32_t>(size), out,
                                        static_cast<std::uint32_t>(capacity), format, *memory, &p);
    if (lane == 0) {
      error = e;
      produced = p;
    }
  });
  r.error = error;
  r.size = error == kOk ? produced : 0;
  return r;
}

}  // namespace zarrkit::gpu::deflate
