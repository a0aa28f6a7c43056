// The GPU decoders' logic, run on the host (width 1) against liblz4, c-blosc and the CPU
// crc32c. These run everywhere, GPU or not: the kernels execute the same functions.
#include "gpu/device_codecs.cuh"

#include <blosc.h>
#include <lz4.h>
#include <zlib.h>
#include <zstd.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "codecs/crc32c.h"
#include "gpu/codecs/blosc_device.h"
#include "gpu/lz4_encode.cuh"
#include "gpu/lz4_test_blocks.h"
#include "gpu/write_frames.cuh"

namespace zarrkit::gpu {
namespace {

using lz4_testing::Bytes;
using lz4_testing::has_zero_offset;
using lz4_testing::lz4_compress;
using lz4_testing::sample;

// ---- LZ4 ----------------------------------------------------------------------------------

TEST(DeviceLz4, DecodesWhatLz4Encodes) {
  for (std::size_t size : {0u, 1u, 5u, 12u, 13u, 64u, 1000u, 65536u, 1u << 20}) {
    for (int kind = 0; kind < 4; ++kind) {
      for (bool high : {false, true}) {
        const Bytes data = sample(size, kind, size * 7 + kind);
        const Bytes packed = lz4_compress(data, high);
        Bytes out(size + 16, 0xAB);  // guard bytes past the end must stay
        ASSERT_EQ(lz4_decode_block(packed.data(), packed.size(), out.data(), size, 0, 1), kDecodeOk)
            << "size " << size << " kind " << kind;
        EXPECT_TRUE(std::equal(data.begin(), data.end(), out.begin()));
        for (std::size_t i = size; i < out.size(); ++i) ASSERT_EQ(out[i], 0xAB);
      }
    }
  }
}

// Random valid blocks (literal runs up to 400 bytes, matches up to 5000, offsets 1..65535,
// overlapping and far), as liblz4 reads them.
TEST(DeviceLz4, DecodesRandomSequences) {
  std::mt19937_64 rng(17);
  std::size_t shorter = 0;
  for (int round = 0; round < 300; ++round) {
    const std::size_t size = round % 10 == 0 ? 1 + rng() % 400000 : 1 + rng() % 20000;
    const auto [block, data] = lz4_testing::random_block(rng, size);
    Bytes expected;
    ASSERT_TRUE(lz4_testing::liblz4_decodes(block, size, expected)) << "round " << round;
    ASSERT_EQ(expected, data) << "round " << round;  // the generator writes valid blocks
    shorter += block.size() < size;                  // matches made it shorter
    Bytes out(size + 16, 0xAB);
    ASSERT_EQ(lz4_decode_block(block.data(), block.size(), out.data(), size, 0, 1), kDecodeOk) << "round " << round;
    ASSERT_TRUE(std::equal(data.begin(), data.end(), out.begin())) << "round " << round;
    for (std::size_t i = size; i < out.size(); ++i) ASSERT_EQ(out[i], 0xAB) << "round " << round;
  }
  EXPECT_GT(shorter, 200u);
}

// The benchmarks' data (short matches every ~8 bytes, offsets up to 64 KiB) and long
// literal runs between long matches reaching up to 70 KiB back, in liblz4's HC blocks.
TEST(DeviceLz4, DecodesFamilyNAndLongMatches) {
  std::mt19937_64 rng(5);
  Bytes runs;
  while (runs.size() < 400000) {
    const Bytes noise = sample(1 + rng() % 9000, 3, rng());
    runs.insert(runs.end(), noise.begin(), noise.end());
    const std::size_t repeat = 1 + rng() % 3000;
    const std::size_t distance = 1 + rng() % std::min<std::size_t>(runs.size(), 70000);
    for (std::size_t k = 0; k < repeat; ++k) runs.push_back(runs[runs.size() - distance]);
  }
  for (const Bytes& data : {lz4_testing::family_n(300000, 3), runs}) {
    for (bool high : {false, true}) {
      const Bytes packed = lz4_compress(data, high);
      Bytes out(data.size() + 16, 0xAB);
      ASSERT_EQ(lz4_decode_block(packed.data(), packed.size(), out.data(), data.size(), 0, 1), kDecodeOk);
      ASSERT_TRUE(std::equal(data.begin(), data.end(), out.begin()));
      for (std::size_t i = data.size(); i < out.size(); ++i) ASSERT_EQ(out[i], 0xAB);
    }
  }
}

// Mutated blocks: whenever liblz4 decodes to exactly the expected size, we must produce the
// same bytes; whenever it refuses, so must we; and no write may leave the output.
TEST(DeviceLz4, AgreesWithLiblz4OnCorruptBlocks) {
  std::mt19937_64 rng(42);
  int accepted = 0, refused = 0;
  for (int round = 0; round < 3000; ++round) {
    const auto [packed, size] = lz4_testing::mutated_block(rng);
    Bytes expected(size + 64, 0), ours(size + 64, 0xCD);
    const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(packed.data()),
                                      reinterpret_cast<char*>(expected.data()), static_cast<int>(packed.size()),
                                      static_cast<int>(size));
    const std::int32_t status = lz4_decode_block(packed.data(), packed.size(), ours.data(), size, 0, 1);
    for (std::size_t i = size; i < ours.size(); ++i) ASSERT_EQ(ours[i], 0xCD) << "round " << round;
    if (n == static_cast<int>(size) && has_zero_offset(packed)) {
      // liblz4 copies a match at offset 0 from bytes it never wrote (the format forbids
      // offset 0); the GPU refuses it and the CPU fallback then gives liblz4's bytes.
      ASSERT_NE(status, kDecodeOk) << "round " << round;
    } else if (n == static_cast<int>(size)) {
      ++accepted;
      ASSERT_EQ(status, kDecodeOk) << "round " << round;
      ASSERT_TRUE(std::equal(ours.begin(), ours.begin() + static_cast<std::ptrdiff_t>(size), expected.begin()));
    } else {
      ++refused;
      ASSERT_NE(status, kDecodeOk) << "round " << round << ": liblz4 gave " << n;
    }
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 100);
}

// The encoder of the write path (segments of 64 KiB, stitched): liblz4 must read every
// block back, at a ratio close to its own fast mode, and no block may exceed LZ4's bound.
TEST(DeviceLz4, EncodedBlocksDecodeWithLiblz4) {
  std::uint64_t ours_total = 0, theirs_total = 0;
  const std::uint32_t seg = kLz4SegmentBytes;
  for (std::size_t size : {0u, 1u, 5u, 12u, 13u, 14u, 17u, 20u, 100u, 4096u, seg - 1, seg, seg + 1, seg + 12, seg + 13,
                           2 * seg + 5, 300000u, 1u << 20}) {
    for (int kind = 0; kind < 5; ++kind) {
      // kind 4: constant bytes (one long match per segment, matches reaching into the last)
      const Bytes data = kind == 4 ? Bytes(size, 0x3C) : sample(size, kind, size * 13 + kind);
      const auto bound = static_cast<std::size_t>(lz4_bound(size));
      Bytes packed(bound + 64, 0xEE);
      const std::uint32_t n = lz4_encode_block(data.data(), static_cast<std::uint32_t>(size), packed.data(),
                                               static_cast<std::uint32_t>(bound));
      ASSERT_GT(n, 0u) << size;
      ASSERT_LE(n, bound) << size;
      for (std::size_t i = bound; i < packed.size(); ++i) ASSERT_EQ(packed[i], 0xEE);
      Bytes back(size + 1);
      const int got = LZ4_decompress_safe(reinterpret_cast<const char*>(packed.data()), reinterpret_cast<char*>(back.data()),
                                          static_cast<int>(n), static_cast<int>(size));
      ASSERT_EQ(got, static_cast<int>(size)) << "size " << size << " kind " << kind;
      ASSERT_TRUE(std::equal(data.begin(), data.end(), back.begin())) << "size " << size << " kind " << kind;
      Bytes ours(size + 1);
      ASSERT_EQ(lz4_decode_block(packed.data(), n, ours.data(), size, 0, 1), kDecodeOk);
      ASSERT_TRUE(std::equal(data.begin(), data.end(), ours.begin()));
      if (size >= 4096 && kind < 4) {
        ours_total += n;
        theirs_total += lz4_compress(data, false).size();
      }
    }
  }
  EXPECT_LT(static_cast<double>(ours_total), 1.25 * static_cast<double>(theirs_total));
  // Too little room: the encoder says so instead of writing past the end.
  const Bytes noise = sample(5000, 3, 1);
  Bytes small(4000 + 8, 0xEE);
  EXPECT_EQ(lz4_encode_block(noise.data(), 5000, small.data(), 4000), 0u);
  for (std::size_t i = 4000; i < small.size(); ++i) EXPECT_EQ(small[i], 0xEE);
}

// A segment never writes more than lz4_rest_capacity, whatever the data: worst cases are
// many short matches and long literal runs between them.
TEST(DeviceLz4, SegmentsStayWithinTheirCapacity) {
  std::mt19937_64 rng(5);
  std::vector<std::uint16_t> table(1u << kLz4HashBits);
  for (int round = 0; round < 40; ++round) {
    const std::uint32_t n = 1000 + static_cast<std::uint32_t>(rng() % (2 * kLz4SegmentBytes));
    Bytes data(n);
    const unsigned period = 4 + static_cast<unsigned>(rng() % 40);  // short repeats with noise between
    for (std::uint32_t i = 0; i < n; ++i) data[i] = (i / period) % 2 == 0 ? static_cast<std::uint8_t>(i % 5) : static_cast<std::uint8_t>(rng());
    const std::uint32_t end = std::min(n, kLz4SegmentBytes);
    Bytes rest(lz4_rest_capacity(end) + 16, 0xEE);
    const Lz4Segment seg = lz4_encode_segment<1>(data.data(), n, 0, end, rest.data(), lz4_rest_capacity(end), table.data(), 0);
    EXPECT_EQ(seg.overflow, 0u);
    EXPECT_LE(seg.rest_size, lz4_rest_capacity(end));
    for (std::size_t i = lz4_rest_capacity(end); i < rest.size(); ++i) ASSERT_EQ(rest[i], 0xEE);
  }
}

// ---- Blosc on the host: the device pipeline's jobs, executed one by one ------------------

// A zstd frame or zlib stream decoding to exactly dst_size bytes, by libzstd or zlib (the
// device path's kernels are checked against them elsewhere).
std::int32_t decode_inner_stream(BloscInner inner, const std::uint8_t* src, std::uint32_t src_size, std::uint8_t* dst,
                                 std::uint32_t dst_size) {
  if (inner == BloscInner::kZstd) {
    const std::size_t n = ZSTD_decompress(dst, dst_size, src, src_size);
    return !ZSTD_isError(n) && n == dst_size ? kDecodeOk : kDecodeCorrupt;
  }
  uLongf n = dst_size;
  uLong consumed = src_size;
  return uncompress2(dst, &n, src, &consumed) == Z_OK && n == dst_size ? kDecodeOk : kDecodeCorrupt;
}

Bytes run_blosc_jobs(const Bytes& chunk, const BloscJobs& jobs, std::int32_t& status) {
  Bytes decoded(jobs.decoded_size, 0x5A), scratch(jobs.decoded_size, 0x33);
  status = kDecodeOk;
  for (const StreamJob& s : jobs.inner_streams) {
    EXPECT_NE(jobs.inner, BloscInner::kLz4Family);
    EXPECT_LE(s.src + s.src_size, chunk.size());
    EXPECT_LE(s.dst + s.dst_size, jobs.decoded_size);
    const std::int32_t r = decode_inner_stream(jobs.inner, chunk.data() + s.src, s.src_size, decoded.data() + s.dst,
                                               s.dst_size);
    if (r != kDecodeOk && status == kDecodeOk) status = r;
  }
  for (const StreamJob& s : jobs.streams) {
    EXPECT_LE(s.src + s.src_size, chunk.size());
    EXPECT_LE(s.dst + s.dst_size, jobs.decoded_size);
    std::uint8_t* out = (s.to_scratch ? scratch.data() : decoded.data()) + s.dst;
    std::int32_t r = kDecodeOk;
    switch (s.codec) {
      case StreamCodec::kCopy:
        if (s.src_size != s.dst_size) r = kDecodeWrongSize;
        else std::memcpy(out, chunk.data() + s.src, s.dst_size);
        break;
      case StreamCodec::kLz4: r = lz4_decode_block(chunk.data() + s.src, s.src_size, out, s.dst_size, 0, 1); break;
      case StreamCodec::kBloscLz: r = blosclz_decode_block(chunk.data() + s.src, s.src_size, out, s.dst_size, 0, 1); break;
    }
    if (r != kDecodeOk && status == kDecodeOk) status = r;
  }
  // The inner codecs' blocks unshuffle from a copy of the decoded chunk (the device's
  // UnshuffleInPlaceWork), the LZ4 family's from the scratch they decoded into.
  if (jobs.inner != BloscInner::kLz4Family) scratch = decoded;
  for (const BlockJob& b : jobs.blocks) {
    EXPECT_LE(b.offset + b.size, jobs.decoded_size);
    const std::uint8_t* in = scratch.data() + b.offset;
    std::uint8_t* out = decoded.data() + b.offset;
    if (b.shuffle == BlockShuffle::kByte) {
      const std::uint32_t elements = b.size / b.typesize;
      for (std::uint32_t e = 0; e < elements; ++e) unshuffle_element(in, out, elements, b.typesize, e);
      std::memcpy(out + elements * b.typesize, in + elements * b.typesize, b.size - elements * b.typesize);
    } else if (b.shuffle == BlockShuffle::kBit && bitshuffle_applies(b.size, b.typesize)) {
      const std::uint32_t elements = b.size / b.typesize;
      for (std::uint32_t g = 0; g < elements / 8; ++g) {
        for (unsigned j = 0; j < b.typesize; ++j) {
          const std::uint64_t w = bitunshuffled_column8(in, elements, g, j);
          for (unsigned i = 0; i < 8; ++i) out[(g * 8 + i) * b.typesize + j] = static_cast<std::uint8_t>(w >> (8 * i));
        }
      }
      std::memcpy(out + elements * b.typesize, in + elements * b.typesize, b.size - elements * b.typesize);
    } else {
      std::memcpy(out, in, b.size);
    }
  }
  return decoded;
}

Bytes blosc_compress(const Bytes& data, int clevel, int shuffle, std::size_t typesize, const char* cname,
                     std::size_t blocksize) {
  Bytes out(data.size() + BLOSC_MAX_OVERHEAD);
  const int n = blosc_compress_ctx(clevel, shuffle, typesize, data.size(), data.data(), out.data(), out.size(), cname,
                                   blocksize, 1);
  EXPECT_GT(n, 0);
  out.resize(static_cast<std::size_t>(std::max(n, 0)));
  return out;
}

struct BloscCase {
  const char* cname;
  int shuffle;
  std::size_t typesize;
  std::size_t size;
  std::size_t blocksize;
  int clevel;
  int kind;
  int splitmode;
};

TEST(DeviceBlosc, PipelineMatchesCBlosc) {
  std::vector<BloscCase> cases;
  const char* cnames[] = {"lz4", "blosclz", "lz4hc", "zstd", "zlib"};
  for (const char* cname : cnames) {
    for (int shuffle : {BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE}) {
      for (std::size_t typesize : {1u, 2u, 4u, 8u, 3u, 16u, 17u}) {
        for (std::size_t size : {100u, 4096u, 100003u}) {
          for (int kind : {0, 3}) {
            cases.push_back({cname, shuffle, typesize, size, 0, 5, kind, BLOSC_FORWARD_COMPAT_SPLIT});
          }
        }
        if (typesize == 4) cases.push_back({cname, shuffle, typesize, 1u << 20, 0, 5, 0, BLOSC_FORWARD_COMPAT_SPLIT});
        cases.push_back({cname, shuffle, typesize, 300001, 8192, 9, 2, BLOSC_ALWAYS_SPLIT});
        cases.push_back({cname, shuffle, typesize, 300001, 20000, 1, 1, BLOSC_NEVER_SPLIT});
        cases.push_back({cname, shuffle, typesize, 65536, 0, 0, 0, BLOSC_FORWARD_COMPAT_SPLIT});  // memcpyed
      }
    }
  }
  int raw = 0, split = 0, unreadable = 0, inner = 0;
  for (const BloscCase& c : cases) {
    blosc_set_splitmode(c.splitmode);
    const Bytes data = sample(c.size, c.kind, c.size + c.typesize);
    const Bytes packed = blosc_compress(data, c.clevel, c.shuffle, c.typesize, c.cname, c.blocksize);
    const auto jobs = plan_blosc_chunk({reinterpret_cast<const std::byte*>(packed.data()), packed.size()},
                                       SizeBound{c.size, true}, 4096, /*zstd_and_zlib=*/true);
    const std::string what = fmt::format("{} shuffle {} typesize {} size {} blocksize {} clevel {} split {}", c.cname,
                                         c.shuffle, c.typesize, c.size, c.blocksize, c.clevel, c.splitmode);
    Bytes reference(c.size);
    const int n = blosc_decompress_ctx(packed.data(), reference.data(), reference.size(), 1);
    if (n != static_cast<int>(c.size)) {
      // c-blosc cannot read this one back either (typesizes above 16 split on writing but
      // not on reading): the GPU path must refuse it too.
      ++unreadable;
      std::int32_t status = kDecodeOk;
      if (jobs) run_blosc_jobs(packed, *jobs, status);
      EXPECT_TRUE(!jobs || status != kDecodeOk) << what;
      continue;
    }
    ASSERT_EQ(reference, data) << what;
    ASSERT_TRUE(jobs.has_value()) << what;
    raw += (packed[2] & BLOSC_MEMCPYED) != 0;
    split += jobs->streams.size() > jobs->blocks.size() + 1;
    inner += !jobs->inner_streams.empty();
    std::int32_t status;
    const Bytes decoded = run_blosc_jobs(packed, *jobs, status);
    ASSERT_EQ(status, kDecodeOk) << what;
    ASSERT_EQ(decoded, data) << what;
  }
  // Per codec, the typesize-17 cases split on writing (one per shuffle) at most.
  EXPECT_LE(unreadable, 3 * static_cast<int>(std::size(cnames)));
  EXPECT_GT(inner, 0);
  blosc_set_splitmode(BLOSC_FORWARD_COMPAT_SPLIT);
  EXPECT_GT(raw, 0);
  EXPECT_GT(split, 0);
}

TEST(DeviceBlosc, PlanRefusesWhatTheGpuMustNotTake) {
  const Bytes data = sample(50000, 0, 1);
  const Bytes packed = blosc_compress(data, 5, BLOSC_SHUFFLE, 4, "lz4", 0);
  const ByteView view{reinterpret_cast<const std::byte*>(packed.data()), packed.size()};
  EXPECT_TRUE(plan_blosc_chunk(view, SizeBound{50000, true}).has_value());
  EXPECT_FALSE(plan_blosc_chunk(view, SizeBound{49999, true}).has_value());  // size disagrees
  EXPECT_FALSE(plan_blosc_chunk(view, SizeBound{40000, false}).has_value());
  EXPECT_FALSE(plan_blosc_chunk(view.first(15), SizeBound{50000, true}).has_value());
  EXPECT_FALSE(plan_blosc_chunk(view.first(packed.size() - 1), SizeBound{50000, true}).has_value());
  // zstd and zlib inside: the CPU decodes them unless their kernels take part.
  for (const char* cname : {"zstd", "zlib"}) {
    const Bytes packed_inner = blosc_compress(data, 5, BLOSC_SHUFFLE, 4, cname, 0);
    const ByteView inner{reinterpret_cast<const std::byte*>(packed_inner.data()), packed_inner.size()};
    EXPECT_FALSE(plan_blosc_chunk(inner, SizeBound{50000, true}).has_value()) << cname;
    const auto jobs = plan_blosc_chunk(inner, SizeBound{50000, true}, 256u << 10, true);
    ASSERT_TRUE(jobs.has_value()) << cname;
    EXPECT_EQ(jobs->inner, std::string(cname) == "zstd" ? BloscInner::kZstd : BloscInner::kZlib);
    EXPECT_FALSE(jobs->inner_streams.empty());
    for (const StreamJob& s : jobs->streams) EXPECT_EQ(s.codec, StreamCodec::kCopy);
    for (const StreamJob& s : jobs->inner_streams) EXPECT_EQ(s.to_scratch, 0);
  }
}

// Mutated chunks: the plan either refuses them or yields jobs that stay inside the chunk's
// bytes and its decoded size; decoding never writes elsewhere (run_blosc_jobs checks the
// ranges). When c-blosc accepts the bytes, our result must equal its result.
TEST(DeviceBlosc, MutatedChunksStayInBounds) {
  std::mt19937_64 rng(7);
  int planned = 0, agreed = 0;
  for (int round = 0; round < 2000; ++round) {
    const std::size_t size = 1000 + rng() % 200000;
    const std::size_t typesize = std::size_t{1} << (rng() % 4);
    const Bytes data = sample(size, static_cast<int>(rng() % 4), rng());
    const char* cnames[] = {"lz4", "blosclz", "zstd", "zlib"};
    Bytes packed = blosc_compress(data, 1 + static_cast<int>(rng() % 9), static_cast<int>(rng() % 3), typesize,
                                  cnames[rng() % 4], 0);
    const int mutations = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < mutations; ++k) {
      const std::size_t at = rng() % 3 == 0 ? rng() % std::min<std::size_t>(64, packed.size()) : rng() % packed.size();
      packed[at] = static_cast<std::uint8_t>(rng());
    }
    const auto jobs = plan_blosc_chunk({reinterpret_cast<const std::byte*>(packed.data()), packed.size()},
                                       SizeBound{size, true}, 256u << 10, /*zstd_and_zlib=*/true);
    if (!jobs) continue;
    ++planned;
    std::int32_t status;
    const Bytes ours = run_blosc_jobs(packed, *jobs, status);
    Bytes theirs(size);
    const int n = blosc_decompress_ctx(packed.data(), theirs.data(), theirs.size(), 1);
    if (status == kDecodeOk && n == static_cast<int>(size)) {
      ++agreed;
      ASSERT_EQ(ours, theirs) << "round " << round;
    }
  }
  EXPECT_GT(planned, 100);
  EXPECT_GT(agreed, 10);
}

