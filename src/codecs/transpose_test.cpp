#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "codecs/register.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

const CodecRegistry& registry() {
  static const CodecRegistry r = [] {
    CodecRegistry reg;
    register_transpose_codec(reg);
    return reg;
  }();
  return r;
}

std::shared_ptr<const ArrayToArrayCodec> transpose(const nlohmann::json& order) {
  return std::dynamic_pointer_cast<const ArrayToArrayCodec>(
      registry().make_v3({{"name", "transpose"}, {"configuration", {{"order", order}}}}, {DataType::int_(32), 3}));
}

// An array whose every byte is distinct enough to catch misplaced elements.
NDBuffer numbered(const Shape& shape, const DataType& dtype) {
  NDBuffer nd = NDBuffer::allocate(shape, dtype);
  auto* p = reinterpret_cast<std::uint8_t*>(nd.data());
  for (std::size_t i = 0; i < nd.nbytes(); ++i) p[i] = static_cast<std::uint8_t>((i * 131 + i / 251) & 0xff);
  return nd;
}

// The obvious element-by-element transpose: B[j] = A[idx] with idx[order[i]] = j[i].
std::vector<std::uint8_t> naive_transpose(const NDBuffer& a, const std::vector<std::size_t>& order) {
  const Shape& shape = a.shape();
  const std::size_t n = shape.size();
  const std::size_t item = a.dtype().size();
  Shape out_shape(n);
  for (std::size_t i = 0; i < n; ++i) out_shape[i] = shape[order[i]];
  const auto in_strides = NDView::c_strides(shape, item);
  std::vector<std::uint8_t> out(a.nbytes());
  std::vector<std::uint64_t> j(n, 0);
  const auto* src = reinterpret_cast<const std::uint8_t*>(a.data());
  for (std::size_t flat = 0; flat < a.num_elements(); ++flat) {
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < n; ++i) offset += static_cast<std::int64_t>(j[i]) * in_strides[order[i]];
    std::memcpy(out.data() + flat * item, src + offset, item);
    for (std::size_t i = n; i-- > 0;) {
      if (++j[i] < out_shape[i]) break;
      j[i] = 0;
    }
  }
  return out;
}

std::vector<std::uint8_t> bytes_of(const NDBuffer& nd) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(nd.data());
  return {p, p + nd.nbytes()};
}

void check_against_naive(const Shape& shape, const std::vector<std::size_t>& order, const DataType& dtype) {
  SCOPED_TRACE(::testing::Message() << "shape " << ::testing::PrintToString(shape) << " order "
                                    << ::testing::PrintToString(order) << " " << dtype.name());
  const auto codec = transpose(order);
  const ChunkSpec spec{shape, dtype, FillValue::zero(dtype)};
  const NDBuffer a = numbered(shape, dtype);
  const ChunkSpec enc_spec = codec->encoded_spec(spec);
  for (std::size_t i = 0; i < shape.size(); ++i) ASSERT_EQ(enc_spec.shape[i], shape[order[i]]);
  const NDBuffer b = codec->encode(a, spec);
  ASSERT_EQ(b.shape(), enc_spec.shape);
  ASSERT_EQ(bytes_of(b), naive_transpose(a, order));
  const NDBuffer back = codec->decode(b, spec);
  ASSERT_EQ(back.shape(), shape);
  ASSERT_EQ(bytes_of(back), bytes_of(a));
}

TEST(TransposeCodec, EncodedShapeFollowsTheOrderNotItsInverse) {
  // SPEC-NOTES rule 18: B[i] = A[order[i]]. For [1,2,0] the inverse would give [4,2,3].
  const auto codec = transpose({1, 2, 0});
  const ChunkSpec spec{{2, 3, 4}, DataType::int_(32), FillValue::zero(DataType::int_(32))};
  EXPECT_EQ(codec->encoded_spec(spec).shape, (Shape{3, 4, 2}));
  EXPECT_EQ(codec->to_json(), nlohmann::json::parse(R"({"name":"transpose","configuration":{"order":[1,2,0]}})"));
}

TEST(TransposeCodec, TwoDimensionalMatchesNaiveForManyShapesAndSizes) {
  for (const DataType& dtype : {DataType::uint_(8), DataType::int_(16), DataType::float_(32), DataType::float_(64),
                                DataType::complex_(128), DataType::raw_bits(24), DataType::fixed_bytes(12)}) {
    for (const Shape& shape : {Shape{1, 1}, Shape{3, 5}, Shape{32, 32}, Shape{37, 70}, Shape{100, 1}, Shape{1, 65},
                               Shape{64, 33}}) {
      check_against_naive(shape, {1, 0}, dtype);
      check_against_naive(shape, {0, 1}, dtype);
    }
  }
}

