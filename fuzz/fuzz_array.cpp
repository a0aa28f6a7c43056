// Fuzz target: one stored chunk (or shard) of an array read through the whole engine. The
// first input byte picks the array's metadata from kTemplates (every common codec, v2 and v3,
// sharding with its index checksum, filters, strings), the rest is the value stored at the
// chunk's key; the array is then read whole and in part. Seeds: each template's real encoding.
#include <cstring>
#include <numeric>

#include <nlohmann/json.hpp>

#include "fuzz_target.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit::fuzz {
namespace {

using json = nlohmann::json;

const json kBytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};

json blosc(const char* cname, const char* shuffle) {
  return {{"name", "blosc"},
          {"configuration", {{"cname", cname}, {"clevel", 5}, {"shuffle", shuffle}, {"typesize", 4}, {"blocksize", 0}}}};
}

json sharding(const json& inner, const char* location) {
  return json::array({{{"name", "sharding_indexed"},
                       {"configuration",
                        {{"chunk_shape", {4, 8}},
                         {"codecs", inner},
                         {"index_codecs", json::array({kBytes, {{"name", "crc32c"}}})},
                         {"index_location", location}}}}});
}

struct Template {
  int zarr_format;
  DataType dtype;
  json codecs;      // v3
  json compressor;  // v2
  json filters;     // v2
};

const std::vector<Template>& templates() {
  static const std::vector<Template> t = {
      {3, DataType::int_(32), json::array({kBytes, {{"name", "zstd"}, {"configuration", {{"level", 1}}}}}), {}, {}},
      {3, DataType::int_(32), json::array({kBytes, {{"name", "gzip"}, {"configuration", {{"level", 1}}}}}), {}, {}},
      {3, DataType::float_(32), json::array({kBytes, blosc("lz4", "shuffle")}), {}, {}},
      {3, DataType::float_(32), json::array({kBytes, blosc("zstd", "bitshuffle")}), {}, {}},
      {3, DataType::float_(32), json::array({kBytes, blosc("blosclz", "noshuffle")}), {}, {}},
      {3, DataType::int_(32), json::array({kBytes, {{"name", "crc32c"}}}), {}, {}},
      {3, DataType::int_(32), sharding(json::array({kBytes, {{"name", "zstd"}, {"configuration", {{"level", 1}}}}}), "end"), {}, {}},
      {3, DataType::int_(32), sharding(json::array({kBytes, {{"name", "gzip"}, {"configuration", {{"level", 1}}}}}), "start"), {}, {}},
      {3, DataType::int_(32),
       json::array({{{"name", "transpose"}, {"configuration", {{"order", {1, 0}}}}}, kBytes,
                    {{"name", "zstd"}, {"configuration", {{"level", 1}}}}}),
       {}, {}},
      {2, DataType::int_(32), {}, {{"id", "zlib"}, {"level", 1}}, nullptr},
      {2, DataType::int_(32), {}, {{"id", "lz4"}, {"acceleration", 1}}, nullptr},
      {2, DataType::int_(32), {}, {{"id", "bz2"}, {"level", 1}}, nullptr},
      {2, DataType::int_(32), {}, {{"id", "lzma"}}, nullptr},
      {2, DataType::int_(32), {}, {{"id", "zlib"}, {"level", 1}}, json::array({{{"id", "delta"}, {"dtype", "<i4"}}})},
      {2, DataType::int_(32), {}, {{"id", "gzip"}, {"level", 1}}, json::array({{{"id", "shuffle"}, {"elementsize", 4}}})},
      {2, DataType::int_(32), {}, {{"id", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}, {"blocksize", 0}},
       nullptr},
  };
  return t;
}

const Shape kShape = {8, 16};

Array make(const Template& t, const std::shared_ptr<MemoryStore>& store) {
  ArraySpec spec;
  spec.zarr_format = t.zarr_format;
  spec.shape = kShape;
  spec.chunks = t.codecs.is_array() && t.codecs[0].value("name", "") == "sharding_indexed" ? Shape{8, 16} : kShape;
  spec.dtype = t.dtype;
  if (t.zarr_format == 3) {
    spec.codecs = t.codecs;
  } else {
    spec.v2_compressor = t.compressor;
    if (!t.filters.is_null()) spec.v2_filters = t.filters;
  }
  return Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()), true);
}

std::string chunk_key(const Template& t) { return t.zarr_format == 3 ? "a/c/0/0" : "a/0.0"; }

}  // namespace

std::vector<std::string> seeds() {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < templates().size(); ++i) {
    auto store = MemoryStore::create();
    Array a = make(templates()[i], store);
    std::vector<std::int32_t> values(kShape[0] * kShape[1]);
    std::iota(values.begin(), values.end(), -40);
    a.write({}, NDView{reinterpret_cast<std::byte*>(values.data()), kShape, NDView::c_strides(kShape, 4), a.dtype()});
    const auto stored = store->get(chunk_key(templates()[i]));
    std::string seed(1, static_cast<char>(i));
    if (stored) seed.append(reinterpret_cast<const char*>(stored->data()), stored->size());
    out.push_back(std::move(seed));
  }
  return out;
}

}  // namespace zarrkit::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zarrkit;
  if (size == 0) return 0;
  const auto& t = fuzz::templates()[data[0] % fuzz::templates().size()];
  auto store = MemoryStore::create();
  try {
    Array created = fuzz::make(t, store);
    store->set(fuzz::chunk_key(t), ByteView(reinterpret_cast<const std::byte*>(data + 1), size - 1));
    const Array a = Array::open(store, "a");
    (void)a.read();
    (void)a.read({Slice{1, 7, 2}, Slice{3, 12, 1}});
  } catch (const Error&) {
    // A typed error is the right answer to bad bytes.
  }
  return 0;
}
