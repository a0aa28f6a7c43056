// The zstd decoder of the GPU path, run on the host (zstd_host_decoder.h), against libzstd's
// ZSTD_decompressDCtx: the differential set of zstd_test_frames.h, frames with chosen
// window descriptors, the interop corpus's zstd frames, XXH64 against the checksums libzstd
// writes, the errors of damaged frames, which features of the format the set reaches, and the
// sequences' unchecked bit reads against the checked ones.
#include "gpu/zstd/zstd_test_frames.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "gpu/zstd/zstd_host_decoder.h"
#include "gpu/zstd/zstd_xxhash.cuh"

namespace zarrkit::gpu::zstd {
namespace {

using testing::Bytes;

struct Reference {
  bool ok = false;
  Bytes out;
};

Reference libzstd_decode(const Bytes& in, std::size_t capacity) {
  Reference r;
  r.out.resize(capacity);
  ZSTD_DCtx* d = ZSTD_createDCtx();
  const std::size_t n = ZSTD_decompressDCtx(d, r.out.data(), capacity, in.data(), in.size());
  ZSTD_freeDCtx(d);
  r.ok = !ZSTD_isError(n);
  r.out.resize(r.ok ? n : 0);
  return r;
}

struct Ours {
  HostDecodeResult result;
  Bytes out;
};

Ours our_decode(const Bytes& in, std::size_t capacity) {
  Ours o;
  o.out.assign(capacity, 0xA5);
  o.result = decode_on_host(in.data(), in.size(), o.out.data(), capacity);
  o.out.resize(o.result.error == kOk ? o.result.size : 0);
  return o;
}

// Both decoders on `in` with `capacity` bytes of output: the same bytes, or both refuse.
void expect_same(const Bytes& in, std::size_t capacity, const std::string& what) {
  const Reference ref = libzstd_decode(in, capacity);
  const Ours ours = our_decode(in, capacity);
  if (ref.ok) {
    ASSERT_EQ(ours.result.error, kOk) << what << ": libzstd decodes it, we say " << error_name(ours.result.error)
                                      << " (stage " << ours.result.stage << ")";
    ASSERT_EQ(ours.out.size(), ref.out.size()) << what;
    ASSERT_TRUE(ours.out == ref.out) << what << ": the bytes differ";
  } else {
    EXPECT_NE(ours.result.error, kOk) << what << ": libzstd refuses it, we decode " << ours.result.size << " bytes";
  }
}

// The set is made once for the tests of this file; the sanitizer build takes the smaller one.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kQuickSet = true;
#else
constexpr bool kQuickSet = false;
#endif
const std::vector<testing::Frame>& differential_set() {
  static const std::vector<testing::Frame> frames = testing::standard_frames(kQuickSet);
  return frames;
}

TEST(ZstdHostDecoder, DifferentialSetEqualsLibzstd) {
  const std::vector<testing::Frame>& frames = differential_set();
  ASSERT_GT(frames.size(), 50u);
  for (const auto& f : frames) {
    SCOPED_TRACE(f.name);
    const Ours ours = our_decode(f.bytes, f.original.size());
    ASSERT_EQ(ours.result.error, kOk) << error_name(ours.result.error) << " at stage " << ours.result.stage;
    ASSERT_TRUE(ours.out == f.original) << "decoded bytes differ from the original";
    expect_same(f.bytes, f.original.size(), f.name);
    // More room than needed: the same bytes, as libzstd; less: both refuse.
    expect_same(f.bytes, f.original.size() + 100, f.name + ", larger output");
    if (!f.original.empty()) expect_same(f.bytes, f.original.size() - 1, f.name + ", output one byte short");
  }
}

// What the walk saw of the set: every kind of block, literals section and table mode.
TEST(ZstdHostDecoder, DifferentialSetReachesEveryFeature) {
  std::map<std::string, int> seen;
  for (const auto& f : differential_set()) {
    const ChunkWalk w = walk(f.bytes.data(), f.bytes.size(), f.original.size());
    ASSERT_EQ(w.error, kOk) << f.name;
    if (w.frames.size() > 1) ++seen["several frames"];
    for (const FrameJob& fr : w.frames) {
      if (fr.has_checksum) ++seen["checksum"];
      if (fr.content_size == kUnknownContentSize) ++seen["no content size"];
      if (fr.window_size == 1024) ++seen["1 KiB window"];
      if (fr.blocks > 1) ++seen["several blocks"];
    }
    for (const BlockJob& b : w.blocks) {
      static const char* const kTypes[] = {"raw block", "RLE block", "compressed block"};
      ++seen[kTypes[b.type]];
      if (b.type != kCompressedBlock) continue;
      static const char* const kLiterals[] = {"raw literals", "RLE literals", "1 Huffman stream", "4 Huffman streams"};
      ++seen[kLiterals[b.literals_type]];
      if (b.treeless) ++seen["treeless literals"];
      if (b.sequences == 0) ++seen["no sequences"];
      if (b.sequences >= 128) ++seen["2-byte sequence count"];
      if (b.sequences >= 0x7F00) ++seen["3-byte sequence count"];
      if (b.sequences == 0) continue;
      static const char* const kModes[] = {"predefined", "RLE", "FSE", "repeat"};
      static const char* const kKinds[] = {"literals lengths", "offsets", "match lengths"};
      for (int k = 0; k < 3; ++k) {
        ++seen[std::string(kModes[(b.sequence_modes >> (6 - 2 * k)) & 3]) + " " + kKinds[k]];
      }
    }
  }
  for (const char* feature :
       {"several frames", "checksum", "no content size", "1 KiB window", "several blocks", "raw block", "RLE block",
        "compressed block", "raw literals", "RLE literals", "1 Huffman stream", "4 Huffman streams",
        "treeless literals", "no sequences", "2-byte sequence count", "3-byte sequence count",
        "predefined literals lengths", "predefined offsets", "predefined match lengths", "RLE literals lengths",
        "RLE offsets", "RLE match lengths", "FSE literals lengths", "FSE offsets", "FSE match lengths",
        "repeat literals lengths", "repeat offsets", "repeat match lengths"}) {
    EXPECT_GT(seen[feature], 0) << "no frame of the set has: " << feature;
  }
}

// The window descriptor does not matter to a decoder with the whole output: frames whose
// descriptor says 1 KiB .. 2^31 + 7/8 decode the same; above 2^31 both refuse.
TEST(ZstdHostDecoder, WindowDescriptors) {
  testing::Settings s;
  s.content_size = false;
  s.level = 5;
  const Bytes data = testing::family_n(70000, 3);
  Bytes frame = testing::compress(data, s);
  ASSERT_EQ(frame[4] & 0x20, 0) << "a frame with a window descriptor";
  for (int exponent = 0; exponent < 32; ++exponent) {
    for (int mantissa : {0, 3, 7}) {
      frame[5] = static_cast<std::uint8_t>(exponent << 3 | mantissa);
      const std::string what = "window exponent " + std::to_string(exponent) + " mantissa " + std::to_string(mantissa);
      expect_same(frame, data.size(), what);
      const Ours ours = our_decode(frame, data.size());
      if (exponent <= 21) {
        EXPECT_EQ(ours.result.error, kOk) << what;
      } else {
        EXPECT_EQ(ours.result.error, kErrWindowTooLarge) << what;
      }
    }
  }
}

// Every frame the interop corpus holds (whole files, and frames inside shards).
TEST(ZstdHostDecoder, InteropCorpusFrames) {
  const char* env = std::getenv("ZARRKIT_CORPUS_DIR");
  const std::filesystem::path root = env ? env : std::filesystem::path(ZARRKIT_SOURCE_DIR) / ".." / "shared" / "corpus";
  if (!std::filesystem::is_directory(root)) GTEST_SKIP() << "no interop corpus at " << root;
  int frames = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.file_size() > (64 << 20)) continue;
    std::ifstream file(entry.path(), std::ios::binary);
    const Bytes bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    for (std::size_t at = 0; at + 4 <= bytes.size(); ++at) {
      if (read_le32(bytes.data() + at) != 0xFD2FB528u) continue;
      const std::size_t size = ZSTD_findFrameCompressedSize(bytes.data() + at, bytes.size() - at);
      if (ZSTD_isError(size)) continue;
      const Bytes frame(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                        bytes.begin() + static_cast<std::ptrdiff_t>(at + size));
      const unsigned long long content = ZSTD_getFrameContentSize(frame.data(), frame.size());
      const std::size_t capacity = content == ZSTD_CONTENTSIZE_UNKNOWN ? (16u << 20) : static_cast<std::size_t>(content);
      const Reference ref = libzstd_decode(frame, capacity);
      if (!ref.ok) continue;
      const std::string what = entry.path().string() + " at byte " + std::to_string(at);
      expect_same(frame, capacity, what);
      ++frames;
    }
  }
  EXPECT_GT(frames, 20) << "zstd frames found in " << root;
}

