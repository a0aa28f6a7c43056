// Helpers shared by the GPU benchmarks: family N data (BENCHMARKS.md), medians, a plain
// parallel loop.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <thread>
#include <vector>

namespace zarrkit::bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Family N of BENCHMARKS.md: a smooth field plus noise, float32. `quantized` rounds the
// values to 1/64 (blosc-lz4 ratio about 3, as N is specified); otherwise the noise fills
// the low mantissa bits (ratio about 1.3).
inline void fill_family_n(std::vector<float>& out, std::uint64_t seed, bool quantized = true) {
  const std::size_t n = out.size();
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(seed + t));
      std::normal_distribution<float> noise(0.0f, 0.05f);
      for (std::size_t i = n * t / threads; i < n * (t + 1) / threads; ++i) {
        const double x = static_cast<double>(i % 4096) / 4096.0, y = static_cast<double>(i / 4096) / 4096.0;
        const double v = std::sin(6.0 * x) * std::cos(3.0 * y) * 10.0 + noise(rng);
        out[i] = static_cast<float>(quantized ? std::round(v * 64.0) / 64.0 : v);
      }
    });
  }
  for (auto& th : pool) th.join();
}

inline void parallel(std::size_t n, unsigned threads, const std::function<void(std::size_t)>& f) {
  std::vector<std::thread> pool;
  std::atomic<std::size_t> next{0};
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < n;) f(i);
    });
  }
  for (auto& th : pool) th.join();
}

}  // namespace zarrkit::bench
