// Test frames for the zstd decoder of the GPU path, made with libzstd: the differential set
// the host tests, the fuzz target and the GPU tests share (data of several kinds at every
// level, checksums, content sizes, windows from 1 KiB, long-distance matching, block and
// window boundaries, empty and 1-byte inputs, concatenated and skippable frames), and
// frames built from chosen sequences (repeat offsets, overlapping matches, offsets that
// reach the frame's start).
#pragma once

#ifndef ZSTD_STATIC_LINKING_ONLY
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_compressSequences, block sizes, literal modes
#endif
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace zarrkit::gpu::zstd::testing {

using Bytes = std::vector<std::uint8_t>;

// ---- Data ----------------------------------------------------------------------------------

// Float32 values of a smooth field plus noise rounded to 1/64 (BENCHMARKS.md's family N).
inline Bytes family_n(std::size_t bytes, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.05f);
  std::vector<float> v((bytes + 3) / 4);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double x = static_cast<double>(i % 256) / 256.0, y = static_cast<double>(i / 256) / 256.0;
    v[i] = static_cast<float>(std::round((std::sin(6.0 * x) * std::cos(3.0 * y) * 10.0 + noise(rng)) * 64.0) / 64.0);
  }
  Bytes out(bytes);
  if (bytes > 0) std::memcpy(out.data(), v.data(), bytes);
  return out;
}

// Words from a small vocabulary with spaces and line breaks.
inline Bytes text(std::size_t bytes, std::uint32_t seed) {
  static const char* const kWords[] = {"zarr", "chunk", "shard", "array", "codec", "zstd", "the", "of", "and",
                                       "a", "decode", "block", "frame", "offset", "literal", "match", "window"};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, std::size(kWords) - 1);
  Bytes out;
  while (out.size() < bytes) {
    const char* w = kWords[pick(rng)];
    out.insert(out.end(), w, w + std::strlen(w));
    out.push_back(rng() % 11 == 0 ? '\n' : ' ');
  }
  out.resize(bytes);
  return out;
}

inline Bytes random_bytes(std::size_t bytes, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(bytes);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

// Runs of a few values, some very long (RLE blocks, RLE literals, long overlapping matches).
inline Bytes runs(std::size_t bytes, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out;
  while (out.size() < bytes) {
    const std::size_t n = rng() % 4 == 0 ? 1 + rng() % 300000 : 1 + rng() % 40;
    out.insert(out.end(), std::min(n, bytes - out.size()), static_cast<std::uint8_t>(rng() % 3));
  }
  return out;
}

// `period` random bytes repeated: every match is `period` (or a multiple) back.
inline Bytes repeated(std::size_t bytes, std::size_t period, std::uint32_t seed) {
  const Bytes unit = random_bytes(period, seed);
  Bytes out(bytes);
  for (std::size_t i = 0; i < bytes; ++i) out[i] = unit[i % period];
  return out;
}

// ---- Compression ---------------------------------------------------------------------------

struct Settings {
  int level = 3;
  bool checksum = false;
  bool content_size = true;  // false: a streaming frame without Frame_Content_Size
  int window_log = 0;        // 0: the level's
  bool long_distance = false;
  int target_block = 0;      // ZSTD_c_targetCBlockSize (0: none)
  int literals = 0;          // ZSTD_c_literalCompressionMode (ZSTD_ps_auto, _enable, _disable)
  bool single_block_flush = false;  // streaming: flush every 1000 bytes (many small blocks)
};

inline void zstd_ok(std::size_t rc, const char* what) {
  if (ZSTD_isError(rc)) throw std::runtime_error(std::string(what) + ": " + ZSTD_getErrorName(rc));
}

inline Bytes compress(const Bytes& data, const Settings& s) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  if (c == nullptr) throw std::runtime_error("ZSTD_createCCtx");
  Bytes out;
  try {
    zstd_ok(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, s.level), "level");
    zstd_ok(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, s.checksum ? 1 : 0), "checksum");
    zstd_ok(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, s.content_size ? 1 : 0), "content size");
    if (s.window_log) zstd_ok(ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, s.window_log), "window");
    if (s.long_distance) zstd_ok(ZSTD_CCtx_setParameter(c, ZSTD_c_enableLongDistanceMatching, 1), "ldm");
    if (s.target_block) zstd_ok(ZSTD_CCtx_setParameter(c, ZSTD_c_targetCBlockSize, s.target_block), "block size");
    if (s.literals) zstd_ok(ZSTD_CCtx_setParameter(c, ZSTD_c_literalCompressionMode, s.literals), "literals");
    out.resize(ZSTD_compressBound(data.size()) + 1024);
    if (s.content_size && !s.single_block_flush) {
      const std::size_t n = ZSTD_compress2(c, out.data(), out.size(), data.data(), data.size());
      zstd_ok(n, "ZSTD_compress2");
      out.resize(n);
    } else {
      // Streaming, the size not pledged: no content size, and the window as asked.
      ZSTD_outBuffer o{out.data(), out.size(), 0};
      std::size_t at = 0;
      const std::size_t piece = s.single_block_flush ? 1000 : data.size() + 1;
      do {
        const std::size_t n = std::min(piece, data.size() - at);
        ZSTD_inBuffer in{data.data() + at, n, 0};
        const bool end = at + n == data.size();
        std::size_t rc;
        do {
          rc = ZSTD_compressStream2(c, &o, &in, end ? ZSTD_e_end : ZSTD_e_flush);
          zstd_ok(rc, "ZSTD_compressStream2");
        } while (rc != 0 || in.pos < in.size);
        at += n;
      } while (at < data.size());
      out.resize(o.pos);
    }
  } catch (...) {
    ZSTD_freeCCtx(c);
    throw;
  }
  ZSTD_freeCCtx(c);
  return out;
}

