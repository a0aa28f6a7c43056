// Timing one access pattern on one format. Warm: a warm-up run, then timed runs. Cold: the
// files are dropped from the page cache before every run, and the bytes the run read from
// storage are counted. The median is reported. Every run (warm-up included) checks every
// value it read.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "demo/access_patterns.h"
#include "demo/formats.h"
#include "demo/sample_field.h"

namespace zarrkit::demo {

struct TimingOptions {
  int max_runs = 5;
  // Timed runs stop once they add up to this many seconds (always at least one), so that a
  // slow cell costs seconds, not minutes.
  double budget_s = 1.0;
  bool cold = false;
};

struct Timing {
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  int runs = 0;
  bool measured = false;
  // Cold runs: bytes read from storage in the median run (nullopt where not counted).
  std::optional<std::uint64_t> disk_bytes;
  // Cold runs: the largest share of the files still cached after a drop.
  double resident_fraction = 0;
};

// Thrown when a reader returns values other than those written: the demo's results are
// meaningless then, so it stops.
class VerificationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Only the reads are timed (each box on its own; the verification between them is not).
Timing time_pattern(Format& format, const AccessPattern& pattern, const SampleField& field,
                    const TimingOptions& options);

// The runs of time_pattern for any read: `run` reads, checks and returns the seconds it
// spent reading; `before_each` (cold runs) drops the page cache.
Timing time_runs(const std::function<double()>& run, const TimingOptions& options,
                 const std::function<CacheDrop()>& before_each = {});

// Every check made so far: reads, and values compared with what was written.
struct Verified {
  std::uint64_t reads = 0;
  std::uint64_t values = 0;
};
Verified verified_so_far();
// Counts one checked read of `values` values (for checks made outside time_pattern).
void count_verified(std::uint64_t values);

}  // namespace zarrkit::demo
