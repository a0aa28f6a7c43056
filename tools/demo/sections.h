// The demo's sections, in the order they print:
//   1. one chunk shape for every pattern, noisy data, warm page cache (memmap's honest wins)
//   2. chunks shaped for each pattern (warm), and what each layout decodes per pattern
//   3. cold reads by pattern (page cache dropped before every run)
//   4. data that compresses: the whole array, noisy against quantised, warm and cold
//   5. reads into GPU memory (or why they were skipped)
// then the summary (summary.h). Sections 1-3 run on the noisy field; 4 and 5 print what
// was measured on both fields.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "demo/access_patterns.h"
#include "demo/formats.h"
#include "demo/measure.h"
#include "demo/report.h"
#include "demo/sample_field.h"
#include "demo/summary.h"

namespace zarrkit::demo {

struct DemoSetup {
  Shape3 shape{};
  Shape3 chunks{};  // the one chunk shape of section 1 (and the shard shape)
  std::size_t threads = 1;
  std::vector<AccessPattern> patterns;  // read all first
  TimingOptions warm;
  TimingOptions cold;
  std::FILE* out = stdout;
};

// The stores of the noisy field, by what they are for.
struct NoisyStores {
  Format* v3 = nullptr;                  // one chunk shape
  Format* v2 = nullptr;                  // one chunk shape
  Format* raw = nullptr;
  std::vector<Format*> shaped;           // z-, y-, x-plane chunks, then sharded
  // The layout shaped for `pattern` (nullptr for read all).
  Format* shaped_for(const AccessPattern& pattern) const;
};

// Reading the whole array with one store: what sections 4 and 5 print.
struct ReadAllResult {
  std::string name;
  LayoutRole role = LayoutRole::kRaw;
  std::uint64_t stored_bytes = 0;
  std::uint64_t chunks = 0;  // chunks a read of everything decodes
  Timing warm, cold, gpu;
  std::uint64_t gpu_decoded_chunks = 0;
};

struct FieldResults {
  std::string field;        // "noisy"
  std::string description;  // how its values were made
  std::uint64_t logical_bytes = 0;
  std::vector<ReadAllResult> stores;  // memmap+copy, zarr v3, zarr v2
};

// Section 1; returns its table's numbers for the later sections.
Report section_one_chunk_shape(const DemoSetup& setup, const NoisyStores& stores, const SampleField& field);
// Section 2; adds the warm contests to the summary.
void section_shaped_chunks(const DemoSetup& setup, const NoisyStores& stores, const Report& one_shape,
                           const SampleField& field, Summary& summary);
// Section 3; adds the cold contests by pattern to the summary.
void section_cold_patterns(const DemoSetup& setup, const NoisyStores& stores, const SampleField& field,
                           Summary& summary);

// Measures reading the whole array from each of `stores` (memmap+copy, zarr v3, zarr v2):
// warm (unless `known_warm` has it: section 1's numbers, in the same order), cold and into
// GPU memory (when `gpu_skipped` is empty).
FieldResults measure_read_all(const DemoSetup& setup, const std::vector<Format*>& stores,
                              const SampleField& field, const std::vector<Timing>& known_warm,
                              const std::string& gpu_skipped);
// How cold reads are made (for the headings), and a note on what the cache drops achieved.
std::string cold_method_text(const TimingOptions& cold);
std::string cache_drop_note(double worst_resident_fraction);

// Sections 4 and 5, from both fields' results; they add their contests to the summary.
void section_compression(const DemoSetup& setup, const std::vector<FieldResults>& fields, Summary& summary);
void section_gpu(const DemoSetup& setup, const std::vector<FieldResults>& fields, const std::string& gpu_skipped,
                 Summary& summary);

}  // namespace zarrkit::demo
