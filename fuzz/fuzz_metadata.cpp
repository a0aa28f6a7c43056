// Fuzz target: a metadata document from outside. The input is stored as zarr.json (v3) and as
// .zarray (v2) of a node, which is then opened as an array (and read: a few elements of its
// first corner, missing chunks giving the fill value) and as a group. Seeds: documents
// zarrkit writes itself for several kinds of array and for a group.
#include <nlohmann/json.hpp>

#include "fuzz_target.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/group.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit::fuzz {

std::vector<std::string> seeds() {
  using json = nlohmann::json;
  std::vector<std::string> out;
  const json bytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
  std::vector<ArraySpec> specs(4);
  specs[0].shape = {10, 20};
  specs[0].chunks = {5, 5};
  specs[0].dtype = DataType::float_(32);
  specs[0].fill_value = json("NaN");
  specs[1].shape = {64};
  specs[1].chunks = {16};
  specs[1].dtype = DataType::int_(16);
  specs[1].codecs = json::array({{{"name", "sharding_indexed"},
                                  {"configuration",
                                   {{"chunk_shape", {4}},
                                    {"codecs", json::array({bytes, {{"name", "zstd"}, {"configuration", {{"level", 1}}}}})},
                                    {"index_codecs", json::array({bytes, {{"name", "crc32c"}}})}}}}});
  specs[2].zarr_format = 2;
  specs[2].shape = {7, 3};
  specs[2].chunks = {4, 3};
  specs[2].dtype = DataType::int_(64);
  specs[3].zarr_format = 2;
  specs[3].shape = {5};
  specs[3].chunks = {2};
  specs[3].dtype = DataType::float_(64);
  specs[3].v2_filters = json::array({{{"id", "delta"}, {"dtype", "<f8"}}});
  for (const ArraySpec& spec : specs) {
    auto store = MemoryStore::create();
    Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()));
    for (const char* key : {"a/zarr.json", "a/.zarray"}) {
      if (auto doc = store->get(key)) out.emplace_back(reinterpret_cast<const char*>(doc->data()), doc->size());
    }
  }
  out.push_back(R"({"zarr_format": 3, "node_type": "group", "attributes": {"a": [1, 2, {"b": null}]}})");
  return out;
}

}  // namespace zarrkit::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zarrkit;
  const ByteView doc(reinterpret_cast<const std::byte*>(data), size);
  for (const char* key : {"n/zarr.json", "n/.zarray"}) {
    auto store = MemoryStore::create();
    store->set(key, doc);
    try {
      const Array a = Array::open(store, "n");
      Selection corner;
      for (std::size_t axis = 0; axis < a.ndim(); ++axis) corner.push_back(Slice{0, 2, 1});
      if (a.dtype().is_variable_length()) {
        (void)a.read_var(corner);
      } else {
        (void)a.read(corner);
      }
    } catch (const Error&) {
    }
    try {
      (void)Group::open(store, "n");
    } catch (const Error&) {
    }
  }
  return 0;
}
