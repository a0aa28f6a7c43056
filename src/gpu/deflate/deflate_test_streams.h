// The differential set of the deflate decoder's tests (host, device, fuzz seeds): streams
// made by zlib and libdeflate at every level, in raw, zlib and gzip framing, with gzip's
// optional header fields and several members; and streams written bit by bit here for what
// the compressors never make (a match 32 KiB back, at the window's edge; blocks of every
// kind in one stream; chosen code lengths). Also zlib's verdict on any stream, framed as
// the codecs' host halves read it (deflate_support.h), for the mutation and fuzz tests.
#pragma once

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gpu/deflate/deflate_common.cuh"

namespace zarrkit::gpu::deflate::testing {

using Bytes = std::vector<std::uint8_t>;

struct Stream {
  std::string name;
  Format format;
  Bytes bytes;
  Bytes original;
};

// ---- Data ----------------------------------------------------------------------------------

inline Bytes text_like(std::size_t n, std::uint64_t seed) {
  static const char* const kWords[] = {"zarr ", "chunk ", "array ", "deflate ", "gzip ", "the ", "of ", "warp ",
                                       "lane ", "\n", "0.125 ", "-3.5e-7 ", "temperature ", "latitude "};
  std::mt19937_64 rng(seed);
  Bytes b;
  while (b.size() < n) {
    const char* w = kWords[rng() % (sizeof kWords / sizeof kWords[0])];
    for (const char* c = w; *c != 0 && b.size() < n; ++c) b.push_back(static_cast<std::uint8_t>(*c));
  }
  return b;
}

inline Bytes random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes b(n);
  for (auto& v : b) v = static_cast<std::uint8_t>(rng());
  return b;
}

inline Bytes float_field(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) {
    b[i] = static_cast<std::uint8_t>(i % 4 == 3 ? 0x42 : (i % 4 == 2 ? (i / 512) & 0xFF : rng() % 16));
  }
  return b;
}

// ---- zlib and libdeflate ------------------------------------------------------------------------

// The bytes zlib's deflate makes of `data` (window_bits: -15 raw, 15 zlib, 31 gzip), with a
// flush every `flush_every` bytes (0: none) and an optional gzip header.
inline Bytes zlib_deflate(const Bytes& data, int level, int window_bits, int strategy = Z_DEFAULT_STRATEGY,
                          std::size_t flush_every = 0, int flush = Z_SYNC_FLUSH, gz_header* header = nullptr) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, window_bits, 8, strategy) != Z_OK) return {};
  if (header != nullptr) deflateSetHeader(&zs, header);
  Bytes out(deflateBound(&zs, data.size()) + 64 + (flush_every ? data.size() / flush_every * 16 + 16 : 0));
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  std::size_t at = 0;
  do {
    const std::size_t step = flush_every ? std::min(flush_every, data.size() - at) : data.size() - at;
    zs.next_in = const_cast<Bytef*>(data.data() + at);
    zs.avail_in = static_cast<uInt>(step);
    at += step;
    const int mode = at == data.size() ? Z_FINISH : flush;
    const int rc = ::deflate(&zs, mode);
    if (rc == Z_STREAM_ERROR) break;
  } while (at < data.size());
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

inline Bytes libdeflate_compress(const Bytes& data, int level, Format format) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(level);
  Bytes out(libdeflate_gzip_compress_bound(c, data.size()) + 64);
  std::size_t n = 0;
  if (format == kRaw) n = libdeflate_deflate_compress(c, data.data(), data.size(), out.data(), out.size());
  if (format == kZlib) n = libdeflate_zlib_compress(c, data.data(), data.size(), out.data(), out.size());
  if (format == kGzip) n = libdeflate_gzip_compress(c, data.data(), data.size(), out.data(), out.size());
  libdeflate_free_compressor(c);
  out.resize(n);
  return out;
}

// ---- Streams written bit by bit -----------------------------------------------------------------

class BitWriter {
 public:
  void bits(std::uint32_t v, std::uint32_t n) {  // least significant first
    for (std::uint32_t k = 0; k < n; ++k) bit((v >> k) & 1u);
  }
  void code(std::uint32_t c, std::uint32_t len) {  // a Huffman code, most significant first
    for (std::uint32_t k = len; k > 0; --k) bit((c >> (k - 1)) & 1u);
  }
  void align() {
    while (used_ != 0) bit(0);
  }
  void byte(std::uint8_t b) { bits(b, 8); }
  Bytes take() {
    align();
    return std::move(out_);
  }

