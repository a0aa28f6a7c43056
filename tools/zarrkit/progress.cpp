#include "zarrkit/progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "zarrkit/format.h"

namespace zarrkit::cli {
namespace {
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);
constexpr int kBarWidth = 24;
}  // namespace

Progress::Progress(std::string label, std::uint64_t total_chunks, std::uint64_t total_bytes, bool enabled)
    : label_(std::move(label)),
      total_chunks_(total_chunks),
      total_bytes_(total_bytes),
      enabled_(enabled),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { finish(); }

bool Progress::stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

void Progress::advance(std::uint64_t chunks, std::uint64_t bytes) {
  chunks_ += chunks;
  bytes_ += bytes;
  draw(false);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  draw(true);
  std::fputc('\n', stderr);
}

std::string Progress::line() const {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double fraction = total_chunks_ ? static_cast<double>(chunks_) / static_cast<double>(total_chunks_) : 1.0;
  const int filled = static_cast<int>(fraction * kBarWidth);
  const auto rate = seconds > 0 ? static_cast<std::uint64_t>(static_cast<double>(bytes_) / seconds) : 0;
  return fmt::format("{} [{}{}] {}/{} chunks  {} / {}  {}/s", label_, std::string(filled, '#'),
                     std::string(kBarWidth - filled, '.'), chunks_, total_chunks_, format_bytes(bytes_),
                     format_bytes(total_bytes_), format_bytes(rate));
}

void Progress::draw(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  // \r returns to the line start, \033[K clears what a longer previous line left.
  std::fprintf(stderr, "\r%s\033[K", line().c_str());
  std::fflush(stderr);
}

}  // namespace zarrkit::cli
