#include "zarrkit/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <numeric>
#include <random>

#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit::cli {
namespace {

namespace fs = std::filesystem;

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("zarrkit_npy_test_{}_{}", ::getpid(), ::testing::UnitTest::GetInstance()->random_seed());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write_file(const std::string& name, const std::string& bytes) {
    fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }
  // A v1.0 file with the given dict text and raw data.
  fs::path npy_v1(const std::string& dict, const std::string& data, const std::string& name = "a.npy") {
    std::string header = dict + "\n";
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
    bytes += static_cast<char>(header.size() & 0xFF);
    bytes += static_cast<char>(header.size() >> 8);
    return write_file(name, bytes + header + data);
  }

  fs::path dir_;
};

NDBuffer random_buffer(Shape shape, DataType dtype, unsigned seed) {
  NDBuffer b = NDBuffer::allocate(std::move(shape), std::move(dtype));
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < b.nbytes(); ++i) b.data()[i] = static_cast<std::byte>(rng());
  return b;
}

std::string bytes_of(const NDBuffer& b) { return std::string(reinterpret_cast<const char*>(b.data()), b.nbytes()); }

template <typename T>
std::string raw(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

// numpy 2.4's np.save header for a dict that fits one 128-byte block.
std::string numpy_header(const std::string& dict) {
  return std::string("\x93NUMPY\x01\x00v\x00", 10) + dict + std::string(117 - dict.size(), ' ') + "\n";
}

TEST_F(NpyTest, HeaderMatchesNumPyByteForByte) {
  EXPECT_EQ(format_npy_header(DataType::float_(64), {3, 4}),
            numpy_header("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }"));
  EXPECT_EQ(format_npy_header(DataType::boolean(), {5}),
            numpy_header("{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }"));
  EXPECT_EQ(format_npy_header(DataType::int_(16), {}),
            numpy_header("{'descr': '<i2', 'fortran_order': False, 'shape': (), }"));
  EXPECT_EQ(format_npy_header(DataType::datetime("ns"), {2}),
            numpy_header("{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (2,), }"));
  EXPECT_EQ(format_npy_header(DataType::complex_(64), {2, 3}, true),
            numpy_header("{'descr': '<c8', 'fortran_order': True, 'shape': (2, 3), }"));
  // A dict that does not fit 65535 bytes needs version 2.0.
  std::vector<StructField> many;
  for (std::size_t i = 0; i < 5000; ++i) many.push_back({fmt::format("field{}", i), DataType::uint_(8), i, {}});
  const std::string big = format_npy_header(DataType::structured(many), {1});
  EXPECT_EQ(big[6], '\x02');
  EXPECT_EQ(big.size() % 64, 0u);
}

TEST_F(NpyTest, StructuredDescrMatchesNumPy) {
  StructField a{"a", DataType::int_(32), 0, {}};
  StructField b{"b", DataType::float_(64), 4, {2, 3}};
  EXPECT_EQ(npy_descr(DataType::structured({a, b})), "[('a', '<i4'), ('b', '<f8', (2, 3))]");
}

TEST_F(NpyTest, RoundTripsEveryDataType) {
  const std::vector<std::string> descrs = {"|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8",
                                           "<f2", "<f4", "<f8", "<c8", "<c16", "|S7", "<U3", "|V5",
                                           "<M8[ns]", "<M8[D]", "<m8[s]", "<m8[10ms]"};
  unsigned seed = 1;
  for (const auto& descr : descrs) {
    SCOPED_TRACE(descr);
    DataType dtype = parse_dtype_v2(descr);
    NDBuffer original = random_buffer({3, 5}, dtype, seed++);
    if (dtype.kind() == DataTypeKind::kBool) {
      for (std::size_t i = 0; i < original.nbytes(); ++i) original.data()[i] &= std::byte{1};
    }
    fs::path path = dir_ / "rt.npy";
    write_npy(path, original);
    NpyReader reader(path);
    EXPECT_EQ(reader.shape(), (Shape{3, 5}));
    EXPECT_EQ(reader.dtype(), dtype);
    EXPECT_EQ(npy_descr(reader.dtype()), "'" + descr + "'");
    EXPECT_EQ(bytes_of(reader.read_all()), bytes_of(original));
  }
}

TEST_F(NpyTest, RoundTripsStructuredZeroDimAndEmpty) {
  StructField a{"a", DataType::int_(16), 0, {}};
  StructField b{"b", DataType::complex_(64), 2, {2}};
  for (const auto& [shape, dtype] : std::vector<std::pair<Shape, DataType>>{
           {{4}, DataType::structured({a, b})}, {{}, DataType::float_(32)}, {{0, 3}, DataType::int_(64)}}) {
    NDBuffer original = random_buffer(shape, dtype, 7);
    write_npy(dir_ / "s.npy", original);
    NpyReader reader(dir_ / "s.npy");
    EXPECT_EQ(reader.shape(), shape);
    EXPECT_EQ(reader.dtype(), dtype);
    EXPECT_EQ(bytes_of(reader.read_all()), bytes_of(original));
  }
}

TEST_F(NpyTest, FortranOrderIsTransposedIntoCOrder) {
  // numpy: np.arange(6, dtype='<i4').reshape(2, 3) saved with order F stores 0 3 1 4 2 5.
  auto path = npy_v1("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", raw<std::int32_t>({0, 3, 1, 4, 2, 5}));
  NpyReader reader(path);
  EXPECT_EQ(reader.slab_axis(), 1u);
  NDBuffer all = reader.read_all();
  EXPECT_EQ(bytes_of(all), raw<std::int32_t>({0, 1, 2, 3, 4, 5}));
  // A slab is a range of the last axis: columns 1..3.
  NDBuffer slab = reader.read_slab(1, 3);
  EXPECT_EQ(slab.shape(), (Shape{2, 2}));
  EXPECT_EQ(bytes_of(slab), raw<std::int32_t>({1, 2, 4, 5}));
}

TEST_F(NpyTest, FortranOrderThreeDimensions) {
  // Element (i, j, k) = 100 i + 10 j + k, shape (2, 3, 4), stored with i fastest.
  std::vector<std::int16_t> fortran, c_order;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) fortran.push_back(static_cast<std::int16_t>(100 * i + 10 * j + k));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) c_order.push_back(static_cast<std::int16_t>(100 * i + 10 * j + k));
  auto path = npy_v1("{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3, 4), }",
                     std::string(reinterpret_cast<const char*>(fortran.data()), fortran.size() * 2));
  EXPECT_EQ(bytes_of(NpyReader(path).read_all()),
            std::string(reinterpret_cast<const char*>(c_order.data()), c_order.size() * 2));
}

