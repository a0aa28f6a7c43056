// How much parallelism one large deflate stream allows (issue: "for few large streams, find
// what parallelism the format allows and measure it"). Compresses family N (bench_data.h)
// with zlib, parses the stream into blocks and symbols, then models W decoders per stream:
//
//   1. Where to start. Decoder k starts at bit k/W of the stream and looks for the next block
//      start by trying every bit position: a candidate must parse as a dynamic block header
//      whose codes are valid (zlib's rules), decode to its end-of-block symbol with valid
//      symbols and distances of at most 32 KiB, and be followed by a valid block header (or
//      end the stream). Counted: the bit positions tried, the candidates that passed the
//      header check but not the rest, and whether the one accepted is a true block start.
//   2. What it cannot know. From its start a decoder lacks the 32 KiB before it: a match
//      byte whose source lies before the start, or is such a byte itself, stays unresolved
//      until the decoder before it has finished (a second pass replaces them). Counted: the
//      unresolved bytes of each part, and of its last 32 KiB (which the next part needs).
//   3. The balance. A decoder's work is the symbols of its part (one warp's pace is set by
//      its symbol decode) plus the symbols it decoded checking candidates; the stream takes
//      as long as its slowest part: the ceiling on the speed-up, before the second pass.
//
//   zarrkit_deflate_deps [--mib N] [--level L] [--parts 8,32,128]
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "bench_data.h"
#include "gpu/deflate/deflate_huffman.cuh"

namespace {

using namespace zarrkit::gpu;

// The stream's bits, least significant first; reads past the end give zeros and set `over`.
struct Bits {
  const std::uint8_t* data;
  std::uint64_t size_bits;
  std::uint64_t pos = 0;
  bool over = false;

