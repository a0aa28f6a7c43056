// The window decoder (lz4_window.cuh) run on the host (width 1) against liblz4 and the
// warp-direct decoder: the parse, the ring of staged input and the output window are the
// kernels' own code. Small rings and windows make every path common: ring refills and
// restarts, reads past the ring, matches further back than the window.
#include "gpu/lz4_window.cuh"

#include <memory>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "gpu/lz4_test_blocks.h"

namespace zarrkit::gpu {
namespace {

using lz4_testing::Bytes;

struct Sizes {
  std::uint32_t ring;
  std::uint32_t window;
};
// The kernels' sizes (kernels.cu) and small ones.
constexpr Sizes kSizes[] = {{64, 128}, {128, 1024}, {2048, 16384}, {2048, 65536}};

// Memory laid out as on the device: the stream starts `shift` bytes after a 16-byte
// boundary; ring and window are 16-byte aligned; each buffer has exactly its size, with
// guard bytes after it that must stay untouched.
class WindowDecode {
 public:
  static constexpr std::size_t kGuard = 32;

  WindowDecode(const Bytes& block, std::size_t shift, std::size_t out_size, Sizes sizes)
      : input_(block.size() + shift + 16 + kGuard),
        ring_(sizes.ring + kRingMirror + kGuard, 0x11),
        window_(sizes.window + kGuard, 0x22),
        out_(out_size + kGuard, 0xCD),
        shift_(shift),
        sizes_(sizes) {
    std::memcpy(stream(), block.data(), block.size());
    size_ = block.size();
  }

  std::int32_t run() {
    RingInput in(stream(), static_cast<std::uint32_t>(size_), aligned(ring_), sizes_.ring, 0, 1);
    WindowOutput out(out_.data(), static_cast<std::uint32_t>(out_.size() - kGuard), aligned(window_),
                     sizes_.window);
    return lz4_decode_window(in, static_cast<std::uint32_t>(size_), out,
                             static_cast<std::uint32_t>(out_.size() - kGuard), 0, 1);
  }

  const std::uint8_t* output() const { return out_.data(); }
  bool guards_intact() const {
    auto intact = [](const std::vector<std::uint8_t>& v, std::size_t from, std::uint8_t value) {
      for (std::size_t i = from; i < v.size(); ++i) {
        if (v[i] != value) return false;
      }
      return true;
    };
    return intact(out_, out_.size() - kGuard, 0xCD) && intact(ring_, sizes_.ring + kRingMirror + offset_of(ring_), 0x11) &&
           intact(window_, sizes_.window + offset_of(window_), 0x22);
  }

 private:
  // Vectors of bytes are not promised 16-byte alignment: use the first aligned byte (the
  // guard leaves room for it).
  static std::size_t offset_of(const std::vector<std::uint8_t>& v) {
    return (16 - (reinterpret_cast<std::uintptr_t>(v.data()) & 15u)) & 15u;
  }
  static std::uint8_t* aligned(std::vector<std::uint8_t>& v) { return v.data() + offset_of(v); }
  std::uint8_t* stream() { return aligned(input_) + shift_; }