 private:
  void bit(std::uint32_t b) {
    if (used_ == 0) out_.push_back(0);
    out_.back() = static_cast<std::uint8_t>(out_.back() | (b << used_));
    used_ = (used_ + 1) & 7;
  }
  Bytes out_;
  std::uint32_t used_ = 0;
};

// The canonical codes of `lengths` (RFC 1951 3.2.2).
inline std::vector<std::uint32_t> canonical_codes(const std::vector<std::uint8_t>& lengths) {
  std::uint32_t count[16] = {}, next[16] = {};
  for (auto l : lengths) ++count[l];
  count[0] = 0;
  std::uint32_t c = 0;
  for (int b = 1; b < 16; ++b) {
    c = (c + count[b - 1]) << 1;
    next[b] = c;
  }
  std::vector<std::uint32_t> codes(lengths.size());
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    if (lengths[s] != 0) codes[s] = next[lengths[s]]++;
  }
  return codes;
}

// A token for the writers: a literal (distance 0) or a match.
struct Tok {
  std::uint32_t value;
  std::uint32_t distance;
};

inline void length_symbol(std::uint32_t length, std::uint32_t* symbol, std::uint32_t* extra, std::uint32_t* bits) {
  *symbol = 285;
  *extra = 0;
  *bits = 0;
  if (length == 258) return;
  for (std::uint32_t s = 257; s < 285; ++s) {
    std::uint32_t base = 0, e = 0;
    length_code(s, &base, &e);
    if (length >= base && length < base + (1u << e)) {
      *symbol = s;
      *extra = length - base;
      *bits = e;
      return;
    }
  }
}

inline void distance_symbol(std::uint32_t distance, std::uint32_t* symbol, std::uint32_t* extra, std::uint32_t* bits) {
  for (std::uint32_t s = 29;; --s) {
    std::uint32_t base = 0, e = 0;
    distance_code(s, &base, &e);
    if (distance >= base) {
      *symbol = s;
      *extra = distance - base;
      *bits = e;
      return;
    }
  }
}

// Tokens with the codes of `litlen` and `dist` lengths, then end-of-block.
inline void write_tokens(BitWriter& w, const std::vector<Tok>& tokens, const std::vector<std::uint8_t>& litlen,
                         const std::vector<std::uint8_t>& dist) {
  const auto lc = canonical_codes(litlen), dc = canonical_codes(dist);
  for (const Tok& t : tokens) {
    if (t.distance == 0) {
      w.code(lc[t.value], litlen[t.value]);
      continue;
    }
    std::uint32_t s = 0, extra = 0, bits = 0;
    length_symbol(t.value, &s, &extra, &bits);
    w.code(lc[s], litlen[s]);
    w.bits(extra, bits);
    distance_symbol(t.distance, &s, &extra, &bits);
    w.code(dc[s], dist[s]);
    w.bits(extra, bits);
  }
  w.code(lc[256], litlen[256]);
}

inline std::vector<std::uint8_t> fixed_litlen() {
  std::vector<std::uint8_t> l(288);
  for (int s = 0; s < 288; ++s) l[s] = static_cast<std::uint8_t>(s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8);
  return l;
}

inline void write_fixed_block(BitWriter& w, const std::vector<Tok>& tokens, bool last) {
  w.bits(last ? 1 : 0, 1);
  w.bits(1, 2);
  write_tokens(w, tokens, fixed_litlen(), std::vector<std::uint8_t>(32, 5));
}

inline void write_stored_block(BitWriter& w, const Bytes& data, bool last) {
  w.bits(last ? 1 : 0, 1);
  w.bits(0, 2);
  w.align();
  w.bits(static_cast<std::uint32_t>(data.size()), 16);
  w.bits(static_cast<std::uint32_t>(~data.size()) & 0xFFFFu, 16);
  for (auto b : data) w.byte(b);
}

// A dynamic block with these code lengths (written as they are, valid or not): the code
// lengths are sent with a code-length code giving symbols 0-15 four bits each.
inline void write_dynamic_block(BitWriter& w, const std::vector<Tok>& tokens, const std::vector<std::uint8_t>& litlen,
                                const std::vector<std::uint8_t>& dist, bool last,
                                const std::vector<std::uint8_t>* code_length_lengths = nullptr) {
  w.bits(last ? 1 : 0, 1);
  w.bits(2, 2);
  w.bits(static_cast<std::uint32_t>(litlen.size() - 257), 5);
  w.bits(static_cast<std::uint32_t>(dist.size() - 1), 5);
  w.bits(19 - 4, 4);
  std::vector<std::uint8_t> cl(19, 0);
  for (int s = 0; s < 16; ++s) cl[s] = 4;
  if (code_length_lengths != nullptr) cl = *code_length_lengths;
  static const int kOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  for (int k = 0; k < 19; ++k) w.bits(cl[kOrder[k]], 3);
  const auto clc = canonical_codes(cl);
  for (auto l : litlen) w.code(clc[l], cl[l]);
  for (auto l : dist) w.code(clc[l], cl[l]);
  write_tokens(w, tokens, litlen, dist);
}

