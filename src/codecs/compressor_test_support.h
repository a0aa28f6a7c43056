// Helpers for the tests of the bytes->bytes codecs (gzip_test.cpp, zstd_test.cpp, ...).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "zarrkit/codec.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit::testing {

using Bytes = std::vector<std::byte>;

inline Bytes from_hex(std::string_view hex) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    ADD_FAILURE() << "bad hex digit " << c;
    return 0;
  };
  Bytes out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::byte>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  }
  return out;
}

inline Bytes to_bytes(std::string_view s) {
  Bytes out(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) out[i] = static_cast<std::byte>(s[i]);
  return out;
}

inline Bytes to_vector(const Buffer& b) {
  auto v = b.view();
  return Bytes(v.begin(), v.end());
}

inline ByteView view(const Bytes& b) { return {b.data(), b.size()}; }

inline Bytes concat(const Bytes& a, const Bytes& b) {
  Bytes out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// The input the reference encodings in the tests were made from (with numcodecs):
//   (b"zarrkit compresses chunks; " * 20) + bytes((i * i) % 251 for i in range(300))
inline Bytes reference_sample() {
  std::string text;
  for (int i = 0; i < 20; ++i) text += "zarrkit compresses chunks; ";
  Bytes out = to_bytes(text);
  for (unsigned i = 0; i < 300; ++i) out.push_back(static_cast<std::byte>((i * i) % 251));
  return out;
}

// Compressible data: runs of a few symbols with a slow drift.
inline Bytes compressible_bytes(std::size_t n) {
  Bytes out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>((i / 97) % 7 + (i % 3 == 0 ? 1 : 0));
  return out;
}

// Incompressible data: uniform pseudo-random bytes.
inline Bytes random_bytes(std::size_t n, std::uint32_t seed = 12345) {
  std::mt19937 engine(seed);
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::byte>(engine() & 0xFFu);
  return out;
}

inline SizeBound exact(std::uint64_t n) { return {n, true}; }
inline SizeBound ceiling(std::uint64_t n) { return {n, false}; }

inline std::shared_ptr<const BytesToBytesCodec> as_bytes_codec(std::shared_ptr<const Codec> codec) {
  auto typed = std::dynamic_pointer_cast<const BytesToBytesCodec>(codec);
  EXPECT_NE(typed, nullptr) << "not a bytes->bytes codec";
  return typed;
}

// Encodes `data` and decodes it back under an exact bound, a tight ceiling and a loose one.
inline void expect_round_trip(const BytesToBytesCodec& codec, const Bytes& data) {
  ChunkSpec spec;
  Buffer encoded = codec.encode(view(data), spec);
  if (auto size = codec.encoded_size(data.size())) {
    EXPECT_EQ(encoded.size(), *size);
  }
  EXPECT_EQ(to_vector(codec.decode(encoded.view(), exact(data.size()), spec)), data) << "exact bound";
  EXPECT_EQ(to_vector(codec.decode(encoded.view(), ceiling(data.size()), spec)), data) << "tight ceiling";
  EXPECT_EQ(to_vector(codec.decode(encoded.view(), ceiling(data.size() * 3 + 1000), spec)), data) << "loose ceiling";
}

// Runs `f` and checks that it throws exactly ErrorType with `fragment` in its message.
template <typename ErrorType, typename F>
void expect_error(F&& f, std::string_view fragment = {}) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing \"" << fragment << "\", got none";
  } catch (const ErrorType& e) {
    EXPECT_NE(std::string_view(e.what()).find(fragment), std::string_view::npos)
        << "message \"" << e.what() << "\" lacks \"" << fragment << "\"";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong error type: " << e.what();
  }
}

// Every proper prefix of a valid encoding of `decoded_size` bytes fails with DataLossError,
// under an exact bound and under a ceiling.
inline void expect_truncations_rejected(const BytesToBytesCodec& codec, const Bytes& encoded,
                                        std::uint64_t decoded_size) {
  ChunkSpec spec;
  for (std::size_t n = 0; n < encoded.size(); ++n) {
    ByteView prefix = view(encoded).first(n);
    expect_error<DataLossError>([&] { codec.decode(prefix, exact(decoded_size), spec); });
    expect_error<DataLossError>([&] { codec.decode(prefix, ceiling(decoded_size * 2 + 100), spec); });
  }
}

// Flipping one bit of `encoded` at each position in [first, end) fails with DataLossError,
// or (only where `harmless_flips_allowed`: bits a format ignores, such as padding in an
// entropy-coded stream) still decodes to exactly `decoded`. Never to different data.
inline void expect_corruptions_rejected(const BytesToBytesCodec& codec, const Bytes& encoded, const Bytes& decoded,
                                        std::size_t first, std::size_t end, std::uint8_t mask = 0x10,
                                        bool harmless_flips_allowed = false) {
  ChunkSpec spec;
  std::size_t harmless = 0;
  for (std::size_t i = first; i < end; ++i) {
    Bytes corrupt = encoded;
    corrupt[i] ^= std::byte{mask};
    SCOPED_TRACE("byte " + std::to_string(i));
    try {
      Buffer out = codec.decode(view(corrupt), exact(decoded.size()), spec);
      EXPECT_TRUE(harmless_flips_allowed) << "a flipped bit went unnoticed";
      EXPECT_EQ(to_vector(out), decoded) << "a flipped bit changed the output without an error";
      ++harmless;
    } catch (const DataLossError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "wrong error type: " << e.what();
    }
  }
  EXPECT_LE(harmless * 10, end - first) << "most flips must be detected";
}