// A skippable frame holding n bytes.
inline Bytes skippable(std::size_t n, std::uint32_t variant, std::uint32_t seed) {
  Bytes out(8);
  const std::uint32_t magic = 0x184D2A50u | (variant & 15);
  const auto size = static_cast<std::uint32_t>(n);
  for (int k = 0; k < 4; ++k) {
    out[k] = static_cast<std::uint8_t>(magic >> (8 * k));
    out[4 + k] = static_cast<std::uint8_t>(size >> (8 * k));
  }
  const Bytes body = random_bytes(n, seed);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

// ---- Frames from chosen sequences ----------------------------------------------------------

struct Step {
  std::uint32_t literals;
  std::uint32_t offset;  // 0: no match (trailing literals)
  std::uint32_t match;
};

// The data the steps make from random literals, and a frame of exactly those sequences.
// `alphabet`: how many distinct literal bytes (1: RLE literals).
inline void frame_from_steps(const std::vector<Step>& steps, std::uint32_t seed, bool checksum, Bytes& data,
                             Bytes& frame, std::uint32_t alphabet = 7) {
  std::mt19937 rng(seed);
  data.clear();
  std::vector<ZSTD_Sequence> seqs;
  std::uint32_t pending = 0;  // literals of steps without a match go with the next match
  for (const Step& s : steps) {
    for (std::uint32_t i = 0; i < s.literals; ++i) data.push_back(static_cast<std::uint8_t>(100 + rng() % alphabet));
    pending += s.literals;
    if (s.match == 0) continue;
    if (s.offset == 0 || s.offset > data.size()) throw std::runtime_error("a step's offset reaches before the data");
    const std::size_t from = data.size() - s.offset;
    for (std::uint32_t i = 0; i < s.match; ++i) data.push_back(data[from + i]);
    seqs.push_back({s.offset, pending, s.match, 0});
    pending = 0;
  }
  ZSTD_CCtx* c = ZSTD_createCCtx();
  frame.resize(ZSTD_compressBound(data.size()) + 1024);
  try {
    zstd_ok(ZSTD_CCtx_setParameter(c, ZSTD_c_blockDelimiters, ZSTD_sf_noBlockDelimiters), "delimiters");
    zstd_ok(ZSTD_CCtx_setParameter(c, ZSTD_c_validateSequences, 1), "validate");
    zstd_ok(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum ? 1 : 0), "checksum");
    zstd_ok(ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, 24), "window");
    zstd_ok(ZSTD_CCtx_setParameter(c, ZSTD_c_minMatch, 3), "minimum match");
    const std::size_t n =
        ZSTD_compressSequences(c, frame.data(), frame.size(), seqs.data(), seqs.size(), data.data(), data.size());
    zstd_ok(n, "ZSTD_compressSequences");
    frame.resize(n);
  } catch (...) {
    ZSTD_freeCCtx(c);
    throw;
  }
  ZSTD_freeCCtx(c);
}

