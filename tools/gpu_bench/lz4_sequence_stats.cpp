// zarrkit_lz4_stats: what an LZ4 decoder has to do on S7's family-N data, counted on the
// host (no GPU needed): per block size, the sequences per block, bytes per sequence, the
// mean literal run and match length, and how far back the matches reach (how many a window
// of recent output of 16 or 32 KiB would serve). One warp decodes one block sequence by
// sequence, so sequences per block over its time give the cost per sequence
// (bench/results/GPU.md).
//
//   zarrkit_lz4_stats [--total-mib 256] [--chunk-kib 64,256,1024,4096,16384]
#include <lz4.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace {

// S7's family N (tools/gpu_bench/s7_decode_bench.cpp) as generated on 16 threads.
std::vector<float> family_n(std::size_t n) {
  constexpr unsigned kThreads = 16;
  std::vector<float> out(n);
  for (unsigned t = 0; t < kThreads; ++t) {
    std::mt19937 rng(7 + t);
    std::normal_distribution<float> noise(0.0f, 0.05f);
    for (std::size_t i = n * t / kThreads; i < n * (t + 1) / kThreads; ++i) {
      const double x = static_cast<double>(i % 4096) / 4096.0, y = static_cast<double>(i / 4096) / 4096.0;
      out[i] = static_cast<float>(std::round((std::sin(6.0 * x) * std::cos(3.0 * y) * 10.0 + noise(rng)) * 64.0) / 64.0);
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t total_mib = 256;
  std::vector<std::size_t> kibs = {64, 256, 1024, 4096, 16384};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--total-mib" && i + 1 < argc) {
      total_mib = std::stoul(argv[++i]);
    } else if (a == "--chunk-kib" && i + 1 < argc) {
      kibs.clear();
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');) kibs.push_back(std::stoul(item));
    } else {
      std::cerr << "usage: zarrkit_lz4_stats [--total-mib N] [--chunk-kib A,B,...]\n";
      return 1;
    }
  }
  const std::size_t total = total_mib << 20;
  const std::vector<float> data = family_n(total / 4);
  const auto* bytes = reinterpret_cast<const char*>(data.data());
  fmt::print("| block KiB | ratio | sequences per block | bytes per sequence | compressed bytes per sequence | literals "
             "| match | offset + length <= 1 KiB | <= 16 KiB - 32 | <= 32 KiB - 32 | with length bytes |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::size_t kib : kibs) {
    const std::size_t chunk = kib << 10, count = total / chunk;
    std::vector<char> block(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(chunk))));
    std::uint64_t compressed = 0, sequences = 0, literals = 0, matched = 0, extended = 0;
    std::uint64_t near1k = 0, near16k = 0, near32k = 0;
    for (std::size_t c = 0; c < count; ++c) {
      const int n = LZ4_compress_default(bytes + c * chunk, block.data(), static_cast<int>(chunk),
                                         static_cast<int>(block.size()));
      compressed += static_cast<std::uint64_t>(n);
      const auto* b = reinterpret_cast<const std::uint8_t*>(block.data());
      std::size_t ip = 0;
      while (ip < static_cast<std::size_t>(n)) {
        const unsigned token = b[ip++];
        std::size_t run = token >> 4;
        if (run == 15) {
          ++extended;
          for (unsigned x = 255; x == 255;) run += (x = b[ip++]);
        }
        ip += run;
        literals += run;
        if (ip >= static_cast<std::size_t>(n)) break;  // the last sequence: literals only
        const unsigned offset = b[ip] | b[ip + 1] << 8;
        ip += 2;
        std::size_t length = token & 15u;
        if (length == 15) {
          ++extended;
          for (unsigned x = 255; x == 255;) length += (x = b[ip++]);
        }
        length += 4;
        ++sequences;
        matched += length;
        // Within a window of W bytes of recent output that keeps 32 bytes of room (as the
        // window kernels measured in bench/results/GPU.md did).
        near1k += offset + length <= 1024;
        near16k += offset + length <= (16u << 10) - 32;
        near32k += offset + length <= (32u << 10) - 32;
      }
    }
    const double seqs = static_cast<double>(sequences);
    fmt::print("| {} | {:.2f} | {:.0f} | {:.1f} | {:.2f} | {:.2f} | {:.2f} | {:.1f}% | {:.1f}% | {:.1f}% | {:.2f}% |\n", kib,
               static_cast<double>(total) / static_cast<double>(compressed), seqs / static_cast<double>(count),
               static_cast<double>(total) / seqs, static_cast<double>(compressed) / seqs,
               static_cast<double>(literals) / seqs, static_cast<double>(matched) / seqs, 100.0 * near1k / seqs,
               100.0 * near16k / seqs, 100.0 * near32k / seqs, 100.0 * extended / seqs);
  }
  return 0;
}