  std::vector<std::uint8_t> input_, ring_, window_, out_;
  std::size_t shift_, size_ = 0;
  Sizes sizes_;
};

TEST(Lz4Window, DecodesWhatLz4Encodes) {
  for (std::size_t size : {0u, 1u, 5u, 12u, 13u, 64u, 1000u, 65536u, 200000u, 1u << 20}) {
    for (int kind = 0; kind < 4; ++kind) {
      for (bool high : {false, true}) {
        const Bytes data = lz4_testing::sample(size, kind, size * 7 + kind);
        const Bytes packed = lz4_testing::lz4_compress(data, high);
        const std::size_t shift = (size + static_cast<std::size_t>(kind)) % 16;
        for (const Sizes sizes : kSizes) {
          WindowDecode d(packed, shift, size, sizes);
          const std::string what = fmt::format("size {} kind {} high {} shift {} ring {} window {}", size, kind,
                                               high, shift, sizes.ring, sizes.window);
          ASSERT_EQ(d.run(), kDecodeOk) << what;
          ASSERT_TRUE(std::equal(data.begin(), data.end(), d.output())) << what;
          ASSERT_TRUE(d.guards_intact()) << what;
        }
      }
    }
  }
}

// The benchmarks' data: short matches at offsets up to 64 KiB, most of them further back
// than the small windows reach.
TEST(Lz4Window, DecodesFamilyN) {
  for (const Sizes sizes : kSizes) {
    for (std::size_t size : {65536u, 300000u}) {
      const Bytes data = lz4_testing::family_n(size, size);
      const Bytes packed = lz4_testing::lz4_compress(data, false);
      for (std::size_t shift : {0u, 3u}) {
        WindowDecode d(packed, shift, size, sizes);
        ASSERT_EQ(d.run(), kDecodeOk) << size << " window " << sizes.window;
        ASSERT_TRUE(std::equal(data.begin(), data.end(), d.output())) << size << " window " << sizes.window;
        ASSERT_TRUE(d.guards_intact());
      }
    }
  }
}

// Long literal runs between matches leave the ring behind (it restarts from the parse) and
// long matches reach past the window.
TEST(Lz4Window, LongRunsAndLongMatches) {
  std::mt19937_64 rng(5);
  Bytes data;
  while (data.size() < 400000) {
    const Bytes noise = lz4_testing::sample(1 + rng() % 9000, 3, rng());
    data.insert(data.end(), noise.begin(), noise.end());
    const std::size_t repeat = 1 + rng() % 3000;
    const std::size_t distance = 1 + rng() % std::min<std::size_t>(data.size(), 70000);
    for (std::size_t k = 0; k < repeat; ++k) data.push_back(data[data.size() - distance]);
  }
  const Bytes packed = lz4_testing::lz4_compress(data, true);
  for (const Sizes sizes : kSizes) {
    for (std::size_t shift : {0u, 7u, 15u}) {
      WindowDecode d(packed, shift, data.size(), sizes);
      ASSERT_EQ(d.run(), kDecodeOk) << "window " << sizes.window << " shift " << shift;
      ASSERT_TRUE(std::equal(data.begin(), data.end(), d.output())) << "window " << sizes.window;
      ASSERT_TRUE(d.guards_intact());
    }
  }
}

// Random valid blocks (runs, overlapping and far matches, long lengths), as liblz4 reads them.
TEST(Lz4Window, DecodesRandomSequences) {
  std::mt19937_64 rng(17);
  std::size_t sequences = 0;
  for (int round = 0; round < 300; ++round) {
    const std::size_t size = round % 10 == 0 ? 1 + rng() % 400000 : 1 + rng() % 20000;
    const auto [block, data] = lz4_testing::random_block(rng, size);
    Bytes expected;
    ASSERT_TRUE(lz4_testing::liblz4_decodes(block, size, expected)) << "round " << round;
    ASSERT_EQ(expected, data) << "round " << round;  // the generator writes valid blocks
    sequences += block.size() < size;  // matches made it shorter
    for (const Sizes sizes : kSizes) {
      WindowDecode d(block, static_cast<std::size_t>(round) % 16, size, sizes);
      ASSERT_EQ(d.run(), kDecodeOk) << "round " << round << " window " << sizes.window;
      ASSERT_TRUE(std::equal(data.begin(), data.end(), d.output())) << "round " << round << " window " << sizes.window;
      ASSERT_TRUE(d.guards_intact());
    }
  }
  EXPECT_GT(sequences, 200u);
}

// The corrupted-block corpus: the same verdict as liblz4 (and the same status as the
// warp-direct decoder), the same bytes when accepted, nothing written outside the output.
TEST(Lz4Window, AgreesWithLiblz4OnCorruptBlocks) {
  std::mt19937_64 rng(42);
  int accepted = 0, refused = 0;
  for (int round = 0; round < 3000; ++round) {
    const auto [packed, size] = lz4_testing::mutated_block(rng);
    Bytes expected;
    const bool liblz4_ok = lz4_testing::liblz4_decodes(packed, size, expected);
    Bytes direct(size + 1);
    const std::int32_t direct_status = lz4_decode_block(packed.data(), packed.size(), direct.data(), size, 0, 1);
    for (const Sizes sizes : kSizes) {
      const std::size_t shift = static_cast<std::size_t>(round) % 16;
      WindowDecode d(packed, shift, size, sizes);
      const std::int32_t status = d.run();
      const std::string what = fmt::format("round {} window {}", round, sizes.window);
      ASSERT_TRUE(d.guards_intact()) << what;
      ASSERT_EQ(status, direct_status) << what;
      if (liblz4_ok && lz4_testing::has_zero_offset(packed)) {
        ASSERT_NE(status, kDecodeOk) << what;  // see DeviceLz4.AgreesWithLiblz4OnCorruptBlocks
      } else if (liblz4_ok) {
        ASSERT_EQ(status, kDecodeOk) << what;
        ASSERT_TRUE(std::equal(expected.begin(), expected.end(), d.output())) << what;
      } else {
        ASSERT_NE(status, kDecodeOk) << what;
      }
    }
    accepted += liblz4_ok;
    refused += !liblz4_ok;
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 100);
}

// The 16 bytes at any position of the ring, across its wrap-around, equal the stream's.
TEST(Lz4Window, RingReadsAcrossTheWrap) {
  const Bytes data = lz4_testing::sample(1000, 3, 9);
  for (std::size_t shift = 0; shift < 16; ++shift) {
    std::vector<std::uint8_t> input(data.size() + 32), ring(64 + kRingMirror + 16);
    std::uint8_t* stream = input.data() + ((16 - (reinterpret_cast<std::uintptr_t>(input.data()) & 15u)) & 15u) + shift;
    std::memcpy(stream, data.data(), data.size());
    std::uint8_t* r = ring.data() + ((16 - (reinterpret_cast<std::uintptr_t>(ring.data()) & 15u)) & 15u);
    RingInput in(stream, static_cast<std::uint32_t>(data.size()), r, 64, 0, 1);
    int fetched = 0;
    for (std::uint32_t i = 0; i < data.size(); ++i) {
      in.advance(i, i);
      Bytes16 b;
      if (in.bytes16(i, b)) {
        ++fetched;
        for (std::uint32_t k = 0; k < 16; ++k) ASSERT_EQ(b.byte(k), data[i + k]) << "shift " << shift << " at " << i;
      }
      ASSERT_EQ(in(i), data[i]) << "shift " << shift << " at " << i;
    }
    EXPECT_GT(fetched, 500) << "shift " << shift;  // most positions come from the ring
  }
}

}  // namespace
}  // namespace zarrkit::gpu
