// The ordinary-program driver of a fuzz target (fuzz_target.h): replays every file of the
// corpus folders given, then mutates the seeds and the corpus (bit flips, byte changes,
// truncations, insertions, splices) for --seconds (default 5), with a fixed PRNG seed so a
// run can be repeated (--seed). A finding aborts; the input that caused it is left in
// <target>-current.bin (in the working directory) to become a corpus file.
//   fuzz_array [--seconds S] [--seed N] [corpus folder or file ...]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz_target.h"

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string mutate(const std::string& input, const std::vector<std::string>& pool, std::mt19937_64& rng) {
  std::string s = input;
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const auto pick = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
    switch (rng() % 6) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:  // an interesting byte
        if (!s.empty()) {
          static const unsigned char kBytes[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x10, 0x40};
          s[pick(s.size())] = static_cast<char>(kBytes[rng() % sizeof(kBytes)]);
        }
        break;
      case 2:  // truncate
        s.resize(pick(s.size() + 1));
        break;
      case 3:  // insert random bytes
        s.insert(pick(s.size() + 1), std::string(1 + pick(16), static_cast<char>(rng())));
        break;
      case 4:  // a 4-byte little-endian value of another size
        if (s.size() >= 4) {
          const std::uint32_t v = static_cast<std::uint32_t>(rng() % 3 == 0 ? 0xffffffffu : rng() % 65536);
          std::memcpy(&s[pick(s.size() - 3)], &v, 4);
        }
        break;
      default:  // splice with another input
        if (!pool.empty()) {
          const std::string& other = pool[pick(pool.size())];
          s = s.substr(0, pick(s.size() + 1)) + other.substr(pick(other.size() + 1));
        }
        break;
    }
  }
  return s;
}

void run(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  std::uint64_t seed = 1;
  std::vector<std::string> inputs = zarrkit::fuzz::seeds();
  std::size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (arg == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
        if (entry.is_regular_file()) inputs.push_back(read_file(entry.path())), ++replayed;
      }
    } else if (std::filesystem::is_regular_file(arg)) {
      inputs.push_back(read_file(arg));
      ++replayed;
    }
  }
  std::string current;
  static std::string current_file;  // read by the terminate handler
  current_file = std::filesystem::path(argv[0]).filename().string() + "-current.bin";
  std::set_terminate([] {
    std::fprintf(stderr, "fuzz: an exception that is not a zarrkit::Error escaped; the input is in %s\n",
                 current_file.c_str());
    std::abort();
  });
  for (const std::string& input : inputs) run(input);
  std::mt19937_64 rng(seed);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::size_t executions = 0;
  while (!inputs.empty() && std::chrono::steady_clock::now() < end) {
    current = mutate(inputs[static_cast<std::size_t>(rng() % inputs.size())], inputs, rng);
    {
      std::ofstream(current_file, std::ios::binary | std::ios::trunc) << current;  // kept if we crash
    }
    run(current);
    ++executions;
  }
  std::filesystem::remove(current_file);
  std::printf("fuzz %s: %zu seeds, %zu corpus files replayed, %zu mutated executions in %.0f s, no finding\n",
              std::filesystem::path(argv[0]).filename().c_str(), inputs.size() - replayed, replayed, executions, seconds);
  return 0;
}
