// A one-line progress display on stderr for long copies: chunks done/total, bytes, rate.
// Drawn only when stderr is a terminal, and at most ~10 times a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace zarrkit::cli {

class Progress {
 public:
  Progress(std::string label, std::uint64_t total_chunks, std::uint64_t total_bytes,
           bool enabled = stderr_is_terminal());
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(std::uint64_t chunks, std::uint64_t bytes);
  // Draws the final state and ends the line (also done by the destructor).
  void finish();

  // The line as it would be drawn now (for tests).
  std::string line() const;

  static bool stderr_is_terminal();

 private:
  void draw(bool force);

  std::string label_;
  std::uint64_t total_chunks_, total_bytes_;
  std::uint64_t chunks_ = 0, bytes_ = 0;
  bool enabled_, finished_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace zarrkit::cli
