// Fuzz target: a zip archive from outside, opened read-only as a ZipStore (the central
// directory, local headers, stored and deflated members, zip64 fields), its keys listed and
// read, and the array inside opened and read. Seeds: archives zarrkit writes (stored and
// deflated members).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>

#include "fuzz_target.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/zip_store.h"

namespace zarrkit::fuzz {
namespace {

// The file each input is written to (one per process), removed at exit.
struct Scratch {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("zarrkit-fuzz-zip-" + std::to_string(::getpid()) + ".zip");
  ~Scratch() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

const std::filesystem::path& scratch() {
  static const Scratch s;
  return s.path;
}

}  // namespace

std::vector<std::string> seeds() {
  std::vector<std::string> out;
  for (const bool deflate : {false, true}) {
    std::filesystem::remove(scratch());
    {
      ZipStoreOptions options;
      options.read_only = false;
      options.deflate_new_members = deflate;
      auto store = ZipStore::open(scratch(), options);
      ArraySpec spec;
      spec.shape = {6, 8};
      spec.chunks = {3, 8};
      spec.dtype = DataType::int_(32);
      Array a = Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()));
      std::vector<std::int32_t> values(48);
      std::iota(values.begin(), values.end(), 0);
      a.write({}, NDView{reinterpret_cast<std::byte*>(values.data()), spec.shape, NDView::c_strides(spec.shape, 4),
                         spec.dtype});
      store->close();
    }
    std::ifstream in(scratch(), std::ios::binary);
    out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::filesystem::remove(scratch());
  return out;
}

}  // namespace zarrkit::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zarrkit;
  {
    std::ofstream out(fuzz::scratch(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    auto store = ZipStore::open(fuzz::scratch());
    for (const std::string& key : store->list()) {
      try {
        (void)store->get(key);
      } catch (const Error&) {
      }
    }
    const Array a = Array::open(store, "a");
    (void)a.read();
  } catch (const Error&) {
  }
  return 0;
}
