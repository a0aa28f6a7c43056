// Timing one access pattern on one format: a warm-up run, then `repeats` timed runs; the
// median is reported. Every run (warm-up included) checks every value it read.
#pragma once

#include <stdexcept>
#include <string>

#include "demo/access_patterns.h"
#include "demo/formats.h"
#include "demo/sample_field.h"

namespace zarrkit::demo {

struct Timing {
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  int runs = 0;
};

// Thrown when a reader returns values other than those written: the demo's results are
// meaningless then, so it stops.
class VerificationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Only the reads are timed (each box on its own; the verification between them is not).
Timing time_pattern(const Format& format, const AccessPattern& pattern, const SampleField& field,
                    int repeats);

}  // namespace zarrkit::demo
