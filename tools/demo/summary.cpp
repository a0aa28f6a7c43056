#include "demo/summary.h"

#include <algorithm>

#include <fmt/format.h>

#include "demo/report.h"

namespace zarrkit::demo {

Contender contender_for(const Format& format, const AccessPattern& pattern, const Timing& timing) {
  Contender c;
  c.name = format.name();
  c.role = format.role();
  c.timing = timing;
  c.stored_bytes = format.bytes_on_disk();
  if (auto chunks = format.decoded_chunk_shape()) c.decoded_bytes = chunk_bytes_touched(pattern, *chunks);
  return c;
}

std::uint64_t contiguous_piece_bytes(const Box& box, const Shape3& shape) {
  std::uint64_t piece = box.count[2];
  if (box.count[2] == shape[2]) {
    piece *= box.count[1];
    if (box.count[1] == shape[1]) piece *= box.count[0];
  }
  return piece * sizeof(float);
}

namespace {

const char* setting_name(Setting s) {
  switch (s) {
    case Setting::kWarm: return "warm";
    case Setting::kCold: return "cold";
    case Setting::kGpu: return "into GPU";
  }
  return "";
}

std::string disk_text(const Contender& c) {
  return c.timing.disk_bytes ? format_bytes(*c.timing.disk_bytes) : fmt::format("{} stored", format_bytes(c.stored_bytes));
}

}  // namespace

std::string Summary::why(const Contest& contest, const Contender& w, const Contender& ru) const {
  const bool w_raw = w.role == LayoutRole::kRaw;
  const bool ru_raw = ru.role == LayoutRole::kRaw;
  switch (contest.setting) {
    case Setting::kWarm: {
      if (w_raw) {
        return fmt::format("in memory already: copies just the {} asked for; {}: {} to decompress first",
                           format_bytes(contest.asked_bytes), ru.name, format_bytes(ru.decoded_bytes));
      }
      const std::string other =
          ru_raw ? fmt::format("memmap+copy copies pieces of {} on 1 thread", format_bytes(contest.memmap_piece_bytes))
                 : fmt::format("{} decompresses {}", ru.name, format_bytes(ru.decoded_bytes));
      return fmt::format("decompresses {} on {} threads; {}", format_bytes(w.decoded_bytes), threads_, other);
    }
    case Setting::kCold: {
      if (w_raw) {
        return fmt::format("reads {} from disk, decodes nothing; {} reads {}, then decompresses",
                           disk_text(w), ru.name, disk_text(ru));
      }
      std::string text = fmt::format("reads {} from disk, {} {}", disk_text(w), ru.name, disk_text(ru));
      const bool fewer = w.timing.disk_bytes && ru.timing.disk_bytes
                             ? *w.timing.disk_bytes * 10 < *ru.timing.disk_bytes * 9
                             : w.stored_bytes * 10 < ru.stored_bytes * 9;
      if (!fewer) return text + fmt::format(": {} threads keep several reads in flight", threads_);
      if (w.role == LayoutRole::kChunks) {
        return text + fmt::format(" ({} compression)",
                                  times_text(static_cast<double>(contest.logical_bytes) /
                                             static_cast<double>(std::max<std::uint64_t>(w.stored_bytes, 1))));
      }
      return text + (ru_raw ? ": just the chunks asked for; page faults read pages and readahead around them"
                            : ": just the chunks that hold the pattern");
    }
    case Setting::kGpu: {
      if (w_raw) {
        return fmt::format("one copy of the raw bytes to the device; {} {}", ru.name,
                           ru.gpu_decoded_chunks == 0 ? "decodes on the CPU, then copies as much"
                                                      : "saves too few bytes to pay for decoding");
      }
      if (w.chunks > 0 && w.gpu_decoded_chunks == w.chunks) {
        return fmt::format("the GPU decodes every chunk: {} cross to the device instead of {}",
                           format_bytes(w.stored_bytes), format_bytes(contest.logical_bytes));
      }
      return fmt::format("decoded on {} CPU threads into pinned memory, then one fast copy to the device", threads_);
    }
  }
  return "";
}

void Summary::print(std::FILE* out) const {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"access pattern", "fastest", "ahead of", "why"});
  for (const Contest& contest : contests_) {
    std::vector<const Contender*> measured;
    for (const Contender& c : contest.contenders)
      if (c.timing.measured) measured.push_back(&c);
    if (measured.size() < 2) continue;
    std::sort(measured.begin(), measured.end(),
              [](const Contender* a, const Contender* b) { return a->timing.median_s < b->timing.median_s; });
    const Contender& w = *measured[0];
    const Contender& ru = *measured[1];
    const double margin = ru.timing.median_s / std::max(w.timing.median_s, 1e-12);
    rows.push_back({fmt::format("{}, {}", contest.label, setting_name(contest.setting)), w.name,
                    fmt::format("{} {}", times_text(margin), ru.name), why(contest, w, ru)});
  }
  print_grid(rows, out, /*separator=*/"  ");
  fmt::print(out, "(ahead of: the runner-up, and its time over the fastest one's)\n");
}

}  // namespace zarrkit::demo
