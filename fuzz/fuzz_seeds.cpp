// Linked into the libFuzzer builds of the targets (ZARRKIT_LIBFUZZER), where libFuzzer's own
// main replaces fuzz_driver.cpp: before fuzzing starts, the target's seeds (fuzz_target.h) are
// written as files into $ZARRKIT_FUZZ_SEED_DIR when that is set, so that libFuzzer, given that
// folder as its first corpus folder, starts from them as the ordinary driver does
// (scripts/fuzz sets it).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_target.h"

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  const char* folder = std::getenv("ZARRKIT_FUZZ_SEED_DIR");
  if (folder == nullptr || *folder == '\0') return 0;
  std::filesystem::create_directories(folder);
  std::size_t n = 0;
  for (const std::string& seed : zarrkit::fuzz::seeds()) {
    const auto path = std::filesystem::path(folder) / ("seed-" + std::to_string(n++));
    std::ofstream(path, std::ios::binary | std::ios::trunc) << seed;
  }
  std::fprintf(stderr, "fuzz: %zu seeds written to %s\n", n, folder);
  return 0;
}
