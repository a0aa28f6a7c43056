// How much the blocks of one zstd frame can execute side by side: compresses family N
// (bench_data.h) with libzstd, takes the sequences libzstd chose (ZSTD_generateSequences),
// and counts the matches whose source lies in an earlier block. Then it models the device's
// execution stage (a warp per block, each writing one byte per unit of time and waiting
// for the earlier blocks' bytes its matches read): the frame's time against one block
// after another gives the parallelism that waiting allows. Then two alternatives: the rounds
// in which a warp copies a group's matches, by group size and readiness rule; and tracing
// the bytes of earlier blocks instead of waiting for them, in look-ups per match.
//
//   zarrkit_zstd_deps [--mib N | --kib N] [--level L]
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_data.h"

namespace {

// With every block executing at once and none waiting, a match reading bytes of an earlier
// block traces them instead: each piece of its source is a literal run of that block (read
// from the decoded literals), or part of a match, whose own source is traced in turn (a
// match shorter than its offset repeats its first `offset` bytes). Counts the pieces each
// cross-block match visits: each is a look-up of the sequence holding a frame position.
void report_traces(const ZSTD_Sequence* sequences, std::size_t count, const std::vector<std::uint64_t>& starts,
                   bool concurrent) {
  struct Piece {  // frame bytes [start, start + literals) are literals, then a match
    std::uint64_t start;
    std::uint32_t literals, match, offset;
  };
  std::vector<Piece> pieces;
  std::uint64_t pos = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const ZSTD_Sequence& s = sequences[i];
    pieces.push_back({pos, s.litLength, s.matchLength, s.offset});
    pos += s.litLength + s.matchLength;
  }
  auto holding = [&](std::uint64_t q) {
    std::size_t lo = 0, hi = pieces.size();
    while (hi - lo > 1) {
      const std::size_t mid = (lo + hi) / 2;
      (pieces[mid].start <= q ? lo : hi) = mid;
    }
    return lo;
  };
  constexpr std::uint64_t kCap = 100000;
  std::vector<std::uint64_t> visits;
  std::uint64_t capped = 0;
  struct Range {
    std::uint64_t begin, end;
  };
  std::vector<Range> stack;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    if (p.match == 0) continue;
    const std::uint64_t at = p.start + p.literals;
    const std::uint64_t block_start = *(std::upper_bound(starts.begin(), starts.end(), at) - 1);
    if (at - p.offset >= block_start) continue;
    const std::uint64_t end = std::min<std::uint64_t>(at - p.offset + p.match, block_start);
    // Bytes every block has written by the time this one reaches `at` (all at one pace).
    const std::uint64_t t = concurrent ? at - block_start : 0;
    auto written = [&](std::uint64_t q) {
      const std::uint64_t s = *(std::upper_bound(starts.begin(), starts.end(), q) - 1);
      return q - s < t;
    };
    std::uint64_t n = 0;
    stack.assign(1, {at - p.offset, end});
    while (!stack.empty() && n < kCap) {
      Range r = stack.back();
      stack.pop_back();
      while (r.begin < r.end && n < kCap) {
        if (concurrent && written(r.begin)) {  // read it (to keep the model simple: the rest of the range too)
          r.begin = r.end;
          continue;
        }
        ++n;
        const Piece& h = pieces[holding(r.begin)];
        const std::uint64_t match_at = h.start + h.literals;
        if (r.begin < match_at) {  // a literal run
          r.begin = std::min(r.end, match_at);
          continue;
        }
        const std::uint64_t stop = std::min<std::uint64_t>(r.end, match_at + h.match);
        // Its bytes repeat the `offset` bytes before the match.
        const std::uint64_t from = match_at - h.offset + (r.begin - match_at) % h.offset;
        const std::uint64_t length = std::min<std::uint64_t>(stop - r.begin, h.offset);
        stack.push_back({from, from + length});
        r.begin = stop;
      }
    }
    if (n >= kCap) ++capped;
    visits.push_back(n);
  }
  if (visits.empty()) return;  // one block: nothing to trace
  std::sort(visits.begin(), visits.end());
  double sum = 0;
  for (auto v : visits) sum += static_cast<double>(v);
  auto at = [&](double q) { return static_cast<unsigned long long>(visits[static_cast<std::size_t>(q * (visits.size() - 1))]); };
  std::printf("%s: %zu cross-block matches, look-ups per match mean %.1f, p50 %llu, p90 %llu, "
              "p99 %llu, max %llu (%llu capped at %llu), %.1f per sequence of the frame\n",
              concurrent ? "tracing the bytes not yet written" : "tracing everything", visits.size(), sum / static_cast<double>(visits.size()), at(0.5), at(0.9), at(0.99), at(1.0),
              static_cast<unsigned long long>(capped), static_cast<unsigned long long>(kCap),
              sum / static_cast<double>(pieces.size()));
}