// XXH64 against the content checksums libzstd writes, over sizes around the 32-byte stripes.
TEST(ZstdHostDecoder, Xxh64MatchesLibzstdChecksums) {
  EXPECT_EQ(xxh64(nullptr, 0), 0xEF46DB3751D8E999ull);
  const Bytes data = testing::random_bytes(5000, 77);
  testing::Settings s;
  s.checksum = true;
  for (std::size_t n = 0; n < 5000; n += n < 200 ? 1 : 97) {
    const Bytes part(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(n));
    const Bytes frame = testing::compress(part, s);
    const std::uint32_t stored = read_le32(frame.data() + frame.size() - 4);
    ASSERT_EQ(static_cast<std::uint32_t>(xxh64(part.data(), part.size())), stored) << n << " bytes";
  }
}

// Damaged frames: the error each damage must give.
TEST(ZstdHostDecoder, DamagedFramesGiveTheirErrors) {
  testing::Settings s;
  s.checksum = true;
  const Bytes data = testing::text(50000, 5);
  const Bytes good = testing::compress(data, s);
  auto decode = [&](const Bytes& in, std::size_t capacity) { return our_decode(in, capacity).result.error; };
  ASSERT_EQ(decode(good, data.size()), kOk);
  EXPECT_EQ(decode({}, 10), kErrEmpty);
  Bytes b = good;
  b[b.size() - 1] ^= 1;
  EXPECT_EQ(decode(b, data.size()), kErrChecksum);
  b = good;
  b[4] |= 0x08;
  EXPECT_EQ(decode(b, data.size()), kErrFrameHeader);
  b = good;
  b[0] ^= 1;
  EXPECT_EQ(decode(b, data.size()), kErrFrameMagic);
  EXPECT_EQ(decode(good, data.size() - 1), kErrOutputTooLarge);
  // Every truncation fails; so do bytes after the frame that are not a frame.
  for (std::size_t n = 0; n < good.size(); n += 1 + n / 50) {
    EXPECT_NE(decode(Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n)), data.size()), kOk) << n;
  }
  for (std::size_t extra = 1; extra <= 8; ++extra) {
    b = good;
    b.insert(b.end(), extra, 0);
    EXPECT_NE(decode(b, data.size()), kOk) << extra << " bytes after the frame";
  }
  // A content size that lies.
  testing::Settings plain;
  const Bytes small = testing::compress(testing::text(100, 6), plain);
  ASSERT_EQ(small[4] & 0x20, 0x20) << "a single-segment frame with a 1-byte content size";
  b = small;
  b[5] = 99;
  EXPECT_EQ(decode(b, 100), kErrContentSize);
  // A dictionary id.
  b = small;
  b[4] |= 1;
  b.insert(b.begin() + 5, 7);
  EXPECT_EQ(decode(b, 100), kErrDictionary);
}

}  // namespace
}  // namespace zarrkit::gpu::zstd

