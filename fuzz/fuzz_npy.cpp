// Fuzz target: a NumPy .npy file from outside, read as `zarrkit import` reads it: the
// preamble and version, the header's Python dict literal (descr, fortran_order, shape), the
// data checked against the file's size, then read whole and slab by slab (byte order swapped,
// Fortran order transposed). The header parser also gets the bytes directly. Seeds: files
// write_npy makes for several types and layouts, and headers as NumPy writes them by hand.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>

#include "fuzz_target.h"
#include "zarrkit/error.h"
#include "zarrkit/npy.h"
#include "zarrkit/npy_header.h"

namespace zarrkit::fuzz {
namespace {

// The file each input is written to (one per process), removed at exit.
struct Scratch {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("zarrkit-fuzz-npy-" + std::to_string(::getpid()) + ".npy");
  ~Scratch() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

const std::filesystem::path& scratch() {
  static const Scratch s;
  return s.path;
}

std::string read_scratch() {
  std::ifstream in(scratch(), std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string npy_of(const DataType& dtype, const Shape& shape) {
  NDBuffer array = NDBuffer::allocate(shape, dtype);
  std::iota(reinterpret_cast<unsigned char*>(array.data()),
            reinterpret_cast<unsigned char*>(array.data()) + array.nbytes(), static_cast<unsigned char>(1));
  cli::write_npy(scratch(), array);
  return read_scratch();
}

// A header written by hand (as NumPy does), then `data`.
std::string handmade(const std::string& dict, const std::string& data) {
  std::string body = dict;
  body.append((64 - (10 + body.size() + 1) % 64) % 64, ' ');
  body += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(body.size() & 0xff);
  out += static_cast<char>(body.size() >> 8);
  return out + body + data;
}

}  // namespace

std::vector<std::string> seeds() {
  return {
      npy_of(DataType::float_(32), {2, 3}),
      npy_of(DataType::int_(16), {5}),
      npy_of(DataType::uint_(8), {}),
      npy_of(DataType::boolean(), {3, 1, 2}),
      npy_of(DataType::float_(64), {0, 4}),
      handmade("{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3), }", std::string(24, '\x07')),
      handmade("{'descr': [('a', '<u2'), ('b', '>f8', (2,))], 'fortran_order': False, 'shape': (2,), }",
               std::string(36, '\x01')),
      handmade("{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", std::string("a\0\0\0b\0\0\0c\0\0\0", 12)),
      handmade("{'descr': '|S2', 'fortran_order': True, 'shape': (2, 2, 1), }", "abcdefgh"),
  };
}

}  // namespace zarrkit::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zarrkit;
  try {
    (void)cli::parse_npy_header(ByteView(reinterpret_cast<const std::byte*>(data), size));
  } catch (const Error&) {
  }
  {
    std::ofstream out(fuzz::scratch(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    cli::NpyReader reader(fuzz::scratch());
    (void)reader.read_all();
    const Shape& shape = reader.shape();
    if (!shape.empty() && shape[reader.slab_axis()] > 1) {
      const std::uint64_t n = shape[reader.slab_axis()];
      (void)reader.read_slab(n / 2, n);
    }
  } catch (const Error&) {
  }
  return 0;
}