// The execution stage's rounds: a warp takes 32 sequences, writes their literals, then
// copies their matches in rounds; a match is ready when its source ends before the first
// match not yet copied. Counts the rounds per group of 32.
void report_rounds(const ZSTD_Sequence* sequences, std::size_t count, std::size_t group) {
  std::uint64_t groups = 0, rounds[2] = {}, pos = 0, histogram[2][9] = {};
  std::size_t i = 0;
  while (i < count) {
    struct Match {
      std::uint64_t dst, source, length;
    };
    std::vector<Match> pending;
    std::size_t taken = 0;
    for (; i < count && taken < group; ++i, ++taken) {
      const ZSTD_Sequence& q = sequences[i];
      pos += q.litLength;
      if (q.matchLength > 0) pending.push_back({pos, pos - q.offset, q.matchLength});
      pos += q.matchLength;
    }
    for (int rule = 0; rule < 2; ++rule) {
      std::vector<Match> left_to_copy = pending;
      std::uint64_t r = 0;
      while (!left_to_copy.empty()) {
        ++r;
        const std::uint64_t first = left_to_copy.front().dst;
        std::vector<Match> left;
        for (std::size_t k = 0; k < left_to_copy.size(); ++k) {
          const Match& m = left_to_copy[k];
          bool ready = k == 0 || m.source + m.length <= first;
          if (rule == 1 && !ready) {  // its source overlaps no match still to copy (but itself)
            const std::uint64_t end = std::min(m.source + m.length, m.dst);
            ready = true;
            for (std::size_t j = 0; j < left_to_copy.size() && ready; ++j) {
              const Match& o = left_to_copy[j];
              if (j != k && o.dst < end && o.dst + o.length > m.source) ready = false;
            }
          }
          if (!ready) left.push_back(m);
        }
        left_to_copy.swap(left);
      }
      rounds[rule] += r;
      ++histogram[rule][std::min<std::uint64_t>(r, 8)];
    }
    ++groups;
  }
  for (int rule = 0; rule < 2; ++rule) {
    std::printf("execution rounds per group of %zu sequences, %s: mean %.2f; 0-8+:", group,
                rule == 0 ? "source before the first match left" : "source clear of the matches left",
                static_cast<double>(rounds[rule]) / groups);
    for (auto h : histogram[rule]) std::printf(" %.1f%%", 100.0 * h / groups);
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t kib = 16 * 1024;
  int level = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--mib") kib = std::stoul(argv[i + 1]) * 1024;
    else if (a == "--kib") kib = std::stoul(argv[i + 1]);
    else if (a == "--level") level = std::stoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: zarrkit_zstd_deps [--mib N | --kib N] [--level L]\n");
      return 2;
    }
  }
  std::vector<float> data(kib * 1024 / 4);
  zarrkit::bench::fill_family_n(data, 1);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  const std::size_t size = data.size() * sizeof(float);
  std::vector<ZSTD_Sequence> sequences(ZSTD_sequenceBound(size));
  const std::size_t count = ZSTD_generateSequences(cctx, sequences.data(), sequences.size(), data.data(), size);
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(count)) {
    std::fprintf(stderr, "ZSTD_generateSequences: %s\n", ZSTD_getErrorName(count));
    return 1;
  }
  // A block ends at a delimiter (no match, no offset). need: block b, at its byte `at`,
  // reads frame bytes before `end` that lie in earlier blocks.
  struct Need {
    std::size_t block;
    std::uint64_t at, end;
  };
  std::vector<std::uint64_t> starts{0};
  std::vector<Need> needs;
  std::vector<std::uint64_t> offsets;
  std::uint64_t pos = 0, same = 0, previous = 0, older = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const ZSTD_Sequence& s = sequences[i];
    pos += s.litLength;
    if (s.matchLength == 0 && s.offset == 0) {
      starts.push_back(pos);
      continue;
    }
    const std::size_t block = starts.size() - 1;
    const std::uint64_t source = pos - s.offset, block_start = starts.back();
    offsets.push_back(s.offset);
    if (source >= block_start) {
      ++same;
    } else {
      needs.push_back({block, pos - block_start, std::min<std::uint64_t>(source + s.matchLength, block_start)});
      (block > 0 && source >= starts[block - 1] ? previous : older) += 1;
    }
    pos += s.matchLength;
  }
  if (starts.back() == pos) starts.pop_back();  // the last delimiter ends the frame
  std::sort(offsets.begin(), offsets.end());
  const std::size_t blocks = starts.size();
  std::printf("family N, %zu KiB, level %d: %zu blocks, %zu sequences\n", kib, level, blocks, count - blocks);
  const double matches = static_cast<double>(same + previous + older);
  std::printf("matches reading their own block %.1f%%, the block before %.1f%%, older blocks %.1f%%\n",
              100.0 * same / matches, 100.0 * previous / matches, 100.0 * older / matches);
  std::printf("offsets: p10 %llu, median %llu, p90 %llu bytes\n",
              static_cast<unsigned long long>(offsets[offsets.size() / 10]),
              static_cast<unsigned long long>(offsets[offsets.size() / 2]),
              static_cast<unsigned long long>(offsets[offsets.size() * 9 / 10]));
  // Block k starts writing at delay[k]: late enough that every byte it reads from earlier
  // blocks is written when it gets there.
  std::vector<double> delay(blocks, 0.0);
  auto written_at = [&](std::uint64_t end) {  // when frame bytes [0, end) are all written
    const std::size_t k = std::upper_bound(starts.begin(), starts.end(), end - 1) - starts.begin() - 1;
    return delay[k] + static_cast<double>(end - starts[k]);
  };
  std::size_t next = 0;
  double frame_time = 0;
  for (std::size_t k = 0; k < blocks; ++k) {
    for (; next < needs.size() && needs[next].block == k; ++next) {
      delay[k] = std::max(delay[k], written_at(needs[next].end) - static_cast<double>(needs[next].at));
    }
    const std::uint64_t end = k + 1 < blocks ? starts[k + 1] : pos;
    frame_time = std::max(frame_time, delay[k] + static_cast<double>(end - starts[k]));
  }
  std::printf("blocks waiting for the bytes they read: the frame takes %.2f of the time of one block after "
              "another (parallelism %.2f of %zu blocks)\n",
              frame_time / static_cast<double>(pos), static_cast<double>(pos) / frame_time, blocks);
  for (std::size_t group : {32, 64, 128}) report_rounds(sequences.data(), count, group);
  report_traces(sequences.data(), count, starts, false);
  report_traces(sequences.data(), count, starts, true);
  return 0;
}
