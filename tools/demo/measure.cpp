#include "demo/measure.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include <fmt/format.h>

namespace zarrkit::demo {

namespace {

double run_once(const Format& format, const AccessPattern& pattern, const SampleField& field) {
  using Clock = std::chrono::steady_clock;
  Clock::duration total{};
  for (const Box& box : pattern.boxes) {
    const auto start = Clock::now();
    Buffer values = format.read(box);
    total += Clock::now() - start;
    if (auto difference = field.mismatch(box, values.view())) {
      throw VerificationError(fmt::format(
          "{} returned wrong values for {} (box start [{}, {}, {}], size [{}, {}, {}]): {}",
          format.name(), pattern.label, box.start[0], box.start[1], box.start[2], box.count[0],
          box.count[1], box.count[2], *difference));
    }
  }
  return std::chrono::duration<double>(total).count();
}

}  // namespace

Timing time_pattern(const Format& format, const AccessPattern& pattern, const SampleField& field,
                    int repeats) {
  run_once(format, pattern, field);  // warm-up: page cache, allocator, thread pool
  std::vector<double> seconds;
  for (int i = 0; i < std::max(repeats, 1); ++i) seconds.push_back(run_once(format, pattern, field));
  std::sort(seconds.begin(), seconds.end());
  Timing timing;
  timing.runs = static_cast<int>(seconds.size());
  timing.min_s = seconds.front();
  timing.max_s = seconds.back();
  const std::size_t n = seconds.size();
  timing.median_s = n % 2 == 1 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
  return timing;
}

}  // namespace zarrkit::demo
