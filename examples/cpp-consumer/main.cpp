// Writes two small arrays through zarrkit's public C++ API (a Zarr v3 array with the default
// codecs and a Zarr v2 array compressed with blosc), opens them again from disk, reads them
// whole and in part, and checks every value. Exits non-zero on any mismatch or error.
//   cpp_consumer [DIR]   DIR: where the arrays go (default: a new temporary directory,
//                        removed afterwards)
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <zarrkit/array.h>
#include <zarrkit/codec_registry.h>
#include <zarrkit/error.h>
#include <zarrkit/metadata.h>
#include <zarrkit/stores/local_store.h>

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kRows = 100;
constexpr std::uint64_t kColumns = 70;

// The value stored at (row, column): distinct everywhere, so a misplaced chunk shows.
std::int32_t expected_value(std::uint64_t row, std::uint64_t column) {
  return static_cast<std::int32_t>(row * 1000 + column);
}

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "cpp_consumer: MISMATCH: %s\n", what.c_str());
    ++failures;
  }
}

std::vector<std::int32_t> values_of(const zarrkit::NDBuffer& buffer) {
  std::vector<std::int32_t> values(buffer.num_elements());
  std::memcpy(values.data(), buffer.data(), buffer.nbytes());
  return values;
}

// Writes a kRows x kColumns int32 array at `path` inside `root`, then opens it again and reads it back.
void write_and_read(const fs::path& root, const std::string& path, zarrkit::ArraySpec spec) {
  spec.shape = {kRows, kColumns};
  spec.chunks = {32, 32};  // chunks that do not divide the shape: edge chunks are partial
  spec.dtype = zarrkit::DataType::int_(32);
  {
    auto store = zarrkit::LocalStore::open(root);
    auto metadata = zarrkit::make_array_metadata(spec, zarrkit::CodecRegistry::builtin());
    zarrkit::Array array = zarrkit::Array::create(store, path, metadata, /*overwrite=*/true);

    std::vector<std::int32_t> values(kRows * kColumns);
    for (std::uint64_t r = 0; r < kRows; ++r)
      for (std::uint64_t c = 0; c < kColumns; ++c) values[r * kColumns + c] = expected_value(r, c);
    zarrkit::NDView source;
    source.data = reinterpret_cast<std::byte*>(values.data());
    source.shape = spec.shape;
    source.dtype = spec.dtype;
    source.byte_strides = zarrkit::NDView::c_strides(source.shape, sizeof(std::int32_t));
    array.write({}, source);
  }

  // A new store and array object: everything below comes from the files on disk.
  zarrkit::LocalStoreOptions read_only;
  read_only.read_only = true;
  const zarrkit::Array array = zarrkit::Array::open(zarrkit::LocalStore::open(root, read_only), path);
  check(array.shape() == spec.shape, path + ": shape");
  check(array.dtype() == spec.dtype, path + ": dtype " + array.dtype().name());

  const std::vector<std::int32_t> whole = values_of(array.read());
  check(whole.size() == kRows * kColumns, path + ": whole read size");
  for (std::uint64_t r = 0; r < kRows && whole.size() == kRows * kColumns; ++r)
    for (std::uint64_t c = 0; c < kColumns; ++c)
      if (whole[r * kColumns + c] != expected_value(r, c)) {
        check(false, path + ": element (" + std::to_string(r) + ", " + std::to_string(c) + ")");
        return;
      }

  // Rows 90..99 (a partial edge chunk), every third column from 5: NumPy's [90:, 5::3].
  const zarrkit::Selection corner = {zarrkit::Slice{90, std::nullopt, 1}, zarrkit::Slice{5, std::nullopt, 3}};
  const zarrkit::NDBuffer part = array.read(corner);
  check(part.shape() == zarrkit::Shape{10, 22}, path + ": partial read shape");
  const std::vector<std::int32_t> part_values = values_of(part);
  for (std::uint64_t r = 0; r < 10 && part_values.size() == 10 * 22; ++r)
    for (std::uint64_t c = 0; c < 22; ++c)
      check(part_values[r * 22 + c] == expected_value(90 + r, 5 + 3 * c), path + ": partial read value");
  std::printf("cpp_consumer: %s: zarr v%d %s %llux%llu written, opened and read back\n", path.c_str(),
              spec.zarr_format, array.dtype().name().c_str(), static_cast<unsigned long long>(kRows),
              static_cast<unsigned long long>(kColumns));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [DIR]\n", argv[0]);
    return 2;
  }
  const bool temporary = argc < 2;
  fs::path root;
  if (temporary) {
    std::random_device random;
    root = fs::temp_directory_path() / ("zarrkit-cpp-consumer-" + std::to_string(random()));
  } else {
    root = argv[1];
  }
  try {
    zarrkit::ArraySpec v3;  // default codecs: bytes + zstd
    write_and_read(root, "v3_zstd", v3);

    zarrkit::ArraySpec v2;
    v2.zarr_format = 2;
    v2.v2_compressor = nlohmann::json{{"id", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}, {"blocksize", 0}};
    write_and_read(root, "v2_blosc", v2);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "cpp_consumer: error: %s\n", error.what());
    ++failures;
  }
  if (temporary) fs::remove_all(root);
  if (failures != 0) {
    std::fprintf(stderr, "cpp_consumer: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("cpp_consumer: ok\n");
  return 0;
}