TEST_F(NpyTest, CSlabsAreRowRanges) {
  auto path = npy_v1("{'descr': '<u2', 'fortran_order': False, 'shape': (3, 2), }", raw<std::uint16_t>({1, 2, 3, 4, 5, 6}));
  NpyReader reader(path);
  EXPECT_EQ(reader.slab_axis(), 0u);
  EXPECT_EQ(bytes_of(reader.read_slab(1, 3)), raw<std::uint16_t>({3, 4, 5, 6}));
  EXPECT_THROW(reader.read_slab(2, 4), InvalidArgumentError);
}

TEST_F(NpyTest, BigEndianIsSwappedToNative) {
  auto path = npy_v1("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", std::string("\0\0\0\x01\x01\x02\x03\x04", 8));
  NpyReader reader(path);
  EXPECT_EQ(reader.header().dtype.storage_endian(), Endian::kBig);
  EXPECT_EQ(bytes_of(reader.read_all()), raw<std::int32_t>({1, 0x01020304}));

  // complex64: each half swapped separately; U: per code point.
  path = npy_v1("{'descr': '>c8', 'fortran_order': False, 'shape': (1,), }", std::string("\x3f\x80\0\0\xc0\0\0\0", 8));
  EXPECT_EQ(bytes_of(NpyReader(path).read_all()), raw<float>({1.0f, -2.0f}));
  path = npy_v1("{'descr': '>U2', 'fortran_order': False, 'shape': (1,), }", std::string("\0\0\0A\0\0\0B", 8));
  EXPECT_EQ(bytes_of(NpyReader(path).read_all()), raw<std::uint32_t>({'A', 'B'}));
}

TEST_F(NpyTest, BigEndianStructuredFieldsAreSwapped) {
  auto path = npy_v1("{'descr': [('a', '>i2'), ('b', '>u4', (2,)), ('c', '|u1')], 'fortran_order': False, 'shape': (1,), }",
                     std::string("\x01\x02\0\0\0\x03\x04\x05\x06\x07\x09", 11));
  NDBuffer all = NpyReader(path).read_all();
  std::int16_t a;
  std::uint32_t b[2];
  std::memcpy(&a, all.data(), 2);
  std::memcpy(b, all.data() + 2, 8);
  EXPECT_EQ(a, 0x0102);
  EXPECT_EQ(b[0], 3u);
  EXPECT_EQ(b[1], 0x04050607u);
  EXPECT_EQ(static_cast<int>(all.data()[10]), 9);
  // Fields of both byte orders in one type: a typed error, not a silent mix-up.
  path = npy_v1("{'descr': [('a', '>i2'), ('b', '<i2')], 'fortran_order': False, 'shape': (1,), }", "abcd");
  EXPECT_THROW(NpyReader{path}, Error);
}

TEST_F(NpyTest, ReadsVersion2And3Headers) {
  for (char major : {'\x02', '\x03'}) {
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
    std::string bytes = std::string("\x93NUMPY", 6) + major + '\0';
    for (int i = 0; i < 4; ++i) bytes += static_cast<char>((dict.size() >> (8 * i)) & 0xFF);
    auto path = write_file("v.npy", bytes + dict + raw<float>({1.5f, -2.0f}));
    NpyReader reader(path);
    EXPECT_EQ(reader.header().major_version, major);
    EXPECT_EQ(bytes_of(reader.read_all()), raw<float>({1.5f, -2.0f}));
  }
}