// ---- The differential set ------------------------------------------------------------------

struct Frame {
  std::string name;
  Bytes bytes;     // the zstd data
  Bytes original;  // what it decodes to
};

inline void add(std::vector<Frame>& out, std::string name, const Bytes& data, const Settings& s) {
  out.push_back({std::move(name), compress(data, s), data});
}

// `quick`: a smaller set (the sanitizer and device runs).
inline std::vector<Frame> standard_frames(bool quick) {
  std::vector<Frame> out;
  const std::size_t n = quick ? 40000 : 300000;
  const Bytes field = family_n(n, 1), words = text(n / 2, 2);
  // Every level, with and without checksum and content size.
  for (int level = -7; level <= 22; ++level) {
    if (quick && level % 4 != 0 && level != 1 && level != 22) continue;
    Settings s;
    s.level = level;
    s.checksum = level % 2 == 0;
    s.content_size = level % 3 != 0;
    add(out, "family N level " + std::to_string(level), field, s);
    s.checksum = !s.checksum;
    add(out, "text level " + std::to_string(level), words, s);
  }
  for (int level : {-131072, -1000, -50}) {
    Settings s;
    s.level = level;
    add(out, "text level " + std::to_string(level), words, s);
  }
  // Windows from 1 KiB: matches at the window's distance, frames without content size.
  for (int log = 10; log <= (quick ? 17 : 23); ++log) {
    Settings s;
    s.level = log <= 17 ? 19 : 3;
    s.window_log = log;
    s.content_size = false;
    s.checksum = log % 2 == 1;
    const std::size_t period = std::size_t{1} << log;
    add(out, "window 2^" + std::to_string(log) + " period = window", repeated(std::max(n, 3 * period), period, 3), s);
    add(out, "window 2^" + std::to_string(log) + " period = window - 1",
        repeated(std::max(n, 3 * period), period - 1, 4), s);
  }
  // Long-distance matching: repeats several MiB back.
  {
    Settings s;
    s.level = 5;
    s.long_distance = true;
    s.window_log = 24;
    s.checksum = true;
    const Bytes piece = random_bytes(quick ? 200000 : 1500000, 5);
    Bytes data = piece;
    const Bytes gap = family_n(quick ? 300000 : 3000000, 6);
    data.insert(data.end(), gap.begin(), gap.end());
    data.insert(data.end(), piece.begin(), piece.end());
    add(out, "long-distance matching", data, s);
  }
  // Block boundaries: sizes around 128 KiB, small blocks, raw and RLE blocks.
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{131071},
                           std::size_t{131072}, std::size_t{131073}, std::size_t{262143}, std::size_t{262145}}) {
    if (quick && size > 131073) continue;
    Settings s;
    s.checksum = size % 2 == 1;
    add(out, "family N " + std::to_string(size) + " bytes", family_n(size, 7), s);
    add(out, "random " + std::to_string(size) + " bytes", random_bytes(size, 8), s);
    add(out, "runs " + std::to_string(size) + " bytes", runs(size, 9), s);
    s.content_size = false;
    add(out, "text " + std::to_string(size) + " bytes, streaming", text(size, 10), s);
  }
  {
    Settings s;
    add(out, "zeros (RLE blocks)", Bytes(300000, 0), s);
    s.level = 3;
    s.target_block = 1340;
    add(out, "small target blocks", field, s);
    s.target_block = 0;
    s.single_block_flush = true;
    s.checksum = true;
    add(out, "flushed every 1000 bytes", words, s);
    s.single_block_flush = false;
    s.literals = ZSTD_ps_disable;
    add(out, "raw literals", words, s);
    s.literals = ZSTD_ps_enable;
    s.level = -5;
    add(out, "Huffman literals at a negative level", field, s);
    s.literals = 0;
    s.level = 19;
    add(out, "runs level 19", runs(n * 2, 11), s);
    add(out, "random level 19", random_bytes(n / 2, 12), s);
  }
  // Concatenated frames, with skippable frames between and around them.
  {
    Frame f{"concatenated and skippable frames", {}, {}};
    for (int k = 0; k < 5; ++k) {
      Settings s;
      s.level = k * 5 - 3;
      s.checksum = k % 2 == 0;
      s.content_size = k != 2;
      const Bytes part = k == 3 ? Bytes{} : k % 2 ? text(20000 + 999 * k, 20 + k) : family_n(30000 + 17 * k, 20 + k);
      const Bytes z = compress(part, s);
      const Bytes skip = skippable(k * 37, k, 30 + k);
      f.bytes.insert(f.bytes.end(), skip.begin(), skip.end());
      f.bytes.insert(f.bytes.end(), z.begin(), z.end());
      f.original.insert(f.original.end(), part.begin(), part.end());
    }
    const Bytes tail = skippable(5, 15, 40);
    f.bytes.insert(f.bytes.end(), tail.begin(), tail.end());
    out.push_back(std::move(f));
    out.push_back({"skippable frame only", skippable(10, 3, 41), {}});
  }
  // Chosen sequences.
  {
    std::vector<std::vector<Step>> cases;
    // Overlapping matches (offsets 1..7, long), and a match that reaches the frame's start.
    cases.push_back({{1, 1, 5000}, {3, 3, 100000}, {2, 7, 40000}, {0, 4, 3}, {5, 2, 70000}, {0, 30, 3}, {10, 0, 0}});
    cases.push_back({{64, 64, 1000}, {1, 1065, 200}, {0, 1265, 50}, {7, 0, 0}});
    // Repeat offsets: the same three offsets over and over, with and without literals, and
    // "most recent minus one" (no literals, the offset one less than the last).
    {
      std::vector<Step> s{{100, 0, 0}};
      s.front() = {100, 50, 4};
      const std::uint32_t offs[] = {50, 17, 33, 17, 50, 16, 15, 33, 14, 1, 2, 1};
      for (int i = 0; i < 3000; ++i) {
        const std::uint32_t o = offs[i % std::size(offs)];
        s.push_back({static_cast<std::uint32_t>(i % 3 == 0 ? 0 : i % 5), o, static_cast<std::uint32_t>(3 + i % 9)});
      }
      s.push_back({3, 0, 0});
      cases.push_back(s);
    }
    // More than 0x7F00 sequences in a block (3-byte sequence count), and literals only.
    {
      std::vector<Step> s{{16, 0, 0}};
      s.front() = {16, 3, 3};
      for (int i = 0; i < 40000; ++i) s.push_back({0, static_cast<std::uint32_t>(1 + i % 16), 3});
      cases.push_back(s);
      cases.push_back({{5000, 0, 0}});
    }
    // Long literal runs and long matches across blocks.
    cases.push_back({{70000, 65536, 120000}, {131000, 131000, 60000}, {0, 1, 90000}, {1, 0, 0}});
    // One literal value: RLE literals sections.
    cases.push_back({{300, 0, 0}, {300, 100, 50}, {60, 7, 20}, {2, 0, 0}});
    int k = 0;
    for (const auto& steps : cases) {
      Frame f;
      f.name = "chosen sequences " + std::to_string(k);
      frame_from_steps(steps, 50 + k, k % 2 == 0, f.original, f.bytes, k + 1 == static_cast<int>(cases.size()) ? 1 : 7);
      out.push_back(std::move(f));
      ++k;
    }
  }
  return out;
}

}  // namespace zarrkit::gpu::zstd::testing
