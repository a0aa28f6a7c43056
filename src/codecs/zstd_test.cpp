#include <gtest/gtest.h>

#include <zstd.h>

#include "codecs/compressor_test_support.h"
#include "codecs/register.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

// Reference encodings of reference_sample() (840 bytes), made with numcodecs 0.16:
// Zstd(level=0).encode(sample)
constexpr std::string_view kNumcodecsLevel0 =
    "28b52ffd60480215090064117a6172726b697420636f6d70726573736573206368756e6b733b20000104091019243140"
    "51647990a9c4e10526496e95bee91b4a7baee31f5893d0145598dd2972bd0f5eaf075cb3116cc92d8ef15bc2309b0d7c"
    "ed65da56cf4fcc50d159de6af38315a43acd67039c3cd97d23c6701cc57527d68c44f9b57333f0b47a420cd3a1714317"
    "e8c09a76543416f5dbc3ad998777695d534b45413f3f41454b535d69778799adc3dbf5163454769ac0e8174371a1d30c"
    "427ab4f03373b5f9448cd62775c51c70c6237dd93c9c0367cd3aa41583f36ade59d150cc4fcf56da65ed7c0d9b30c25b"
    "f18e2dc96c11b35c07af5e0fbd7229dd985514d093581fe3ae7b4a1be9be956e492605e1c4a990796451403124191009"
    "040102007bfd2692fbbb3ac7";
// Zstd(level=3, checksum=True).encode(sample)
constexpr std::string_view kNumcodecsLevel3Checksum =
    "28b52ffd64480215090064117a6172726b697420636f6d70726573736573206368756e6b733b20000104091019243140"
    "51647990a9c4e10526496e95bee91b4a7baee31f5893d0145598dd2972bd0f5eaf075cb3116cc92d8ef15bc2309b0d7c"
    "ed65da56cf4fcc50d159de6af38315a43acd67039c3cd97d23c6701cc57527d68c44f9b57333f0b47a420cd3a1714317"
    "e8c09a76543416f5dbc3ad998777695d534b45413f3f41454b535d69778799adc3dbf5163454769ac0e8174371a1d30c"
    "427ab4f03373b5f9448cd62775c51c70c6237dd93c9c0367cd3aa41583f36ade59d150cc4fcf56da65ed7c0d9b30c25b"
    "f18e2dc96c11b35c07af5e0fbd7229dd985514d093581fe3ae7b4a1be9be956e492605e1c4a990796451403124191009"
    "040102007bfd2692fbbb3ac77bf1ba3a";
// Zstd(level=-5).encode(sample)
constexpr std::string_view kNumcodecsLevelMinus5 =
    "28b52ffd604802f5090014137a6172726b697420636f6d70726573736573206368756e6b733b207a6172726b69742063"
    "6f6d70726573736573206368756e6b733b2000010409101924314051647990a9c4e10526496e95bee91b4a7baee31f58"
    "93d0145598dd2972bd0f5eaf075cb3116cc92d8ef15bc2309b0d7ced65da56cf4fcc50d159de6af38315a43acd67039c"
    "3cd97d23c6701cc57527d68c44f9b57333f0b47a420cd3a1714317e8c09a76543416f5dbc3ad998777695d534b45413f"
    "3f41454b535d69778799adc3dbf5163454769ac0e8174371a1d30c427ab4f03373b5f9448cd62775c51c70c6237dd93c"
    "9c0367cd3aa41583f36ade59d150cc4fcf56da65ed7c0d9b30c25bf18e2dc96c11b35c07af5e0fbd7229dd985514d093"
    "581fe3ae7b4a1be9be956e492605e1c4a990796451403124191009040102007bfd2692369e550505";
// `printf 'hello hello hello zarrkit\n' | zstd -c`: a streaming frame, with no content size
constexpr std::string_view kCliStreamingFrame = "28b52ffd0458a500007068656c6c6f207a6172726b69740a0100e14a11da7b21bf";
// A skippable frame (magic 0x184D2A50, 3 bytes of payload), which decoders pass over.
constexpr std::string_view kSkippableFrame = "502a4d1803000000abcdef";

