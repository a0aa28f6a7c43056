#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codecs/compressor_test_support.h"
#include "codecs/register.h"
#include "zarrkit/error.h"
#include "zarrkit/vlen.h"

namespace zarrkit {
namespace {

using namespace zarrkit::testing;

std::shared_ptr<const VarLengthCodec> codec(bool v2 = false) {
  static const CodecRegistry registry = [] {
    CodecRegistry r;
    register_vlen_bytes_codec(r);
    return r;
  }();
  auto made = v2 ? registry.make_v2({{"id", "vlen-bytes"}}, {DataType::var_bytes(), 2})
                 : registry.make_v3({{"name", "vlen-bytes"}}, {DataType::var_bytes(), 3});
  auto typed = std::dynamic_pointer_cast<const VarLengthCodec>(made);
  EXPECT_NE(typed, nullptr);
  return typed;
}

ChunkSpec spec_of(Shape shape) {
  return {std::move(shape), DataType::var_bytes(), FillValue::zero(DataType::var_bytes())};
}

// numcodecs 0.16: VLenBytes().encode(np.array([b'', b'\x00\xff', b'abc'], dtype=object))
TEST(VlenBytes, MatchesNumcodecsBothWays) {
  const std::vector<std::string> items = {"", std::string("\0\xff", 2), "abc"};
  const char* hex = "03000000000000000200000000ff03000000616263";
  for (bool v2 : {false, true}) {
    const ChunkSpec spec = spec_of({3});
    EXPECT_EQ(to_vector(codec(v2)->encode_var(VarNDBuffer(spec.shape, DataType::var_bytes(), items), spec)),
              from_hex(hex));
    EXPECT_EQ(codec(v2)->decode_var(view(from_hex(hex)), spec), VarNDBuffer(spec.shape, DataType::var_bytes(), items));
  }
}

TEST(VlenBytes, AnyBytesRoundTripAndNoUtf8IsRequired) {
  std::vector<std::string> items;
  const Bytes noise = random_bytes(5000);
  for (std::size_t i = 0, at = 0; i < 100; at += i, ++i) {
    items.emplace_back(reinterpret_cast<const char*>(noise.data()) + at % 4000, i);
  }
  const ChunkSpec spec = spec_of({10, 10});
  const VarNDBuffer chunk(spec.shape, DataType::var_bytes(), items);
  EXPECT_EQ(codec()->decode_var(codec()->encode_var(chunk, spec).view(), spec), chunk);
}

TEST(VlenBytes, CorruptDataIsDataLoss) {
  const ChunkSpec spec = spec_of({2});
  expect_error<DataLossError>([&] { codec()->decode_var(view(from_hex("020000")), spec); }, "too short");
  expect_error<DataLossError>([&] { codec()->decode_var(view(from_hex("ffffff7f")), spec); }, "items");
  expect_error<DataLossError>([&] { codec()->decode_var(view(from_hex("02000000010000006105000000")), spec); },
                              "claims 5 bytes");
  expect_error<DataLossError>([&] { codec()->decode_var(view(from_hex("020000000000000000000000ff")), spec); },
                              "follow");
}

TEST(VlenBytes, OnlyForBytesArrays) {
  expect_error<InvalidArgumentError>(
      [&] { codec()->validate({{2}, DataType::string(), FillValue::zero(DataType::string())}); }, "bytes arrays");
  EXPECT_EQ(codec()->to_json(), (nlohmann::json{{"name", "vlen-bytes"}, {"configuration", nlohmann::json::object()}}));
  EXPECT_EQ(*codec(true)->to_v2_json(), (nlohmann::json{{"id", "vlen-bytes"}}));
}

}  // namespace
}  // namespace zarrkit