// ---- CRC-32C ------------------------------------------------------------------------------

std::vector<std::uint32_t> crc_tables() {
  std::vector<std::uint32_t> table(8 * 256);
  for (unsigned e = 0; e < table.size(); ++e) crc32c_fill_tables(table.data(), e);
  return table;
}

TEST(DeviceCrc32c, TablesAndCombineMatchTheCpuChecksum) {
  const auto table = crc_tables();
  std::mt19937_64 rng(3);
  for (std::size_t size : {0u, 1u, 7u, 8u, 9u, 4096u, 100001u}) {
    const Bytes data = sample(size, 3, size);
    const ByteView view{reinterpret_cast<const std::byte*>(data.data()), data.size()};
    const std::uint32_t expected = crc32c(view);
    EXPECT_EQ(crc32c_with_table(table.data(), data.data(), size), expected) << size;
    // Split anywhere and combine, as the segment kernels do.
    for (int k = 0; k < 5; ++k) {
      const std::size_t cut = size == 0 ? 0 : rng() % (size + 1);
      const std::uint32_t a = crc32c_with_table(table.data(), data.data(), cut);
      const std::uint32_t b = crc32c_with_table(table.data(), data.data() + cut, size - cut);
      EXPECT_EQ(crc32c_combine(a, b, size - cut), expected) << size << " cut " << cut;
    }
  }
  EXPECT_EQ(crc32c_combine(0x12345678u, 0, 0), 0x12345678u);  // empty right part
  EXPECT_EQ(crc32c_combine(0, 0x9ABCDEF0u, 77), 0x9ABCDEF0u);   // empty left part
}

