#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codecs/compressor_test_support.h"
#include "codecs/register.h"
#include "codecs/vlen_support.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

std::shared_ptr<const VarLengthCodec> codec(bool v2 = false) {
  static const CodecRegistry registry = [] {
    CodecRegistry r;
    register_vlen_utf8_codec(r);
    return r;
  }();
  auto made = v2 ? registry.make_v2({{"id", "vlen-utf8"}}, {DataType::string(), 2})
                 : registry.make_v3({{"name", "vlen-utf8"}, {"configuration", nlohmann::json::object()}},
                                    {DataType::string(), 3});
  auto typed = std::dynamic_pointer_cast<const VarLengthCodec>(made);
  EXPECT_NE(typed, nullptr);
  return typed;
}

ChunkSpec spec_of(Shape shape) { return {std::move(shape), DataType::string(), FillValue::zero(DataType::string())}; }

// numcodecs 0.16: VLenUTF8().encode(np.array(['a', '', 'héllo', '水🙂'], dtype=object))
const std::vector<std::string> kItems = {"a", "", "héllo", "水🙂"};
const char* kEncoded = "040000000100000061000000000600000068c3a96c6c6f07000000e6b0b4f09f9982";

TEST(VlenUtf8, MatchesNumcodecsBothWays) {
  for (bool v2 : {false, true}) {
    const ChunkSpec spec = spec_of({2, 2});
    Buffer encoded = codec(v2)->encode_var(VarNDBuffer(spec.shape, DataType::string(), kItems), spec);
    EXPECT_EQ(to_vector(encoded), from_hex(kEncoded));
    EXPECT_EQ(codec(v2)->decode_var(view(from_hex(kEncoded)), spec),
              VarNDBuffer(spec.shape, DataType::string(), kItems));
  }
  // An empty chunk is just the count.
  EXPECT_EQ(to_vector(codec()->encode_var(VarNDBuffer({0}, DataType::string(), {}), spec_of({0}))),
            from_hex("00000000"));
}

TEST(VlenUtf8, RoundTripsLongAndManyItems) {
  std::vector<std::string> items;
  for (int i = 0; i < 3000; ++i) items.push_back(std::string(static_cast<std::size_t>(i % 700), 'a' + i % 26) + "é");
  const ChunkSpec spec = spec_of({30, 100});
  const VarNDBuffer chunk(spec.shape, DataType::string(), items);
  EXPECT_EQ(codec()->decode_var(codec()->encode_var(chunk, spec).view(), spec), chunk);
}

TEST(VlenUtf8, CorruptDataIsDataLossBeforeAnyLargeAllocation) {
  const ChunkSpec spec = spec_of({4});
  const Bytes good = from_hex(kEncoded);
  // Every truncation, including inside the count and inside an item.
  for (std::size_t n = 0; n < good.size(); ++n) {
    expect_error<DataLossError>([&] { codec()->decode_var(view(good).first(n), spec); });
  }
  // Counts that disagree with the chunk, absurd or merely wrong.
  expect_error<DataLossError>([&] { codec()->decode_var(view(from_hex("ffffffff")), spec); }, "4294967295 items");
  expect_error<DataLossError>([&] { codec()->decode_var(view(from_hex("03000000")), spec); }, "3 items");
  // The right count with too few bytes for it: refused before reserving the items.
  expect_error<DataLossError>([&] { codec()->decode_var(view(from_hex("0400000000000000")), spec); }, "at least");
  // An item length far past the end.
  expect_error<DataLossError>(
      [&] { codec()->decode_var(view(from_hex("04000000f0ffffff00000000000000000000000000")), spec); },
      "claims 4294967280 bytes");
  // Bytes after the last item.
  expect_error<DataLossError>([&] { codec()->decode_var(view(concat(good, from_hex("00"))), spec); }, "follow");
  // Invalid UTF-8 (Python's decoder refuses it too): a stray continuation byte, an overlong
  // form, a surrogate, a code point above U+10FFFF.
  for (const char* bad : {"80", "c0af", "eda080", "f4908080"}) {
    SCOPED_TRACE(bad);
    Bytes item = from_hex(bad);
    Bytes data = from_hex("01000000");
    data.push_back(static_cast<std::byte>(item.size()));
    data.insert(data.end(), 3, std::byte{0});
    data.insert(data.end(), item.begin(), item.end());
    expect_error<DataLossError>([&] { codec()->decode_var(view(data), spec_of({1})); }, "UTF-8");
  }
}

TEST(VlenUtf8, Utf8Validation) {
  using vlen_support::is_valid_utf8;
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("é水🙂\xF4\x8F\xBF\xBF"));  // U+10FFFF is the last valid code point
  EXPECT_TRUE(is_valid_utf8(std::string("a\0b", 3)));
  EXPECT_FALSE(is_valid_utf8("\xC3"));              // truncated
  EXPECT_FALSE(is_valid_utf8("\xE0\x80\x80"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xED\xBF\xBF"));      // surrogate
  EXPECT_FALSE(is_valid_utf8("\xF5\x80\x80\x80"));  // beyond U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xE6\xB0"));          // cut inside a character
}

TEST(VlenUtf8, EncodingRefusesWhatItCannotHold) {
  const ChunkSpec spec = spec_of({2});
  expect_error<InvalidArgumentError>(
      [&] { codec()->encode_var(VarNDBuffer({2}, DataType::string(), {"ok", "\xff"}), spec); }, "UTF-8");
  expect_error<InvalidArgumentError>(
      [&] { codec()->encode_var(VarNDBuffer({3}, DataType::string(), {"a", "b", "c"}), spec); }, "shape");
}

TEST(VlenUtf8, ConfigurationAndTypes) {
  EXPECT_EQ(codec()->to_json(), (nlohmann::json{{"name", "vlen-utf8"}, {"configuration", nlohmann::json::object()}}));
  EXPECT_EQ(*codec()->to_v2_json(), (nlohmann::json{{"id", "vlen-utf8"}}));
  CodecRegistry registry;
  register_vlen_utf8_codec(registry);
  expect_error<InvalidArgumentError>(
      [&] { registry.make_v3({{"name", "vlen-utf8"}, {"configuration", {{"level", 1}}}}, {DataType::string(), 3}); },
      "unexpected configuration key");
  // Only string chunks; and no fixed-size encoding at all.
  const ChunkSpec ints{{2}, DataType::int_(32), FillValue::zero(DataType::int_(32))};
  expect_error<InvalidArgumentError>([&] { codec()->validate(ints); }, "string arrays");
  expect_error<InvalidArgumentError>([&] { codec()->validate(ChunkSpec{{2}, DataType::var_bytes(), {}}); });
  expect_error<UnsupportedError>([&] { codec()->decode(view(from_hex("00000000")), ints, BufferPrototype::host()); },
                                 "read_var");
  expect_error<UnsupportedError>([&] { codec()->encode(NDBuffer::allocate({2}, DataType::int_(32)), ints); },
                                 "write_var");
}

}  // namespace
}  // namespace zarrkit
