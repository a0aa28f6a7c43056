// A fuzz target: LLVMFuzzerTestOneInput(data, size) feeds outside bytes to one parser or
// decoder. Bad input must end in a zarrkit::Error (or be accepted); anything else (another
// exception, a crash, a sanitizer report, a hang) is a finding. Each target is built with
// fuzz_driver.cpp as an ordinary program that replays its corpus and runs a bounded mutation
// loop (ctest, under ASan/UBSan in CI); the entry point is libFuzzer's, so the same file
// links with clang's -fsanitize=fuzzer (fuzz/README.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace zarrkit::fuzz {

// Valid inputs the target starts from (made in memory by encoding real data), besides the
// corpus files: the mutation loop works on these.
std::vector<std::string> seeds();

}  // namespace zarrkit::fuzz