// Lanes of a match never read what other lanes write in the same match, so running the
// lanes one after another on the host is exact for any width.
TEST(DeviceMatch, EveryWidthCopiesLikeAByteLoop) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 2000; ++round) {
    const std::uint64_t distance = 1 + rng() % 70;
    const std::uint64_t length = 1 + rng() % 300;
    const unsigned width = (1u << (rng() % 6)) + (rng() % 2 ? 0 : static_cast<unsigned>(rng() % 3));
    Bytes expected(distance + length), ours(distance + length);
    for (std::uint64_t i = 0; i < distance; ++i) expected[i] = ours[i] = static_cast<std::uint8_t>(rng());
    for (std::uint64_t k = 0; k < length; ++k) expected[distance + k] = expected[k];
    for (unsigned lane = 0; lane < width; ++lane) lane_match(ours.data() + distance, distance, length, lane, width);
    ASSERT_EQ(ours, expected) << "distance " << distance << " length " << length << " width " << width;
  }
}

// ---- Shuffles -------------------------------------------------------------------------------

TEST(DeviceShuffle, BitColumnTransposeIsExact) {
  // One group of 8 elements of 2 bytes, built bit by bit from the layout definition.
  const unsigned typesize = 2;
  const std::uint64_t elements = 8;
  std::uint8_t values[16];
  std::mt19937 rng(5);
  for (auto& v : values) v = static_cast<std::uint8_t>(rng());
  std::uint8_t shuffled[16] = {};
  for (unsigned i = 0; i < elements; ++i) {
    for (unsigned j = 0; j < typesize; ++j) {
      for (unsigned b = 0; b < 8; ++b) {
        const unsigned bit = (values[i * typesize + j] >> b) & 1u;
        shuffled[(j * 8 + b) * (elements / 8) + i / 8] |= static_cast<std::uint8_t>(bit << (i % 8));
      }
    }
  }
  for (unsigned j = 0; j < typesize; ++j) {
    const std::uint64_t w = bitunshuffled_column8(shuffled, elements, 0, j);
    for (unsigned i = 0; i < 8; ++i) EXPECT_EQ(static_cast<std::uint8_t>(w >> (8 * i)), values[i * typesize + j]);
  }
}

}  // namespace
}  // namespace zarrkit::gpu
