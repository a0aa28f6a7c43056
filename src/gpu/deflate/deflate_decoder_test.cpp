// The deflate decoder of the GPU path (deflate_stages.cuh, run on the host with an emulated
// warp) against zlib and libdeflate: the differential set of deflate_test_streams.h decodes
// to the original bytes in every framing; streams written to break one rule each fail with
// the status that names it, as zlib refuses them too.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <set>
#include <string>

#include "gpu/deflate/deflate_host_decoder.h"
#include "gpu/deflate/deflate_test_streams.h"

namespace zarrkit::gpu::deflate {
namespace {

using namespace testing;

HostDecodeResult decode(Format f, const Bytes& in, std::size_t capacity, Bytes* out = nullptr) {
  Bytes buffer(capacity + 16, 0xA5);
  const HostDecodeResult r = decode_on_host(f, in.data(), in.size(), buffer.data(), capacity);
  for (std::size_t k = capacity; k < buffer.size(); ++k) EXPECT_EQ(buffer[k], 0xA5) << "wrote past the output";
  if (out != nullptr) *out = Bytes(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(r.size));
  return r;
}

TEST(DeflateHostDecoder, DifferentialSetDecodesToTheOriginal) {
#if defined(__SANITIZE_ADDRESS__)
  const std::vector<Stream> streams = every(standard_streams(true), kSanitizerStep);
  ASSERT_GT(streams.size(), 60u);
#else
  const std::vector<Stream> streams = standard_streams(false);
  ASSERT_GT(streams.size(), 250u);
#endif
  for (const Stream& s : streams) {
    ASSERT_FALSE(s.bytes.empty()) << s.name << ": the compressor made nothing";
    const auto reference = zlib_reference(s.format, s.bytes, s.original.size());
    ASSERT_TRUE(reference.has_value() && *reference == s.original) << s.name << ": zlib does not agree with the set";
    Bytes got;
    const HostDecodeResult r = decode(s.format, s.bytes, s.original.size(), &got);
    ASSERT_EQ(r.error, kOk) << s.name << ": " << error_name(r.error);
    ASSERT_EQ(r.size, s.original.size()) << s.name;
    ASSERT_TRUE(got == s.original) << s.name << ": other bytes";
  }
}

TEST(DeflateHostDecoder, OutputSmallerThanTheStreamFails) {
  for (const Stream& s : every(standard_streams(true), 3 * kSanitizerStep)) {
    if (s.original.empty()) continue;
    EXPECT_EQ(decode(s.format, s.bytes, s.original.size() - 1).error, kErrOutputTooLarge) << s.name;
  }
}

TEST(DeflateHostDecoder, LargerOutputDecodesTheStreamOnly) {
  const Bytes data = text_like(5000, 1);
  const HostDecodeResult r = decode(kGzip, zlib_deflate(data, 6, 31), data.size() + 100);
  EXPECT_EQ(r.error, kOk);
  EXPECT_EQ(r.size, data.size());
}

// One stream per broken rule: the error we give, and zlib's refusal.
struct Broken {
  std::string name;
  Format format;
  Bytes bytes;
  std::size_t capacity;
  std::int32_t error;
};

Bytes raw_of(const std::function<void(BitWriter&)>& write) {
  BitWriter w;
  write(w);
  return w.take();
}

std::vector<Broken> broken_streams() {
  std::vector<Broken> b;
  const Bytes text = text_like(2000, 5);
  const Bytes gz = zlib_deflate(text, 6, 31), zl = zlib_deflate(text, 6, 15);
  b.push_back({"empty input", kGzip, {}, 10, kErrEmpty});
  b.push_back({"reserved block type", kRaw, raw_of([](BitWriter& w) { w.bits(7, 3); w.bits(0, 16); }), 10,
               kErrBlockType});
  b.push_back({"stored LEN and NLEN disagree", kRaw, {1, 5, 0, 0xFA, 0xFE, 1, 2, 3, 4, 5}, 10, kErrStoredLength});
  b.push_back({"stored block longer than the input", kRaw, {1, 50, 0, 0xCD, 0xFF, 1, 2, 3}, 100, kErrTruncated});
  b.push_back({"match before the start", kRaw,
               raw_of([](BitWriter& w) { write_fixed_block(w, {{'a', 0}, {'b', 0}, {3, 3}}, true); }), 10,
               kErrDistance});
  b.push_back({"match before the start of its member", kGzip,
               [&] {
                 Bytes two = zlib_deflate(Bytes(10, 'q'), 6, 31);
                 Bytes original = {'a'};
                 const Bytes raw = raw_of([](BitWriter& w) { write_fixed_block(w, {{'a', 0}, {3, 2}}, true); });
                 Bytes orig2 = {'a', 'q', 'q', 'q'};
                 const Bytes second = frame(raw, orig2, kGzip);
                 two.insert(two.end(), second.begin(), second.end());
                 return two;
               }(),
               100, kErrDistance});
  b.push_back({"literal/length symbol 286", kRaw, raw_of([](BitWriter& w) {
                 w.bits(1, 1);
                 w.bits(1, 2);
                 w.code(0xC6, 8);  // 286 in the fixed code
               }),
               10, kErrSymbol});
  b.push_back({"distance symbol 30", kRaw, raw_of([](BitWriter& w) {
                 w.bits(1, 1);
                 w.bits(1, 2);
                 w.code(0x30 + 'a', 8);
                 w.code(1, 7);   // length 3 (symbol 257)
                 w.code(30, 5);  // distance symbol 30
               }),
               10, kErrSymbol});
  {
    std::vector<std::uint8_t> litlen(257, 0), dist(1, 1);
    for (int c = 0; c < 4; ++c) litlen[c] = 2;  // four codes of 2 bits fill the code ...
    litlen[256] = 2;                            // ... and end-of-block over-subscribes it
    b.push_back({"over-subscribed literal/length code", kRaw,
                 raw_of([&](BitWriter& w) { write_dynamic_block(w, {}, litlen, dist, true); }), 10, kErrOversubscribed});
    litlen[3] = 0;
    litlen[2] = 3;  // 2 + 1 + 2 bits: 1/4 + 1/4 + 1/8 + 1/4 < 1
    b.push_back({"incomplete literal/length code", kRaw,
                 raw_of([&](BitWriter& w) { write_dynamic_block(w, {}, litlen, dist, true); }), 10, kErrIncomplete});
    litlen[2] = 2;
    litlen[3] = 0;
    litlen[1] = 0;
    litlen[256] = 1;  // 'a' 2 bits, 'c' 2 bits, end 1 bit: complete
    std::vector<std::uint8_t> dist2 = {2, 2, 2};  // incomplete, longer than 1 bit
    b.push_back({"incomplete distance code", kRaw,
                 raw_of([&](BitWriter& w) { write_dynamic_block(w, {}, litlen, dist2, true); }), 10, kErrIncomplete});
    std::vector<std::uint8_t> dist3 = {1, 1, 1};
    b.push_back({"over-subscribed distance code", kRaw,
                 raw_of([&](BitWriter& w) { write_dynamic_block(w, {}, litlen, dist3, true); }), 10,
                 kErrOversubscribed});
    std::vector<std::uint8_t> no_end = litlen;
    no_end[256] = 0;
    no_end[1] = 1;
    b.push_back({"no end-of-block code", kRaw,
                 raw_of([&](BitWriter& w) { write_dynamic_block(w, {}, no_end, dist, true); }), 10, kErrCodeLengths});
    std::vector<std::uint8_t> cl(19, 1);  // 19 codes of one bit
    b.push_back({"over-subscribed code-length code", kRaw,
                 raw_of([&](BitWriter& w) { write_dynamic_block(w, {}, litlen, dist, true, &cl); }), 10,
                 kErrOversubscribed});
    std::vector<std::uint8_t> cl2(19, 0);
    cl2[0] = 2;
    cl2[1] = 2;
    cl2[2] = 2;  // three of four 2-bit codes
    b.push_back({"incomplete code-length code", kRaw,
                 raw_of([&](BitWriter& w) { write_dynamic_block(w, {}, litlen, dist, true, &cl2); }), 10,
                 kErrIncomplete});
    b.push_back({"287 literal/length codes", kRaw, raw_of([](BitWriter& w) {
                   w.bits(1, 1);
                   w.bits(2, 2);
                   w.bits(30, 5);
                   w.bits(0, 5);
                   w.bits(15, 4);
                   for (int k = 0; k < 19; ++k) w.bits(4, 3);
                 }),
                 10, kErrCodeCounts});
    b.push_back({"a repeat with nothing before it", kRaw, raw_of([](BitWriter& w) {
                   w.bits(1, 1);
                   w.bits(2, 2);
                   w.bits(0, 5);
                   w.bits(0, 5);
                   w.bits(0, 4);  // 4 code-length codes: 16, 17, 18, 0
                   for (int k = 0; k < 4; ++k) w.bits(2, 3);
                   w.code(1, 2);  // 16 (0 has code 0): a repeat
                   w.bits(0, 2);
                 }),
                 10, kErrCodeLengths});
  }
  {
    Bytes bad = gz;
    bad[bad.size() - 8] ^= 1;
    b.push_back({"gzip crc32 wrong", kGzip, bad, text.size(), kErrCrc32});
    bad = gz;
    bad[bad.size() - 4] ^= 1;
    b.push_back({"gzip ISIZE wrong", kGzip, bad, text.size() + 10, kErrIsize});
    bad = zl;
    bad[bad.size() - 1] ^= 1;
    b.push_back({"zlib adler32 wrong", kZlib, bad, text.size(), kErrAdler32});
    bad = zl;
    bad.push_back(0);
    b.push_back({"a byte after a zlib stream", kZlib, bad, text.size(), kErrTrailing});
    bad = gz;
    bad.insert(bad.end(), {1, 2, 3});
    b.push_back({"a gzip stream followed by garbage", kGzip, bad, text.size(), kErrHeader});
    bad = {0x78, 0xBB, 0, 0, 0, 1};  // FDICT set, then a dictionary id
    bad.insert(bad.end(), zl.begin() + 2, zl.end());
    b.push_back({"zlib stream with a preset dictionary", kZlib, bad, text.size(), kErrDictionary});
    bad = zl;
    bad[0] = 0x88;  // a 64 KiB window
    b.push_back({"zlib window above 32 KiB", kZlib, bad, text.size(), kErrHeader});
    bad = gz;
    bad[3] = 0x20;  // a reserved flag
    b.push_back({"gzip reserved flag", kGzip, bad, text.size(), kErrHeader});
    gz_header h{};
    h.hcrc = 1;
    bad = zlib_deflate(text, 6, 31, Z_DEFAULT_STRATEGY, 0, Z_SYNC_FLUSH, &h);
    bad[10] ^= 0xFF;
    b.push_back({"gzip header crc wrong", kGzip, bad, text.size(), kErrHeaderCrc});
    b.push_back({"gzip cut in its trailer", kGzip, Bytes(gz.begin(), gz.end() - 3), text.size(), kErrTruncated});
    b.push_back({"gzip cut in its data", kGzip, Bytes(gz.begin(), gz.begin() + 40), text.size(), kErrTruncated});
    b.push_back({"gzip cut in its header", kGzip, Bytes(gz.begin(), gz.begin() + 6), text.size(), kErrTruncated});
  }
  return b;
}

TEST(DeflateHostDecoder, BrokenStreamsFailWithTheirStatus) {
  for (const Broken& b : broken_streams()) {
    const HostDecodeResult r = decode(b.format, b.bytes, b.capacity);
    EXPECT_EQ(r.error, b.error) << b.name << ": " << error_name(r.error);
    EXPECT_FALSE(zlib_reference(b.format, b.bytes, b.capacity).has_value()) << b.name << ": zlib decodes it";
  }
}

TEST(DeflateHostDecoder, ErrorNamesAreDistinct) {
  std::set<std::string> names;
  for (std::int32_t e = kErrEmpty; e <= kErrTooLarge; ++e) names.insert(error_name(e));
  EXPECT_EQ(names.size(), static_cast<std::size_t>(kErrTooLarge - kErrEmpty + 1));
  EXPECT_STREQ(error_name(kOk), "ok");
}

}  // namespace
}  // namespace zarrkit::gpu::deflate