// A frame without a content size, as TensorStore's streaming writer makes them.
Bytes streaming_frame(const Bytes& data, int level = 3, int window_log = 0) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, window_log);  // 0: the level's
  Bytes out(ZSTD_compressBound(data.size()) + 64);
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  // Feeding the input before ending the frame keeps zstd from learning its size.
  EXPECT_FALSE(ZSTD_isError(ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_continue)));
  ZSTD_inBuffer none{nullptr, 0, 0};
  std::size_t remaining = ZSTD_compressStream2(cctx, &o, &none, ZSTD_e_end);
  ZSTD_freeCCtx(cctx);
  EXPECT_EQ(remaining, 0u);
  out.resize(o.pos);
  EXPECT_EQ(ZSTD_getFrameContentSize(out.data(), out.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  return out;
}

class ZstdTest : public ::testing::Test {
 protected:
  ZstdTest() { register_zstd_codec(registry_); }
  std::shared_ptr<const BytesToBytesCodec> v3(const nlohmann::json& config, std::string name = "zstd") {
    return as_bytes_codec(registry_.make_v3({{"name", name}, {"configuration", config}}, CodecContext{}));
  }
  std::shared_ptr<const BytesToBytesCodec> v2(const nlohmann::json& entry) {
    return as_bytes_codec(registry_.make_v2(entry, CodecContext{}));
  }
  Bytes decode(const Bytes& encoded, SizeBound bound) {
    return to_vector(v3({{"level", 0}})->decode(view(encoded), bound, ChunkSpec{}));
  }
  CodecRegistry registry_;
};

TEST_F(ZstdTest, RoundTripsAtManyLevels) {
  for (int level : {-131072, -5, 0, 1, 3, 9}) {
    SCOPED_TRACE(level);
    expect_round_trips(*v3({{"level", level}}));
  }
  expect_round_trips(*v3({{"level", 3}, {"checksum", true}}));
  expect_round_trip(*v3({{"level", 22}}), reference_sample());
}

TEST_F(ZstdTest, WritesTheContentSizeAndTheChecksumWhenAsked) {
  const Bytes sample = reference_sample();
  Bytes plain = to_vector(v3({{"level", 3}})->encode(view(sample), ChunkSpec{}));
  EXPECT_EQ(ZSTD_getFrameContentSize(plain.data(), plain.size()), sample.size());
  Bytes empty = to_vector(v3({{"level", 3}})->encode({}, ChunkSpec{}));
  EXPECT_EQ(ZSTD_getFrameContentSize(empty.data(), empty.size()), 0u);
  Bytes checked = to_vector(v3({{"level", 3}, {"checksum", true}})->encode(view(sample), ChunkSpec{}));
  EXPECT_EQ(checked.size(), plain.size() + 4);  // the 4-byte content checksum
  EXPECT_EQ(checked[4] & std::byte{0x04}, std::byte{0x04});  // Content_Checksum_flag
}

TEST_F(ZstdTest, DecodesNumcodecsOutput) {
  const Bytes sample = reference_sample();
  for (auto hex : {kNumcodecsLevel0, kNumcodecsLevel3Checksum, kNumcodecsLevelMinus5}) {
    EXPECT_EQ(decode(from_hex(hex), exact(sample.size())), sample);
    EXPECT_EQ(decode(from_hex(hex), ceiling(sample.size())), sample);
    EXPECT_EQ(decode(from_hex(hex), ceiling(1 << 20)), sample);
    EXPECT_EQ(decode(from_hex(hex), ceiling(std::uint64_t{1} << 30)), sample);
  }
}

TEST_F(ZstdTest, DecodesFramesWithoutContentSize) {
  const Bytes hello = to_bytes("hello hello hello zarrkit\n");
  EXPECT_EQ(decode(from_hex(kCliStreamingFrame), exact(hello.size())), hello);
  EXPECT_EQ(decode(from_hex(kCliStreamingFrame), ceiling(hello.size())), hello);
  EXPECT_EQ(decode(from_hex(kCliStreamingFrame), ceiling(1000)), hello);
  // A large multi-block frame, under an exact bound, a one-call ceiling and a streaming ceiling.
  const Bytes big = concat(compressible_bytes(1 << 20), random_bytes(300000));
  const Bytes frame = streaming_frame(big);
  EXPECT_EQ(decode(frame, exact(big.size())), big);
  EXPECT_EQ(decode(frame, ceiling(big.size())), big);
  EXPECT_EQ(decode(frame, ceiling(std::uint64_t{1} << 30)), big);
  expect_error<DataLossError>([&] { decode(frame, exact(big.size() - 1)); }, "decoded size exceeds");
  expect_error<DataLossError>([&] { decode(frame, ceiling(big.size() - 1)); }, "decoded size exceeds");
  expect_error<DataLossError>([&] { decode(frame, exact(big.size() + 1)); }, "expected exactly");
}

TEST_F(ZstdTest, DecodesConcatenatedFrames) {
  const Bytes sample = reference_sample();
  const Bytes hello = to_bytes("hello hello hello zarrkit\n");
  const Bytes two = concat(from_hex(kNumcodecsLevel0), from_hex(kNumcodecsLevel3Checksum));
  for (SizeBound bound : {exact(2 * sample.size()), ceiling(2 * sample.size()), ceiling(std::uint64_t{1} << 30)}) {
    EXPECT_EQ(decode(two, bound), concat(sample, sample));
  }
  // Sized, skippable and unsized frames mixed.
  const Bytes mixed = concat(concat(from_hex(kNumcodecsLevel0), from_hex(kSkippableFrame)), from_hex(kCliStreamingFrame));
  const Bytes expected = concat(sample, hello);
  for (SizeBound bound : {exact(expected.size()), ceiling(expected.size()), ceiling(std::uint64_t{1} << 30)}) {
    EXPECT_EQ(decode(mixed, bound), expected);
  }
  expect_error<DataLossError>([&] { decode(mixed, ceiling(expected.size() - 1)); }, "decoded size exceeds");
  // Sized frames around a skippable one: the declared total is still known.
  const Bytes sized = concat(concat(from_hex(kSkippableFrame), from_hex(kNumcodecsLevel0)), from_hex(kSkippableFrame));
  for (SizeBound bound : {exact(sample.size()), ceiling(sample.size()), ceiling(std::uint64_t{1} << 30)}) {
    EXPECT_EQ(decode(sized, bound), sample);
  }
  EXPECT_EQ(decode(from_hex(kSkippableFrame), exact(0)), Bytes{});
  expect_error<DataLossError>([&] { decode(two, ceiling(1000)); }, "decoded size exceeds");
}

TEST_F(ZstdTest, RejectsTruncatedInput) {
  expect_truncations_rejected(*v3({{"level", 0}}), from_hex(kNumcodecsLevel0), 840);
  expect_truncations_rejected(*v3({{"level", 0}}), from_hex(kCliStreamingFrame), 26);
  // A truncated unsized frame above the one-call ceiling goes through the streaming decoder.
  const Bytes frame = streaming_frame(compressible_bytes(500000));
  for (std::size_t cut : {std::size_t{1}, std::size_t{100}, frame.size() / 2}) {
    ByteView prefix = view(frame).first(frame.size() - cut);
    expect_error<DataLossError>([&] { v3(nlohmann::json::object())->decode(prefix, ceiling(std::uint64_t{1} << 30), {}); }, "truncated");
  }
}

TEST_F(ZstdTest, RejectsCorruptInput) {
  const Bytes encoded = from_hex(kNumcodecsLevel3Checksum);  // the checksum covers the content
  // A few bits of an entropy-coded stream are padding; the content checksum catches the rest.
  for (std::uint8_t mask : {std::uint8_t{0x01}, std::uint8_t{0x80}}) {
    expect_corruptions_rejected(*v3(nlohmann::json::object()), encoded, reference_sample(), 0, encoded.size(), mask,
                                /*harmless_flips_allowed=*/true);
  }
  expect_error<DataLossError>([&] { decode(to_bytes("not zstd at all"), ceiling(100)); }, "corrupt zstd data");
  expect_error<DataLossError>([&] { decode(to_bytes("not zstd at all"), exact(100)); }, "corrupt zstd data");
  expect_error<DataLossError>([&] { decode(concat(from_hex(kNumcodecsLevel0), to_bytes("junk")), exact(840)); },
                              "corrupt zstd data");
}

TEST_F(ZstdTest, EnforcesSizeBounds) {
  expect_size_bounds_enforced(*v3({{"level", 1}}));
  // The same bomb as a streaming frame, whose size is known only by decoding it.
  const Bytes bomb = streaming_frame(Bytes(std::size_t{16} << 20, std::byte{0}), 1);
  EXPECT_LT(bomb.size(), 10000u);
  expect_error<DataLossError>([&] { decode(bomb, exact(1 << 20)); }, "decoded size exceeds");
  expect_error<DataLossError>([&] { decode(bomb, ceiling(1 << 20)); }, "decoded size exceeds");
  expect_error<DataLossError>([&] { decode(bomb, ceiling(0)); }, "decoded size exceeds");
  // A frame that declares a huge content size is refused before anything is allocated.
  Bytes lying = from_hex(kNumcodecsLevel0);  // header: magic, FHD 0x60, 2-byte size (value - 256)
  lying[4] = std::byte{0xE0};  // 8-byte Frame_Content_Size follows...
  lying.insert(lying.begin() + 5, {std::byte{0xff}, std::byte{0xff}, std::byte{0xff}, std::byte{0xff},
                                   std::byte{0xff}, std::byte{0xff}});  // ... of 2^48-ish bytes
  expect_error<DataLossError>([&] { decode(lying, ceiling(1 << 20)); }, "decoded size exceeds");
  expect_error<DataLossError>([&] { decode(lying, exact(840)); }, "decoded size exceeds");
  expect_error<DataLossError>([&] { decode({}, exact(0)); }, "empty");
}

TEST_F(ZstdTest, DecodesInPiecesOfAnySize) {
  const auto codec = v3({{"level", 3}});
  const Bytes data = concat(compressible_bytes(1 << 20), random_bytes(300000));
  const Bytes sized = to_vector(codec->encode(view(data), {}));
  const Bytes unsized = streaming_frame(data);
  const Bytes checked = to_vector(v3({{"level", 3}, {"checksum", true}})->encode(view(data), {}));
  // Two frames with a skippable one between them: the data twice.
  const Bytes twice = concat(concat(sized, from_hex(kSkippableFrame)), unsized);
  for (const auto& [frames, size] : std::vector<std::pair<Bytes, std::size_t>>{
           {sized, data.size()}, {unsized, data.size()}, {checked, data.size()}, {twice, 2 * data.size()}}) {
    for (const std::size_t piece : {std::size_t{4093}, std::size_t{65536}, std::size_t{100003}, size}) {
      SCOPED_TRACE(piece);
      EXPECT_TRUE(expect_pieces_agree(*codec, view(frames), size, piece));
    }
  }
  // Pieces of one byte, and frames ending inside a piece.
  const Bytes sample = reference_sample();
  const Bytes three = concat(concat(from_hex(kNumcodecsLevel0), from_hex(kSkippableFrame)),
                             concat(from_hex(kNumcodecsLevel3Checksum), from_hex(kNumcodecsLevelMinus5)));
  for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{839}, std::size_t{841}}) {
    SCOPED_TRACE(piece);
    EXPECT_TRUE(expect_pieces_agree(*codec, view(three), 3 * sample.size(), piece));
  }
  EXPECT_TRUE(expect_pieces_agree(*codec, view(from_hex(kSkippableFrame)), 0, 1));
  // Read from a store, the frames come a part of 256 KiB at a time.
  const auto source = std::make_shared<StreamedSource>(view(sized));
  auto reader = codec->decode_pieces(source, data.size(), {});
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(read_in_pieces(*reader, data.size(), 65536), data);
  EXPECT_LE(source->largest_read, std::size_t{256} << 10);
  EXPECT_GE(source->reads, sized.size() / (256 << 10));
}