TEST(TransposeCodec, ThreeDimensionalMatchesNaiveForEveryPermutation) {
  std::vector<std::size_t> order = {0, 1, 2};
  do {
    for (const Shape& shape : {Shape{5, 7, 9}, Shape{40, 3, 35}, Shape{1, 33, 2}, Shape{2, 1, 70}}) {
      check_against_naive(shape, order, DataType::int_(16));
      check_against_naive(shape, order, DataType::float_(64));
    }
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST(TransposeCodec, FourAndFiveDimensions) {
  check_against_naive({3, 4, 5, 6}, {3, 1, 0, 2}, DataType::int_(32));
  check_against_naive({2, 3, 1, 4, 5}, {4, 2, 0, 3, 1}, DataType::uint_(8));
  check_against_naive({6, 5, 4, 3, 2}, {4, 3, 2, 1, 0}, DataType::int_(64));
}

TEST(TransposeCodec, ReversedOrderOfACOrderChunkIsItsFOrderLayout) {
  const Shape shape = {4, 6, 5};
  const DataType i32 = DataType::int_(32);
  NDBuffer a = NDBuffer::allocate(shape, i32);
  auto* values = reinterpret_cast<std::int32_t*>(a.data());
  std::iota(values, values + a.num_elements(), 0);  // value = C-order flat index
  // In F order the element (i, j, k) sits at i + j*4 + k*24.
  std::vector<std::int32_t> f_order(a.num_elements());
  for (std::uint64_t i = 0; i < 4; ++i)
    for (std::uint64_t j = 0; j < 6; ++j)
      for (std::uint64_t k = 0; k < 5; ++k)
        f_order[i + j * 4 + k * 24] = static_cast<std::int32_t>(i * 30 + j * 5 + k);
  const ChunkSpec spec{shape, i32, FillValue::zero(i32)};
  for (const nlohmann::json& order : {nlohmann::json{2, 1, 0}, nlohmann::json("F")}) {
    const NDBuffer b = transpose(order)->encode(a, spec);
    EXPECT_EQ(b.shape(), (Shape{5, 6, 4}));
    EXPECT_EQ(std::memcmp(b.data(), f_order.data(), b.nbytes()), 0) << order.dump();
  }
}

TEST(TransposeCodec, ZeroDimensionalAndEmptyChunks) {
  check_against_naive({}, {}, DataType::float_(32));
  const auto codec = transpose({1, 0});
  const ChunkSpec empty{{0, 3}, DataType::int_(32), FillValue::zero(DataType::int_(32))};
  const NDBuffer b = codec->encode(NDBuffer::allocate({0, 3}, DataType::int_(32)), empty);
  EXPECT_EQ(b.shape(), (Shape{3, 0}));
  EXPECT_EQ(codec->decode(b, empty).shape(), (Shape{0, 3}));
}

TEST(TransposeCodec, ReportsItsAxisOrder) {
  EXPECT_EQ(transpose(nlohmann::json::array({2, 0, 1}))->axis_order(3), (std::vector<std::size_t>{2, 0, 1}));
  // The "C" and "F" forms, for any number of axes.
  EXPECT_EQ(transpose("F")->axis_order(4), (std::vector<std::size_t>{3, 2, 1, 0}));
  EXPECT_EQ(transpose("C")->axis_order(2), (std::vector<std::size_t>{0, 1}));
  EXPECT_THROW(transpose(nlohmann::json::array({1, 0}))->axis_order(3), InvalidArgumentError);
}

TEST(TransposeCodec, RejectsOrdersThatAreNotPermutations) {
  for (const char* order : {R"([0,0])", R"([0,2])", R"([-1,0])", R"([1.0,0])", R"("X")", R"(null)",
                            R"([18446744073709551615,0])", R"({"a":1})"}) {
    SCOPED_TRACE(order);
    EXPECT_THROW(transpose(nlohmann::json::parse(order)), InvalidArgumentError);
  }
  EXPECT_THROW(registry().make_v3({{"name", "transpose"}}, {DataType::int_(32), 3}), InvalidArgumentError);
  EXPECT_THROW(registry().make_v3(nlohmann::json::parse(R"({"name":"transpose","configuration":{"order":[0],"x":1}})"),
                                  {DataType::int_(32), 3}),
               InvalidArgumentError);
}

TEST(TransposeCodec, OrderLengthMustMatchTheChunk) {
  const auto codec = transpose({1, 0});
  const ChunkSpec spec{{2, 3, 4}, DataType::int_(32), FillValue::zero(DataType::int_(32))};
  EXPECT_THROW(codec->encoded_spec(spec), InvalidArgumentError);
  EXPECT_THROW(codec->encode(numbered({2, 3, 4}, DataType::int_(32)), spec), InvalidArgumentError);
  // An array of the wrong shape for the spec.
  const ChunkSpec two_d{{2, 3}, DataType::int_(32), FillValue::zero(DataType::int_(32))};
  EXPECT_THROW(codec->decode(numbered({2, 3}, DataType::int_(32)), two_d), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
