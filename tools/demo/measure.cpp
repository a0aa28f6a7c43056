#include "demo/measure.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace zarrkit::demo {

namespace {

std::atomic<std::uint64_t> g_reads{0};
std::atomic<std::uint64_t> g_values{0};

double read_pattern(const Format& format, const AccessPattern& pattern, const SampleField& field) {
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
    count_verified(box.num_elements());
  }
  return std::chrono::duration<double>(total).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

void count_verified(std::uint64_t values) {
  g_reads += 1;
  g_values += values;
}

Verified verified_so_far() { return {g_reads.load(), g_values.load()}; }

Timing time_runs(const std::function<double()>& run, const TimingOptions& options,
                 const std::function<CacheDrop()>& before_each) {
  if (!options.cold) run();  // warm-up: allocator, thread pool, caches
  std::vector<double> seconds;
  std::vector<std::optional<std::uint64_t>> disk;
  Timing timing;
  double spent = 0;
  while (static_cast<int>(seconds.size()) < std::max(options.max_runs, 1) &&
         (seconds.empty() || spent < options.budget_s)) {
    if (options.cold && before_each) {
      timing.resident_fraction = std::max(timing.resident_fraction, before_each().resident_fraction());
    }
    const auto before = bytes_read_from_storage();
    const double s = run();
    const auto after = bytes_read_from_storage();
    seconds.push_back(s);
    disk.push_back(before && after ? std::optional<std::uint64_t>(*after - *before) : std::nullopt);
    spent += s;
  }
  timing.measured = true;
  timing.runs = static_cast<int>(seconds.size());
  timing.min_s = *std::min_element(seconds.begin(), seconds.end());
  timing.max_s = *std::max_element(seconds.begin(), seconds.end());
  timing.median_s = median(seconds);
  if (options.cold) {
    // The bytes of the run whose time is closest to the median.
    std::size_t closest = 0;
    for (std::size_t i = 1; i < seconds.size(); ++i)
      if (std::abs(seconds[i] - timing.median_s) < std::abs(seconds[closest] - timing.median_s)) closest = i;
    timing.disk_bytes = disk[closest];
  }
  return timing;
}

Timing time_pattern(Format& format, const AccessPattern& pattern, const SampleField& field,
                    const TimingOptions& options) {
  return time_runs([&] { return read_pattern(format, pattern, field); }, options,
                   [&] { return format.drop_from_page_cache(); });
}

}  // namespace zarrkit::demo