TEST_F(ZstdTest, PiecesRefuseWhatDecodeIntoRejects) {
  const auto codec = v3({{"level", 3}});
  const Bytes data = concat(compressible_bytes(300000), random_bytes(5000));
  const Bytes sized = to_vector(codec->encode(view(data), {}));
  const Bytes unsized = streaming_frame(data);
  Bytes checked = to_vector(v3({{"level", 3}, {"checksum", true}})->encode(view(data), {}));
  // Where the frames declare another size, or there are none, there is no reader at all.
  EXPECT_EQ(codec->decode_pieces(in_memory(view(sized)), data.size() + 1, {}), nullptr);
  EXPECT_EQ(codec->decode_pieces(in_memory(view(sized)), data.size() - 1, {}), nullptr);
  EXPECT_EQ(codec->decode_pieces(in_memory({}), 0, {}), nullptr);
  // Read from a store, such sizes are found out while decoding.
  EXPECT_FALSE(expect_pieces_agree(*codec, view(sized), data.size() + 1, 65536));
  EXPECT_FALSE(expect_pieces_agree(*codec, view(sized), data.size() - 1, 65536));
  expect_error<DataLossError>([&] { codec->decode_pieces(in_memory(view(to_bytes("not zstd at all"))), 100, {}); },
                              "corrupt zstd data");
  for (const std::size_t piece : {std::size_t{1000}, std::size_t{65536}}) {
    SCOPED_TRACE(piece);
    // One byte more or fewer than an unsized frame holds.
    EXPECT_FALSE(expect_pieces_agree(*codec, view(unsized), data.size() + 1, piece));
    EXPECT_FALSE(expect_pieces_agree(*codec, view(unsized), data.size() - 1, piece));
    // Cut short, followed by junk, or with a wrong checksum.
    for (const Bytes* frame : {&sized, &unsized}) {
      for (const std::size_t cut : {std::size_t{1}, std::size_t{4}, std::size_t{100}, frame->size() / 2}) {
        EXPECT_FALSE(expect_pieces_agree(*codec, view(*frame).first(frame->size() - cut), data.size(), piece));
      }
      EXPECT_FALSE(expect_pieces_agree(*codec, view(concat(*frame, to_bytes("junk"))), data.size(), piece));
      EXPECT_FALSE(expect_pieces_agree(*codec, view(concat(*frame, from_hex(kNumcodecsLevel0))), data.size(), piece));
    }
    checked.back() ^= std::byte{1};
    EXPECT_FALSE(expect_pieces_agree(*codec, view(checked), data.size(), piece));
    checked.back() ^= std::byte{1};
  }
  // A window larger than pieces allow (16 MiB): refused, and decode_into decodes it.
  const Bytes wide = streaming_frame(data, 3, 24);
  auto reader = codec->decode_pieces(in_memory(view(wide)), data.size(), {});
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(read_in_pieces(*reader, data.size(), 65536), std::nullopt);
  Bytes out(data.size());
  codec->decode_into(view(wide), MutableByteView(out), {});
  EXPECT_EQ(out, data);
  // A reader left unfinished does not disturb the next one on this thread.
  reader = codec->decode_pieces(in_memory(view(unsized)), data.size(), {});
  ASSERT_TRUE(reader->read(MutableByteView(out).first(1000)));
  EXPECT_TRUE(expect_pieces_agree(*codec, view(sized), data.size(), 65536));
}