namespace zarrkit::gpu::zstd {
namespace {

// The sequences' unchecked reads (ensure, take, settle) give the bits the checked reads
// give, from streams at every alignment and of sizes around the word loads' limits, and
// ensure() refuses what would reach below the stream's first bit.
TEST(ZstdBackwardBits, LoadedReadsEqualCheckedReads) {
  std::mt19937 rng(7);
  std::vector<std::uint8_t> storage(4096 + 8);
  for (auto& b : storage) b = static_cast<std::uint8_t>(rng());
  std::uint32_t refused = 0, loaded_reads = 0;
  for (std::uint32_t skew = 0; skew < 4; ++skew) {
    for (std::uint32_t size : {1u, 2u, 8u, 10u, 11u, 12u, 14u, 15u, 16u, 17u, 64u, 333u, 4096u}) {
      const std::uint8_t* stream = storage.data() + skew;
      if (stream[size - 1] == 0) continue;  // no end mark
      BackwardBits checked, loaded;
      ASSERT_TRUE(checked.init(stream, size));
      ASSERT_TRUE(loaded.init(stream, size));
      while (checked.remaining > 0) {
        std::uint32_t n[4], need = 0;
        for (auto& k : n) need += k = rng() % 15;
        if (!loaded.ensure(need)) {
          EXPECT_LT(loaded.remaining, static_cast<std::int64_t>(need));
          ++refused;
          for (std::uint32_t k : n) EXPECT_EQ(loaded.read(k), checked.read(k));
          continue;
        }
        for (std::uint32_t k : n) ASSERT_EQ(loaded.take(k), checked.read(k)) << "skew " << skew << ", size " << size;
        loaded.settle();
        ASSERT_EQ(loaded.remaining, checked.remaining);
        ++loaded_reads;
      }
    }
  }
  EXPECT_GT(refused, 10u);  // the streams' last bits, through the checked reads
  EXPECT_GT(loaded_reads, 1000u);
}

}  // namespace
}  // namespace zarrkit::gpu::zstd
