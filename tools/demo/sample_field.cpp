#include "demo/sample_field.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "zarrkit/config.h"
#include "zarrkit/thread_pool.h"

namespace zarrkit::demo {
namespace {

// splitmix64: a counter-based generator, so every element's noise depends only on the
// seed and its index and the field can be generated in parallel, in any order.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Smooth profiles along each axis; the field is separable so that generation costs a
// few flops per element instead of three transcendental calls.
std::vector<float> profile(std::uint64_t n, double waves, double phase) {
  std::vector<float> p(n);
  const double two_pi = 6.283185307179586;
  for (std::uint64_t i = 0; i < n; ++i) {
    const double t = (static_cast<double>(i) + 0.5) / static_cast<double>(n);
    p[i] = static_cast<float>(std::sin(two_pi * waves * t + phase));
  }
  return p;
}

}  // namespace

SampleField::SampleField(Shape3 shape, std::uint64_t seed, FieldKind kind)
    : shape_(shape), kind_(kind), values_(shape[0] * shape[1] * shape[2]) {
  const bool quantise = kind == FieldKind::kQuantised;
  const auto fz = profile(shape[0], 1.5, 0.3);
  const auto fy = profile(shape[1], 2.0, 1.1);
  const auto fx = profile(shape[2], 3.0, 2.0);
  const std::uint64_t plane = shape[1] * shape[2];
  constexpr float kNoise = 0.02f;  // ~1% of the signal: the low mantissa bits are random
  shared_thread_pool().parallel_for(shape[0], [&](std::size_t z) {
    float* out = values_.data() + z * plane;
    for (std::uint64_t y = 0; y < shape[1]; ++y) {
      for (std::uint64_t x = 0; x < shape[2]; ++x) {
        const std::uint64_t index = z * plane + y * shape[2] + x;
        const std::uint64_t bits = splitmix64(seed ^ (index * 0x2545f4914f6cdd1dull));
        // 24 random bits -> a uniform value in [-0.5, 0.5).
        const float noise = static_cast<float>(bits >> 40) * 0x1p-24f - 0.5f;
        const float value = 2.0f + fz[z] + fy[y] * fx[x] + kNoise * noise;
        // Values lie in (-0.1, 4.1): a multiple of the step there is exact in float32.
        out[y * shape[2] + x] =
            quantise ? std::nearbyint(value / kQuantisationStep) * kQuantisationStep : value;
      }
    }
  });
}

std::string SampleField::description() const {
  if (kind_ == FieldKind::kNoisy) return "smooth + 1% noise, every bit kept";
  return fmt::format("the same values rounded to steps of 1/{:.0f} (the noise stays, its random low bits go)",
                     1.0f / kQuantisationStep);
}

std::optional<std::string> SampleField::mismatch(const Box& box, ByteView data) const {
  const std::uint64_t row = box.count[2];
  if (data.size() != box.num_elements() * sizeof(float)) {
    return fmt::format("got {} bytes, expected {}", data.size(), box.num_elements() * sizeof(float));
  }
  const auto* got = reinterpret_cast<const float*>(data.data());
  for (std::uint64_t z = 0; z < box.count[0]; ++z) {
    for (std::uint64_t y = 0; y < box.count[1]; ++y, got += row) {
      const float* want =
          values_.data() + ((box.start[0] + z) * shape_[1] + box.start[1] + y) * shape_[2] + box.start[2];
      if (std::memcmp(got, want, row * sizeof(float)) == 0) continue;
      for (std::uint64_t x = 0; x < row; ++x) {
        if (std::memcmp(&got[x], &want[x], sizeof(float)) != 0) {
          return fmt::format("element [{}, {}, {}] is {} but {} was written", box.start[0] + z,
                             box.start[1] + y, box.start[2] + x, got[x], want[x]);
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace zarrkit::demo