TEST_F(ZstdTest, RejectsBadConfiguration) {
  expect_error<InvalidArgumentError>([&] { v3({{"level", 23}}); }, "from -131072 to 22");
  expect_error<InvalidArgumentError>([&] { v3({{"level", -131073}}); }, "from -131072 to 22");
  expect_error<InvalidArgumentError>([&] { v3({{"level", "3"}}); }, "must be an integer");
  expect_error<InvalidArgumentError>([&] { v3({{"level", 3}, {"checksum", "yes"}}); }, "true or false");
  expect_error<InvalidArgumentError>([&] { v3({{"level", 3}, {"checksum", 1}}); }, "true or false");
  expect_error<InvalidArgumentError>([&] { v3({{"level", 3}, {"window", 20}}); }, "unexpected configuration key");
  expect_error<InvalidArgumentError>([&] { v2({{"id", "zstd"}, {"level", 3.0}}); }, "must be an integer");
}

TEST_F(ZstdTest, JsonRoundTrip) {
  const nlohmann::json plain = {{"name", "zstd"}, {"configuration", {{"level", 3}}}};
  const nlohmann::json checked = {{"name", "zstd"}, {"configuration", {{"level", -2}, {"checksum", true}}}};
  EXPECT_EQ(v3({{"level", 3}, {"checksum", false}})->to_json(), plain);  // false is left out
  EXPECT_EQ(v3({{"level", -2}, {"checksum", true}})->to_json(), checked);
  for (const auto& j : {plain, checked}) {
    auto codec = as_bytes_codec(registry_.make_v3(j, {}));
    EXPECT_EQ(codec->to_json(), j);
    EXPECT_EQ(v2(*codec->to_v2_json())->to_json(), j);
  }
  EXPECT_EQ(v3({{"level", 3}})->to_v2_json(), nlohmann::json({{"id", "zstd"}, {"level", 3}}));
  // numcodecs' defaults and spellings.
  EXPECT_EQ(v2({{"id", "zstd"}})->to_json(), nlohmann::json({{"name", "zstd"}, {"configuration", {{"level", 0}}}}));
  EXPECT_EQ(v3({{"level", 1}}, "numcodecs.zstd")->to_json(),
            nlohmann::json({{"name", "zstd"}, {"configuration", {{"level", 1}}}}));
  EXPECT_EQ(v3({{"level", 1}, {"checksum", nullptr}})->to_json(),
            nlohmann::json({{"name", "zstd"}, {"configuration", {{"level", 1}}}}));
}

}  // namespace
}  // namespace zarrkit