// Raw deflate in a zlib or gzip frame.
inline Bytes frame(const Bytes& raw, const Bytes& original, Format format) {
  Bytes out;
  if (format == kZlib) {
    out = {0x78, 0x9C};
    out.insert(out.end(), raw.begin(), raw.end());
    const auto a = static_cast<std::uint32_t>(adler32(1, original.data(), static_cast<uInt>(original.size())));
    for (int k = 3; k >= 0; --k) out.push_back(static_cast<std::uint8_t>(a >> (8 * k)));
    return out;
  }
  if (format == kGzip) {
    out = {0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3};
    out.insert(out.end(), raw.begin(), raw.end());
    const auto c = static_cast<std::uint32_t>(crc32(0, original.data(), static_cast<uInt>(original.size())));
    const auto n = static_cast<std::uint32_t>(original.size());
    for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::uint8_t>(c >> (8 * k)));
    for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::uint8_t>(n >> (8 * k)));
    return out;
  }
  return raw;
}

// Applies tokens to make the original bytes.
inline void apply_tokens(Bytes& out, const std::vector<Tok>& tokens) {
  for (const Tok& t : tokens) {
    if (t.distance == 0) {
      out.push_back(static_cast<std::uint8_t>(t.value));
    } else {
      for (std::uint32_t k = 0; k < t.value; ++k) out.push_back(out[out.size() - t.distance]);
    }
  }
}

// ---- zlib's verdict ------------------------------------------------------------------------------

// What zlib decodes `bytes` to, read as the codecs' host halves read `format` (a gzip
// stream: members or zlib streams separated by zero bytes; zlib: one stream, gzip header
// detected too; raw: one raw stream), at most `capacity` bytes; nothing when it refuses.
inline std::optional<Bytes> zlib_reference(Format format, const Bytes& bytes, std::size_t capacity) {
  if (bytes.empty()) return std::nullopt;
  Bytes out(capacity + 1);
  z_stream zs{};
  if (inflateInit2(&zs, format == kRaw ? -15 : 15 + 32) != Z_OK) return std::nullopt;
  zs.next_in = const_cast<Bytef*>(bytes.data());
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  std::optional<Bytes> result;
  for (;;) {
    const int rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_STREAM_END && rc != Z_OK) break;
    if (rc == Z_OK) {
      if (zs.avail_in == 0 || zs.avail_out == 0) break;  // cut short, or over capacity
      continue;
    }
    if (format == kGzip) {
      while (zs.avail_in > 0 && *zs.next_in == 0) {
        ++zs.next_in;
        --zs.avail_in;
      }
      if (zs.avail_in > 0) {
        if (inflateReset(&zs) != Z_OK) break;
        continue;
      }
    }
    if (zs.avail_in != 0) break;
    const std::size_t produced = out.size() - zs.avail_out;  // total_out restarts with each member
    if (produced <= capacity) {
      out.resize(produced);
      result = std::move(out);
    }
    break;
  }
  inflateEnd(&zs);
  return result;
}

// ---- The set ---------------------------------------------------------------------------------

