// The choice of stream-decode kernel per batch (runs everywhere: no device needed).
#include "gpu/decode_variant.h"

#include <gtest/gtest.h>

namespace zarrkit::gpu {
namespace {

// An H100's figures: 132 SMs; 3, 6 and 11 warps of the 64, 32 and 16 KiB windows per SM
// (228 KiB of shared memory per SM, 1 KiB of it reserved per thread block).
constexpr WindowResidency kH100{132, 11, 6, 3};

StreamBatchShape lz4_blocks(std::uint64_t count, std::uint64_t bytes) { return {count, count, count * bytes, false}; }

TEST(DecodeVariant, BloscSplitsAndShortBlocksStayDirect) {
  EXPECT_EQ(choose_decode_variant({8192, 0, 0, true}, kH100), DecodeVariant::kDirect);  // BloscLZ / copies
  // blosc-lz4 splits of 16 KiB (64 KiB chunks) and 128 KiB (1 MiB chunks and more)
  EXPECT_EQ(choose_decode_variant({65536, 65536, 65536ull << 14, true}, kH100), DecodeVariant::kDirect);
  EXPECT_EQ(choose_decode_variant({8192, 8192, 8192ull << 17, true}, kH100), DecodeVariant::kDirect);
  EXPECT_EQ(choose_decode_variant(lz4_blocks(100, 4096), kH100), DecodeVariant::kDirect);
}

TEST(DecodeVariant, LongBlocksTakeTheLargestWindowThatHoldsTheBatch) {
  EXPECT_EQ(choose_decode_variant(lz4_blocks(64, 16u << 20), kH100), DecodeVariant::kWindow64);
  EXPECT_EQ(choose_decode_variant(lz4_blocks(256, 4u << 20), kH100), DecodeVariant::kWindow64);
  EXPECT_EQ(choose_decode_variant(lz4_blocks(396, 4u << 20), kH100), DecodeVariant::kWindow64);
  EXPECT_EQ(choose_decode_variant(lz4_blocks(397, 4u << 20), kH100), DecodeVariant::kWindow32);
  EXPECT_EQ(choose_decode_variant(lz4_blocks(792, 1u << 20), kH100), DecodeVariant::kWindow32);
  EXPECT_EQ(choose_decode_variant(lz4_blocks(1024, 1u << 20), kH100), DecodeVariant::kWindow16);
  EXPECT_EQ(choose_decode_variant(lz4_blocks(1452, 256u << 10), kH100), DecodeVariant::kWindow16);
}

TEST(DecodeVariant, MoreStreamsThanWindowWarpsStayDirect) {
  EXPECT_EQ(choose_decode_variant(lz4_blocks(1453, 256u << 10), kH100), DecodeVariant::kDirect);
  EXPECT_EQ(choose_decode_variant(lz4_blocks(4096, 256u << 10), kH100), DecodeVariant::kDirect);
  EXPECT_EQ(choose_decode_variant(lz4_blocks(16384, 64u << 10), kH100), DecodeVariant::kDirect);
}

TEST(DecodeVariant, WithoutWindowResidencyStaysDirect) {
  EXPECT_EQ(choose_decode_variant(lz4_blocks(64, 16u << 20), WindowResidency{}), DecodeVariant::kDirect);
  EXPECT_EQ(choose_decode_variant(lz4_blocks(64, 16u << 20), WindowResidency{132, 0, 0, 0}), DecodeVariant::kDirect);
}

TEST(DecodeVariant, ShapeCountsLz4StreamsAndTheirBytes) {
  std::vector<StreamJob> jobs(3);
  jobs[0].codec = StreamCodec::kLz4;
  jobs[0].dst_size = 1000;
  jobs[1].codec = StreamCodec::kCopy;
  jobs[1].dst_size = 500;
  jobs[2].codec = StreamCodec::kLz4;
  jobs[2].dst_size = 24;
  const StreamBatchShape shape = shape_of(jobs, false);
  EXPECT_EQ(shape.streams, 3u);
  EXPECT_EQ(shape.lz4_streams, 2u);
  EXPECT_EQ(shape.lz4_bytes, 1024u);
  EXPECT_FALSE(shape.blosc);
  EXPECT_TRUE(shape_of(jobs, true).blosc);
}

}  // namespace
}  // namespace zarrkit::gpu