  std::uint32_t get(unsigned n) {
    std::uint32_t v = 0;
    for (unsigned i = 0; i < n; ++i, ++pos) {
      if (pos >= size_bits) {
        over = true;
        continue;
      }
      v |= static_cast<std::uint32_t>((data[pos >> 3] >> (pos & 7)) & 1u) << i;
    }
    return v;
  }
};

using deflate::DistCode;
using deflate::LitLenCode;

// The next symbol through the canonical code (the engine's canonical walk); -1 when no code
// matches.
template <typename Code>
int decode(Bits& in, const Code& c) {
  const std::uint64_t at = in.pos;
  const bool over = in.over;  // the look-ahead may pass the end where the code does not
  const std::uint32_t bits = in.get(deflate::kMaxCodeBits);
  const std::uint32_t found = deflate::canonical_lookup(c, bits, deflate::kMaxCodeBits);
  if (found == 0) return -1;
  in.pos = at + (found & 15u);
  in.over = over || in.pos > in.size_bits;
  return static_cast<int>(found >> 4);
}

// One symbol of the output: a literal (distance 0, value the byte) or a match.
struct Token {
  std::uint32_t value;
  std::uint32_t distance;
};

// The codes of a block.
struct Codes {
  LitLenCode literals;
  DistCode distances;
};

void fixed_codes(Codes& c) {
  std::uint8_t l[deflate::kLitLenSymbols];
  for (int s = 0; s < 288; ++s) l[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
  deflate::prepare_code(l, deflate::kLitLenSymbols, c.literals, false);
  std::uint8_t d[deflate::kMaxDistCodes];
  std::fill(std::begin(d), std::end(d), 5);
  deflate::prepare_code(d, deflate::kMaxDistCodes, c.distances, false);
}

// A dynamic block's header (after its 3 header bits): its codes, with the engine's (zlib's)
// checks.
bool read_dynamic(Bits& in, Codes& c) {
  const int nlen = static_cast<int>(in.get(5)) + 257, ndist = static_cast<int>(in.get(5)) + 1;
  const int ncode = static_cast<int>(in.get(4)) + 4;
  if (nlen > static_cast<int>(deflate::kMaxLitLenCodes) || ndist > static_cast<int>(deflate::kMaxDistCodes)) {
    return false;
  }
  std::uint8_t lengths[320] = {};
  for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(ncode); ++i) {
    lengths[deflate::code_length_order(i)] = static_cast<std::uint8_t>(in.get(3));
  }
  deflate::CodeLengthCode lencode;
  if (deflate::prepare_code(lengths, deflate::kCodeLengthSymbols, lencode, true) != deflate::kOk) return false;
  int i = 0;
  while (i < nlen + ndist) {
    const int s = decode(in, lencode);
    if (s < 0 || in.over) return false;
    if (s < 16) {
      lengths[i++] = static_cast<std::uint8_t>(s);
      continue;
    }
    std::uint8_t v = 0;
    int repeat = 0;
    if (s == 16) {
      if (i == 0) return false;
      v = lengths[i - 1];
      repeat = 3 + static_cast<int>(in.get(2));
    } else if (s == 17) {
      repeat = 3 + static_cast<int>(in.get(3));
    } else {
      repeat = 11 + static_cast<int>(in.get(7));
    }
    if (i + repeat > nlen + ndist) return false;
    while (repeat-- > 0) lengths[i++] = v;
  }
  if (lengths[deflate::kEndOfBlock] == 0) return false;
  if (deflate::prepare_code(lengths, static_cast<std::uint32_t>(nlen), c.literals, false) != deflate::kOk) return false;
  return deflate::prepare_code(lengths + nlen, static_cast<std::uint32_t>(ndist), c.distances, false) == deflate::kOk;
}

// The symbols of a block up to its end-of-block into `tokens` (when given). `window`: the
// largest distance accepted. False on an invalid symbol or distance, or past `max_symbols`.
bool read_symbols(Bits& in, const Codes& c, std::uint64_t window, std::vector<Token>* tokens,
                  std::uint64_t max_symbols, std::uint64_t* symbols) {
  for (std::uint64_t n = 0; n < max_symbols; ++n) {
    const int s = decode(in, c.literals);
    if (s < 0 || in.over) return false;
    ++*symbols;
    if (s < 256) {
      if (tokens) tokens->push_back({static_cast<std::uint32_t>(s), 0});
      continue;
    }
    if (s == 256) return true;
    if (s > 285) return false;
    std::uint32_t base = 0, extra = 0;
    deflate::length_code(static_cast<std::uint32_t>(s), &base, &extra);
    const std::uint32_t length = base + in.get(extra);
    const int d = decode(in, c.distances);
    if (d < 0 || d > 29 || in.over) return false;
    deflate::distance_code(static_cast<std::uint32_t>(d), &base, &extra);
    const std::uint32_t distance = base + in.get(extra);
    if (distance > window) return false;
    if (tokens) tokens->push_back({length, distance});
  }
  return false;
}

struct Block {
  std::uint64_t start_bit;
  std::uint64_t first_token;
  std::uint32_t type;
};

// The whole stream, for the truth the model is checked against.
bool parse_stream(const std::vector<std::uint8_t>& z, std::vector<Block>& blocks, std::vector<Token>& tokens) {
  Bits in{z.data(), z.size() * 8};
  for (;;) {
    const std::uint64_t start = in.pos;
    const std::uint32_t final_block = in.get(1), type = in.get(2);
    blocks.push_back({start, tokens.size(), type});
    if (type == 0) {
      in.pos = (in.pos + 7) & ~std::uint64_t{7};
      const std::uint32_t len = in.get(16), nlen = in.get(16);
      if ((len ^ 0xFFFFu) != nlen) return false;
      for (std::uint32_t i = 0; i < len; ++i) tokens.push_back({in.get(8), 0});
    } else if (type == 3) {
      return false;
    } else {
      Codes c;
      if (type == 1) fixed_codes(c);
      else if (!read_dynamic(in, c)) return false;
      std::uint64_t symbols = 0;
      if (!read_symbols(in, c, deflate::kWindow, &tokens, ~std::uint64_t{0}, &symbols)) return false;
    }
    if (in.over) return false;
    if (final_block) return true;
  }
}

// Whether a block can start at bit p (the checks of the model's step 1). `header_ok` says
// whether it passed the header check alone; `symbols` counts what the check decoded,
// `header_bits` the bits the header check read.
bool plausible_start(const std::vector<std::uint8_t>& z, std::uint64_t p, bool* header_ok, std::uint64_t* symbols,
                     std::uint64_t* header_bits) {
  Bits in{z.data(), z.size() * 8, p};
  *header_ok = false;
  const std::uint32_t final_block = in.get(1), type = in.get(2);
  if (type != 2) {
    *header_bits = 3;
    return false;
  }
  Codes c;
  const bool header = read_dynamic(in, c) && !in.over;
  *header_bits = in.pos - p;
  if (!header) return false;
  *header_ok = true;
  if (!read_symbols(in, c, deflate::kWindow, nullptr, 1u << 22, symbols)) return false;
  if (final_block) return true;
  in.get(1);  // the next block's BFINAL
  const std::uint32_t next_type = in.get(2);
  if (in.over || next_type == 3) return false;
  if (next_type == 2) return read_dynamic(in, c) && !in.over;
  if (next_type == 0) {
    in.pos = (in.pos + 7) & ~std::uint64_t{7};
    const std::uint32_t len = in.get(16), nlen = in.get(16);
    return !in.over && (len ^ 0xFFFFu) == nlen;
  }
  return true;
}

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> v;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) v.push_back(std::stoi(item));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t mib = 16;
  int level = 1;
  std::vector<int> part_counts{8, 32, 128};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--mib") mib = std::stoul(argv[i + 1]);
    else if (a == "--level") level = std::stoi(argv[i + 1]);
    else if (a == "--parts") part_counts = parse_list(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: zarrkit_deflate_deps [--mib N] [--level L] [--parts 8,32,128]\n");
      return 2;
    }
  }
  std::vector<float> data(mib * 1024 * 1024 / 4);
  zarrkit::bench::fill_family_n(data, 1);
  const auto* raw = reinterpret_cast<const std::uint8_t*>(data.data());
  const std::size_t size = data.size() * sizeof(float);
  // Raw deflate, as inside a zlib or gzip stream.
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 1;
  std::vector<std::uint8_t> z(deflateBound(&zs, size));
  zs.next_in = const_cast<Bytef*>(raw);
  zs.avail_in = static_cast<uInt>(size);
  zs.next_out = z.data();
  zs.avail_out = static_cast<uInt>(z.size());
  if (::deflate(&zs, Z_FINISH) != Z_STREAM_END) return 1;
  z.resize(zs.total_out);
  deflateEnd(&zs);

  std::vector<Block> blocks;
  std::vector<Token> tokens;
  if (!parse_stream(z, blocks, tokens)) {
    std::fprintf(stderr, "the stream did not parse\n");
    return 1;
  }
  // Every token's output position, and a check of the parse against the data.
  std::vector<std::uint64_t> token_pos(tokens.size() + 1, 0);
  {
    std::vector<std::uint8_t> out;
    out.reserve(size);
    for (std::size_t t = 0; t < tokens.size(); ++t) {
      token_pos[t] = out.size();
      if (tokens[t].distance == 0) {
        out.push_back(static_cast<std::uint8_t>(tokens[t].value));
      } else {
        for (std::uint32_t k = 0; k < tokens[t].value; ++k) out.push_back(out[out.size() - tokens[t].distance]);
      }
    }
    token_pos[tokens.size()] = out.size();
    if (out.size() != size || !std::equal(out.begin(), out.end(), raw)) {
      std::fprintf(stderr, "the parse does not give the data back\n");
      return 1;
    }
  }
  std::size_t types[4] = {};
  for (const Block& b : blocks) ++types[b.type];
  std::printf("family N, %zu MiB, zlib level %d: %zu bytes compressed (ratio %.2f), %zu blocks (%zu stored, %zu fixed, "
              "%zu dynamic), %zu symbols, %.1f KiB of output per block\n",
              mib, level, z.size(), static_cast<double>(size) / static_cast<double>(z.size()), blocks.size(), types[0],
              types[1], types[2], tokens.size(), static_cast<double>(size) / 1024.0 / static_cast<double>(blocks.size()));

  const std::uint64_t total_bits = z.size() * 8;
  for (const int parts : part_counts) {
    // 1. Each decoder's start: the first plausible block start at or after its share. A
    // part runs from its decoder's start to the next decoder's; the symbols its decoder
    // decoded checking candidates it then rejected are extra work.
    struct Part {
      std::size_t block;
      std::uint64_t rejected_symbols;
    };
    std::vector<Part> part_starts{{0, 0}};
    std::uint64_t tried = 0, header_only = 0, false_starts = 0, most_tried = 0, scan_bits = 0;
    for (int k = 1; k < parts; ++k) {
      std::uint64_t p = total_bits * static_cast<std::uint64_t>(k) / static_cast<std::uint64_t>(parts);
      const std::uint64_t from = p;
      std::uint64_t rejected = 0;
      bool found = false;
      for (; p < total_bits; ++p) {
        bool header_ok = false;
        std::uint64_t symbols = 0, bits = 0;
        const bool plausible = plausible_start(z, p, &header_ok, &symbols, &bits);
        if (plausible) {
          found = true;
          break;
        }
        rejected += symbols;
        scan_bits += bits;
        header_only += header_ok ? 1 : 0;
      }
      tried += p - from + 1;
      most_tried = std::max(most_tried, p - from + 1);
      if (!found) continue;  // the stream's end: this decoder has no part
      const auto b = std::lower_bound(blocks.begin(), blocks.end(), p,
                                      [](const Block& x, std::uint64_t bit) { return x.start_bit < bit; });
      if (b == blocks.end() || b->start_bit != p) {
        ++false_starts;
        continue;
      }
      const std::size_t index = static_cast<std::size_t>(b - blocks.begin());
      if (index > part_starts.back().block) part_starts.push_back({index, rejected});
    }
    // 2 and 3. Each part's unresolved bytes, and its work.
    std::vector<std::uint8_t> unresolved(size, 0);
    std::uint64_t unresolved_total = 0, unresolved_tail = 0, most_symbols = 0, most_work = 0;
    double most_share = 0;
    for (std::size_t k = 0; k < part_starts.size(); ++k) {
      const std::size_t first = blocks[part_starts[k].block].first_token;
      const std::size_t last = k + 1 < part_starts.size() ? blocks[part_starts[k + 1].block].first_token : tokens.size();
      const std::uint64_t begin = token_pos[first], end = token_pos[last];
      std::uint64_t part_unresolved = 0, tail = 0;
      for (std::size_t t = first; t < last; ++t) {
        const std::uint64_t at = token_pos[t];
        if (tokens[t].distance == 0) continue;
        for (std::uint32_t j = 0; j < tokens[t].value; ++j) {
          const std::uint64_t source = at + j - tokens[t].distance;
          const bool u = source < begin || unresolved[source] != 0;
          unresolved[at + j] = u ? 1 : 0;
          part_unresolved += u ? 1 : 0;
          tail += u && at + j + deflate::kWindow >= end ? 1 : 0;
        }
      }
      unresolved_total += part_unresolved;
      unresolved_tail += tail;
      most_share = std::max(most_share, static_cast<double>(part_unresolved) / static_cast<double>(end - begin));
      most_symbols = std::max<std::uint64_t>(most_symbols, last - first);
      most_work = std::max<std::uint64_t>(most_work, last - first + part_starts[k].rejected_symbols);
    }
    std::printf("%d decoders: %zu parts (false starts %llu); bit positions tried per decoder %.0f (most %llu), "
                "%.1f bits read per position tried, header checks passed but rejected later %.2f per decoder; unresolved bytes %.2f%% of the output "
                "(most %.2f%% of a part), %.2f%% in the parts' last 32 KiB; slowest part %llu of %zu symbols: "
                "%.1fx one decoder, %.1fx with the rejected candidates' symbols\n",
                parts, part_starts.size(), static_cast<unsigned long long>(false_starts),
                static_cast<double>(tried) / std::max(1, parts - 1), static_cast<unsigned long long>(most_tried),
                static_cast<double>(scan_bits) / static_cast<double>(std::max<std::uint64_t>(1, tried)),
                static_cast<double>(header_only) / std::max(1, parts - 1),
                100.0 * static_cast<double>(unresolved_total) / static_cast<double>(size), 100.0 * most_share,
                100.0 * static_cast<double>(unresolved_tail) / static_cast<double>(size),
                static_cast<unsigned long long>(most_symbols), tokens.size(),
                static_cast<double>(tokens.size()) / static_cast<double>(most_symbols),
                static_cast<double>(tokens.size()) / static_cast<double>(most_work));
  }
  return 0;
}