// Every `step`-th stream of a set (the sanitizers' build, where an emulated warp's switches
// between lanes cost the most, takes a part of each set).
inline std::vector<Stream> every(std::vector<Stream> all, std::size_t step) {
  std::vector<Stream> out;
  for (std::size_t i = 0; i < all.size(); i += step) out.push_back(std::move(all[i]));
  return out;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kSanitizerStep = 4;
#else
constexpr std::size_t kSanitizerStep = 1;
#endif

inline const char* format_name(Format f) { return f == kRaw ? "raw" : f == kZlib ? "zlib" : "gzip"; }

inline void add_zlib_made(std::vector<Stream>& out, const std::string& name, const Bytes& data, int level,
                          int strategy = Z_DEFAULT_STRATEGY, std::size_t flush_every = 0, int flush = Z_SYNC_FLUSH) {
  for (Format f : {kRaw, kZlib, kGzip}) {
    const int bits = f == kRaw ? -15 : f == kZlib ? 15 : 31;
    out.push_back({name + ", zlib level " + std::to_string(level) + " " + format_name(f), f,
                   zlib_deflate(data, level, bits, strategy, flush_every, flush), data});
  }
}

// A raw stream written bit by bit, in each framing (raw, zlib, gzip).
inline void add_in_every_frame(std::vector<Stream>& out, const std::string& name, const Bytes& raw,
                               const Bytes& original) {
  for (Format f : {kRaw, kZlib, kGzip}) {
    out.push_back({name + ", " + format_name(f), f, frame(raw, original, f), original});
  }
}

// The differential set; `quick` leaves out the larger inputs (for the sanitizers and the
// device's memcheck runs).
inline std::vector<Stream> standard_streams(bool quick) {
  std::vector<Stream> s;
  const std::size_t big = quick ? 20000 : 150000;
  struct Input {
    std::string name;
    Bytes data;
  };
  std::vector<Input> inputs = {
      {"empty", {}},
      {"1 byte", {0x7A}},
      {"text", text_like(big, 1)},
      {"random", random_bytes(quick ? 5000 : 70000, 2)},
      {"zeros", Bytes(big, 0)},
      {"floats", float_field(big, 3)},
  };
  for (const auto& in : inputs) {
    for (int level = 0; level <= 9; ++level) {
      if (in.data.size() > 100000 && level % 3 != 0 && level != 1) continue;
      add_zlib_made(s, in.name, in.data, level);
    }
    for (int level : {0, 1, 6, 12}) {
      for (Format f : {kRaw, kZlib, kGzip}) {
        s.push_back({in.name + ", libdeflate level " + std::to_string(level) + " " + format_name(f), f,
                     libdeflate_compress(in.data, level, f), in.data});
      }
    }
  }
  const Bytes text = text_like(quick ? 30000 : 200000, 4);
  add_zlib_made(s, "text, fixed blocks only", text, 6, Z_FIXED);
  add_zlib_made(s, "text, Huffman only", text, 6, Z_HUFFMAN_ONLY);
  add_zlib_made(s, "floats, run lengths", float_field(50000, 5), 6, Z_RLE);
  add_zlib_made(s, "text, a sync flush every 1000 bytes (many blocks, empty stored ones)", text, 6,
                Z_DEFAULT_STRATEGY, 1000, Z_SYNC_FLUSH);
  add_zlib_made(s, "text, a full flush every 4099 bytes", text, 9, Z_DEFAULT_STRATEGY, 4099, Z_FULL_FLUSH);
  add_zlib_made(s, "random, block flushes every 300 bytes", random_bytes(20000, 6), 1, Z_DEFAULT_STRATEGY, 300,
                Z_BLOCK);
  add_zlib_made(s, "stored, more than one block", random_bytes(150000, 7), 0);

  // gzip headers with their optional fields.
  for (int fields = 1; fields < 16; ++fields) {
    gz_header h{};
    static Bytef extra[] = {'A', 'B', 4, 0, 1, 2, 3, 4};
    static Bytef name[] = "chunk.0.0";
    static Bytef comment[] = "made by a test";
    h.os = 3;
    if (fields & 1) {
      h.extra = extra;
      h.extra_len = sizeof extra;
    }
    if (fields & 2) h.name = name;
    if (fields & 4) h.comment = comment;
    h.hcrc = (fields & 8) ? 1 : 0;
    const Bytes data = text_like(3000, 100 + static_cast<std::uint64_t>(fields));
    s.push_back({"gzip header fields " + std::to_string(fields) + " (extra, name, comment, hcrc)", kGzip,
                 zlib_deflate(data, 6, 31, Z_DEFAULT_STRATEGY, 0, Z_SYNC_FLUSH, &h), data});
  }

  // Several gzip members, with and without zero padding; a zlib stream after a gzip member.
  {
    const Bytes a = text_like(5000, 8), b = random_bytes(300, 9), c = Bytes(7000, 'x');
    Bytes joined = a;
    joined.insert(joined.end(), b.begin(), b.end());
    Bytes two = zlib_deflate(a, 6, 31);
    const Bytes gb = zlib_deflate(b, 1, 31);
    two.insert(two.end(), gb.begin(), gb.end());
    s.push_back({"two gzip members", kGzip, two, joined});
    Bytes padded = two;
    padded.insert(padded.end(), 7, 0);
    const Bytes gc = zlib_deflate(c, 9, 31);
    padded.insert(padded.end(), gc.begin(), gc.end());
    padded.insert(padded.end(), 3, 0);
    Bytes three = joined;
    three.insert(three.end(), c.begin(), c.end());
    s.push_back({"three gzip members with zero padding between and after", kGzip, padded, three});
    Bytes empty_members = zlib_deflate({}, 6, 31);
    const Bytes ga = zlib_deflate(a, 6, 31);
    empty_members.insert(empty_members.end(), ga.begin(), ga.end());
    const Bytes ge = zlib_deflate({}, 6, 31);
    empty_members.insert(empty_members.end(), ge.begin(), ge.end());
    s.push_back({"gzip members, empty ones around", kGzip, empty_members, a});
    Bytes mixed = zlib_deflate(a, 6, 31);
    const Bytes zb = zlib_deflate(b, 6, 15);
    mixed.insert(mixed.end(), zb.begin(), zb.end());
    s.push_back({"a gzip member then a zlib stream", kGzip, mixed, joined});
    s.push_back({"a gzip member read as zlib", kZlib, zlib_deflate(a, 6, 31), a});
  }

  // Written bit by bit: the window's edge, long runs, blocks of every kind.
  {
    const Bytes head = random_bytes(300, 10);
    const Bytes filler = random_bytes(kWindow - 300, 11);
    std::vector<Tok> t;
    for (auto v : head) t.push_back({v, 0});
    for (auto v : filler) t.push_back({v, 0});
    t.push_back({258, kWindow});  // the first 258 bytes again, exactly 32 KiB back
    t.push_back({42, kWindow});
    t.push_back({3, kWindow - 1});
    Bytes original;
    apply_tokens(original, t);
    BitWriter w;
    write_fixed_block(w, t, true);
    add_in_every_frame(s, "matches 32 KiB back", w.take(), original);
  }
  {
    std::vector<Tok> t = {{'a', 0}};
    for (int k = 0; k < 400; ++k) t.push_back({258, 1});
    t.push_back({'b', 0});
    t.push_back({258, 2});
    t.push_back({257, 3});
    t.push_back({100, 7});
    Bytes original;
    apply_tokens(original, t);
    BitWriter w;
    write_fixed_block(w, t, true);
    add_in_every_frame(s, "runs of 258 at distance 1, 2, 3, 7", w.take(), original);
  }
  {
    // Matches whose sources lie in the same round of 32 symbols, in earlier matches of it,
    // chained: mostly short distances over short and long lengths, some far back.
    std::uint64_t x = 0x9E3779B97F4A7C15ull;
    auto next = [&x](std::uint32_t n) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      return static_cast<std::uint32_t>(x % n);
    };
    std::vector<Tok> t;
    std::uint32_t written = 0;
    for (int k = 0; k < (quick ? 3000 : 20000); ++k) {
      if (written == 0 || next(10) < 3) {
        t.push_back({next(256), 0});
        ++written;
        continue;
      }
      const std::uint32_t length = next(4) == 0 ? 3 + next(256) : 3 + next(12);
      const std::uint32_t reach = written < kWindow ? written : kWindow;
      std::uint32_t distance = next(8) == 0 ? 1 + next(reach) : 1 + next(reach < 40 ? reach : 40);
      t.push_back({length, distance});
      written += length;
    }
    Bytes original;
    apply_tokens(original, t);
    BitWriter w;
    write_fixed_block(w, t, true);
    add_in_every_frame(s, "random matches chained within rounds", w.take(), original);
  }
  {
    // Stored, fixed, dynamic (with a single distance code of length 1), stored, fixed, in one stream.
    BitWriter w;
    Bytes original;
    const Bytes stored = text_like(700, 12);
    write_stored_block(w, stored, false);
    original.insert(original.end(), stored.begin(), stored.end());
    std::vector<Tok> t1 = {{'x', 0}, {'y', 0}, {10, 2}, {200, 700}};
    write_fixed_block(w, t1, false);
    apply_tokens(original, t1);
    std::vector<std::uint8_t> litlen(257, 0), dist(1, 1);
    for (int c = 'a'; c <= 'h'; ++c) litlen[c] = 3;  // 8 codes of 3 bits: 'a'..'h' ...
    litlen['a'] = 4;  // ... made room for end-of-block: 7 of 3 bits, 2 of 4 bits
    litlen[256] = 4;
    std::vector<Tok> t2 = {{'a', 0}, {'b', 0}, {'h', 0}, {'c', 0}};
    write_dynamic_block(w, t2, litlen, dist, false);
    apply_tokens(original, t2);
    write_stored_block(w, {}, false);
    std::vector<Tok> t3 = {{'z', 0}, {258, 1}, {5, 1000}};
    write_fixed_block(w, t3, true);
    apply_tokens(original, t3);
    add_in_every_frame(s, "stored, fixed, dynamic, empty stored, fixed blocks", w.take(), original);
  }
  return s;
}

}  // namespace zarrkit::gpu::deflate::testing