TEST_F(NpyTest, NonAsciiFieldNamesUseVersion3) {
  StructField f{"\xc3\xa9t\xc3\xa9", DataType::int_(8), 0, {}};  // "été"
  NDBuffer original = random_buffer({2}, DataType::structured({f}), 3);
  write_npy(dir_ / "u.npy", original);
  NpyReader reader(dir_ / "u.npy");
  EXPECT_EQ(reader.header().major_version, 3);
  EXPECT_EQ(reader.dtype().fields().at(0).name, f.name);
  // Version 1.0 headers are Latin-1: byte 0xE9 is "é".
  auto path = npy_v1("{'descr': [('\xe9', '|i1')], 'fortran_order': False, 'shape': (1,), }", "x");
  EXPECT_EQ(NpyReader(path).dtype().fields().at(0).name, "\xc3\xa9");
}

TEST_F(NpyTest, PythonLiterals) {
  EXPECT_EQ(parse_python_literal("{'a': (1,), \"b\": [True, None, -3], 'c': 'x\\'y',}"),
            nlohmann::json::parse(R"({"a": [1], "b": [true, null, -3], "c": "x'y"})"));
  EXPECT_EQ(parse_python_literal("()"), nlohmann::json::array());
  EXPECT_EQ(parse_python_literal("(3L, 4)"), nlohmann::json::parse("[3, 4]"));
  EXPECT_EQ(parse_python_literal("'\\xe9\\u20ac'"), "\xc3\xa9\xe2\x82\xac");
  for (const char* bad : {"{'a': 1", "{'a' 1}", "{1: 2}", "'abc", "1.5", "99999999999999999999", "{'a': 1, 'a': 2}",
                          "[1] x", "foo", "'\\q'"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_python_literal(bad), InvalidArgumentError);
  }
  EXPECT_THROW(parse_python_literal(std::string(100, '[') + std::string(100, ']')), InvalidArgumentError);
}

TEST_F(NpyTest, BadHeadersAreTypedErrors) {
  const std::string data(8, '\0');
  const std::vector<std::pair<std::string, ErrorCode>> cases = {
      {"{'descr': '<i4', 'fortran_order': False}", ErrorCode::kInvalidArgument},                 // no shape
      {"{'descr': '<i4', 'fortran_order': 0, 'shape': (2,)}", ErrorCode::kInvalidArgument},      // not a bool
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (-2,)}", ErrorCode::kInvalidArgument},  // negative
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'x': 1}", ErrorCode::kInvalidArgument},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': [2, 'a']}", ErrorCode::kInvalidArgument},
      {"{'descr': 7, 'fortran_order': False, 'shape': (2,)}", ErrorCode::kInvalidArgument},
      {"{'descr': '|O', 'fortran_order': False, 'shape': (2,)}", ErrorCode::kUnsupported},
      {"{'descr': [('a', '|O')], 'fortran_order': False, 'shape': (2,)}", ErrorCode::kUnsupported},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", ErrorCode::kInvalidArgument},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (3,)}", ErrorCode::kDataLoss},  // 12 bytes needed
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,)", ErrorCode::kInvalidArgument},
      {"[1, 2]", ErrorCode::kInvalidArgument},
  };
  for (const auto& [dict, code] : cases) {
    SCOPED_TRACE(dict);
    try {
      NpyReader reader(npy_v1(dict, data));
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
    }
  }
  // An unknown type string: whatever the dtype parser says, as a typed error.
  EXPECT_THROW(NpyReader(npy_v1("{'descr': '<q9', 'fortran_order': False, 'shape': (2,)}", data)), Error);
}

TEST_F(NpyTest, BadPreamblesAreTypedErrors) {
  EXPECT_THROW(NpyReader(write_file("m.npy", "NOTNUMPY\x01\x00")), InvalidArgumentError);
  EXPECT_THROW(NpyReader(write_file("e.npy", "")), InvalidArgumentError);
  EXPECT_THROW(NpyReader(write_file("v.npy", std::string("\x93NUMPY\x04\x00\x10\x00", 10))), UnsupportedError);
  // A header length larger than the file, and one larger than the limit.
  EXPECT_THROW(NpyReader(write_file("t.npy", std::string("\x93NUMPY\x01\x00\xff\x00{'d", 13))), InvalidArgumentError);
  EXPECT_THROW(NpyReader(write_file("h.npy", std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f{", 13))),
               InvalidArgumentError);
  EXPECT_THROW(NpyReader(dir_ / "missing.npy"), NotFoundError);
}

TEST_F(NpyTest, CopyToCOrderHandlesNegativeStrides) {
  std::vector<std::int32_t> values = {0, 1, 2, 3, 4, 5};  // 2x3
  // View of values[::-1, ::-1].
  NDView view{reinterpret_cast<std::byte*>(values.data() + 5), {2, 3}, {-12, -4}, DataType::int_(32), MemoryKind::kHost};
  std::vector<std::int32_t> out(6);
  copy_to_c_order(view, reinterpret_cast<std::byte*>(out.data()));
  EXPECT_EQ(out, (std::vector<std::int32_t>{5, 4, 3, 2, 1, 0}));
}

}  // namespace
}  // namespace zarrkit::cli
