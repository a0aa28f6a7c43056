// Fuzz target: the smaller parsers of outside bytes. The first input byte picks one:
//   0  S3 XML answers (errors, list pages, upload ids, delete results)
//   1  selection expressions (the CLI's "[0:10, ::2, 5]")
//   2  a group's zarr.json with consolidated metadata, then a walk that opens every array
//   3  a v2 .zmetadata beside a .zgroup, the same walk
// Seeds: answers and expressions as the servers and users write them, and consolidated
// documents zarrkit writes for a small hierarchy (v3 and v2).
#include <nlohmann/json.hpp>

#include "fuzz_target.h"
#include "stores/remote/s3_xml.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/group.h"
#include "zarrkit/selection.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit::fuzz {
namespace {

std::string consolidated_document(int zarr_format) {
  auto store = MemoryStore::create();
  Group root = Group::create(store, "", zarr_format, {{"title", "t"}});
  ArraySpec spec;
  spec.zarr_format = zarr_format;
  spec.shape = {6, 4};
  spec.chunks = {3, 4};
  spec.dtype = DataType::int_(16);
  Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()));
  Group::create(store, "g", zarr_format);
  Array::create(store, "g/b", make_array_metadata(spec, CodecRegistry::builtin()));
  consolidate_metadata(store, "");
  const auto doc = store->get(zarr_format == 3 ? "zarr.json" : ".zmetadata");
  return doc ? std::string(reinterpret_cast<const char*>(doc->data()), doc->size()) : std::string();
}

void walk_consolidated(const std::shared_ptr<MemoryStore>& store) {
  const Group g = Group::open(store, "");
  for (const NodeInfo& node : g.walk()) {
    if (node.type != NodeType::kArray) continue;
    try {
      const Array a = g.open_array(node.path);
      Selection corner;
      for (std::size_t axis = 0; axis < a.ndim(); ++axis) corner.push_back(Slice{0, 1, 1});
      if (!a.dtype().is_variable_length()) (void)a.read(corner);
    } catch (const Error&) {
    }
  }
}

}  // namespace

std::vector<std::string> seeds() {
  std::vector<std::string> out = {
      std::string(1, '\0') + R"(<?xml version="1.0"?><Error><Code>NoSuchKey</Code><Message>gone</Message></Error>)",
      std::string(1, '\0') +
          R"(<ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key>a/zarr.json</Key></Contents>)"
          R"(<CommonPrefixes><Prefix>a/c/</Prefix></CommonPrefixes><NextContinuationToken>x</NextContinuationToken></ListBucketResult>)",
      std::string(1, '\0') + R"(<InitiateMultipartUploadResult><UploadId>abc</UploadId></InitiateMultipartUploadResult>)",
      std::string(1, '\0') + R"(<DeleteResult><Error><Key>k</Key><Code>AccessDenied</Code><Message>no</Message></Error></DeleteResult>)",
      std::string(1, '\1') + "[0:10, ::2, 5]",
      std::string(1, '\1') + "[..., -1, 3:-3:-1]",
      std::string(1, '\2') + consolidated_document(3),
      std::string(1, '\3') + consolidated_document(2),
  };
  return out;
}

}  // namespace zarrkit::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zarrkit;
  if (size == 0) return 0;
  const ByteView rest(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  try {
    switch (data[0] % 4) {
      case 0:
        (void)remote::parse_s3_error(rest);
        (void)remote::parse_list_page(rest);
        (void)remote::parse_upload_id(rest);
        (void)remote::parse_delete_result(rest);
        break;
      case 1:
        (void)parse_selection(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
        break;
      case 2: {
        auto store = MemoryStore::create();
        store->set("zarr.json", rest);
        fuzz::walk_consolidated(store);
        break;
      }
      default: {
        auto store = MemoryStore::create();
        const std::string zgroup = R"({"zarr_format": 2})";
        store->set(".zgroup", ByteView(reinterpret_cast<const std::byte*>(zgroup.data()), zgroup.size()));
        store->set(".zmetadata", rest);
        fuzz::walk_consolidated(store);
        break;
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