// A small input that decodes to far more than the bound (a decompression bomb) fails with
// "decoded size exceeds" under both kinds of bound, and so does output one byte too long.
inline void expect_size_bounds_enforced(const BytesToBytesCodec& codec) {
  ChunkSpec spec;
  const Bytes zeros(std::size_t{16} << 20, std::byte{0});
  Buffer bomb = codec.encode(view(zeros), spec);
  EXPECT_LT(bomb.size(), zeros.size() / 100) << "the bomb should be small";
  expect_error<DataLossError>([&] { codec.decode(bomb.view(), exact(1 << 20), spec); }, "decoded size exceeds");
  expect_error<DataLossError>([&] { codec.decode(bomb.view(), ceiling(1 << 20), spec); }, "decoded size exceeds");
  expect_error<DataLossError>([&] { codec.decode(bomb.view(), ceiling(0), spec); }, "decoded size exceeds");

  const Bytes data = compressible_bytes(100000);
  Buffer encoded = codec.encode(view(data), spec);
  expect_error<DataLossError>([&] { codec.decode(encoded.view(), exact(data.size() - 1), spec); },
                              "decoded size exceeds");
  expect_error<DataLossError>([&] { codec.decode(encoded.view(), ceiling(data.size() - 1), spec); },
                              "decoded size exceeds");
  expect_error<DataLossError>([&] { codec.decode(encoded.view(), exact(data.size() + 1), spec); },
                              "expected exactly");
  expect_error<DataLossError>([&] { codec.decode(encoded.view(), exact(0), spec); }, "decoded size exceeds");
}

// Reads `reader` to its end in pieces of `piece` bytes (the last one shorter) and checks
// its finish; nullopt when it refuses a read or the finish.
inline std::optional<Bytes> read_in_pieces(PieceReader& reader, std::size_t total, std::size_t piece) {
  Bytes out(total);
  for (std::size_t at = 0; at < total; at += piece) {
    if (!reader.read(MutableByteView(out.data() + at, std::min(piece, total - at)))) return std::nullopt;
  }
  if (!reader.finish()) return std::nullopt;
  return out;
}

// Bytes held here but not said to be in memory, as a store's reader gives them: decoders
// read them a part at a time. Counts the reads and the largest.
class StreamedSource final : public ByteSource {
 public:
  explicit StreamedSource(ByteView bytes) : bytes_(bytes.begin(), bytes.end()) {}
  std::uint64_t size() const override { return bytes_.size(); }
  std::size_t read(std::uint64_t offset, MutableByteView dest) override {
    ++reads;
    largest_read = std::max(largest_read, dest.size());
    if (offset >= bytes_.size()) return 0;
    const std::size_t n = std::min<std::uint64_t>(dest.size(), bytes_.size() - offset);
    std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(offset), n, dest.begin());
    return n;
  }
  std::size_t reads = 0;
  std::size_t largest_read = 0;

 private:
  Bytes bytes_;
};

inline std::shared_ptr<ByteSource> in_memory(ByteView bytes) { return std::make_shared<MemorySource>(bytes); }

// Decoding `encoded` in pieces of `piece` bytes, from memory and read a part at a time,
// agrees with decode_into for `size` bytes: the same bytes where both decode it, a refusal
// (or decode_into's own error, word for word) where decode_into fails. Returns whether the
// pieces decoded it from both sources.
inline bool expect_pieces_agree(const BytesToBytesCodec& codec, ByteView encoded, std::size_t size,
                                std::size_t piece) {
  const ChunkSpec spec;
  std::optional<Bytes> whole;
  std::string error;
  try {
    Bytes out(size);
    codec.decode_into(encoded, MutableByteView(out), spec);
    whole = std::move(out);
  } catch (const Error& e) {
    error = e.what();
  }
  bool decoded = true;
  for (const bool streamed : {false, true}) {
    SCOPED_TRACE(streamed ? "read a part at a time" : "in memory");
    std::optional<Bytes> pieces;
    try {
      const std::shared_ptr<ByteSource> source =
          streamed ? std::shared_ptr<ByteSource>(std::make_shared<StreamedSource>(encoded)) : in_memory(encoded);
      if (auto reader = codec.decode_pieces(source, size, spec)) pieces = read_in_pieces(*reader, size, piece);
    } catch (const Error& e) {
      EXPECT_EQ(e.what(), error) << "decode_pieces may throw only what decode_into throws";
    }
    if (pieces) {
      EXPECT_TRUE(whole.has_value()) << "pieces decoded data decode_into rejects: " << error;
      EXPECT_TRUE(pieces == whole) << "pieces and decode_into decoded different bytes";
    }
    decoded = decoded && pieces.has_value();
  }
  return decoded;
}

// Round trips on empty, tiny, large compressible and incompressible data.
inline void expect_round_trips(const BytesToBytesCodec& codec) {
  expect_round_trip(codec, {});
  expect_round_trip(codec, Bytes{std::byte{42}});
  expect_round_trip(codec, reference_sample());
  expect_round_trip(codec, compressible_bytes((1 << 20) + 12345));
  expect_round_trip(codec, random_bytes(300000));
}

}  // namespace zarrkit::testing
