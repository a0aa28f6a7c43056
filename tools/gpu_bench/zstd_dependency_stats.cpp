// How much the blocks of one zstd frame can execute side by side: compresses family N
// (bench_data.h) with libzstd, takes the sequences libzstd chose (ZSTD_generateSequences),
// and counts the matches whose source lies in an earlier block. Then it models the device's
// execution stage (a warp per block, each writing one byte per unit of time and waiting
// for the earlier blocks' bytes its matches read): the frame's time against one block
// after another gives the parallelism that waiting allows.
//
//   zarrkit_zstd_deps [--mib N] [--level L]
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_data.h"

int main(int argc, char** argv) {
  std::size_t mib = 16;
  int level = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--mib") mib = std::stoul(argv[i + 1]);
    else if (a == "--level") level = std::stoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: zarrkit_zstd_deps [--mib N] [--level L]\n");
      return 2;
    }
  }
  std::vector<float> data(mib * 1024 * 1024 / 4);
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
  std::printf("family N, %zu MiB, level %d: %zu blocks, %zu sequences\n", mib, level, blocks, count - blocks);
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
  return 0;
}
