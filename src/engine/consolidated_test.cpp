// Consolidated metadata: what consolidate() writes (v3 inline, v2 .zmetadata), that a group
// opened with it reads nothing more from the store, and malformed documents.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>

#include "engine/consolidated.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/group.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

// Counts the gets that reach the store (and which keys), forwarding everything.
class GetCountingStore : public Store {
 public:
  explicit GetCountingStore(std::shared_ptr<Store> inner) : inner_(std::move(inner)) {}
  StoreCapabilities capabilities() const override { return inner_->capabilities(); }
  std::string describe() const override { return inner_->describe(); }
  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype,
                            std::optional<ByteRange> range) override {
    std::lock_guard lock(mutex_);
    keys_.emplace_back(key);
    return inner_->get(key, prototype, range);
  }
  // A size is the inner store's (a lookup in memory), not a get: read_json asks for it first.
  std::optional<std::uint64_t> size(std::string_view key) override { return inner_->size(key); }
  void set(std::string_view key, ByteView value) override { inner_->set(key, value); }
  void erase(std::string_view key) override { inner_->erase(key); }
  std::vector<std::string> list(std::string_view prefix) override {
    std::lock_guard lock(mutex_);
    keys_.push_back("list:" + std::string(prefix));
    return inner_->list(prefix);
  }
  std::vector<std::string> take() {
    std::lock_guard lock(mutex_);
    return std::exchange(keys_, {});
  }

 private:
  std::shared_ptr<Store> inner_;
  std::mutex mutex_;
  std::vector<std::string> keys_;
};

json json_of(Store& store, const std::string& key) {
  auto v = store.get(key);
  if (!v) return "<absent>";
  return json::parse(as_chars(v->view()));
}

ArrayMetadata small_array(int zarr_format) {
  ArraySpec spec;
  spec.zarr_format = zarr_format;
  spec.shape = {4};
  spec.chunks = {2};
  spec.dtype = DataType::int_(16);
  spec.attributes = {{"x", 1}};
  return make_array_metadata(spec, CodecRegistry::builtin());
}

// root {title}, a (array), g {y} / b (array), g / h (group)
void make_hierarchy(const std::shared_ptr<Store>& store, int zarr_format) {
  Group root = Group::create(store, "", zarr_format, {{"title", "t"}});
  root.create_array("a", small_array(zarr_format));
  Group g = root.create_group("g", {{"y", 2}});
  g.create_array("b", small_array(zarr_format));
  g.create_group("h");
}

std::vector<std::string> paths_of(const std::vector<NodeInfo>& nodes) {
  std::vector<std::string> out;
  for (const auto& n : nodes) out.push_back(n.path);
  return out;
}

const json kEmptyBlock = {{"kind", "inline"}, {"must_understand", false}, {"metadata", json::object()}};

TEST(Consolidated, V3IsInlineInTheGroupsZarrJsonAsZarrPythonWritesIt) {
  auto store = MemoryStore::create();
  make_hierarchy(store, 3);
  consolidate_metadata(store);
  const json root = json_of(*store, "zarr.json");
  EXPECT_EQ(root["attributes"], (json{{"title", "t"}}));
  const json& block = root.at("consolidated_metadata");
  EXPECT_EQ(block["kind"], "inline");
  EXPECT_EQ(block["must_understand"], false);
  const json& metadata = block.at("metadata");
  std::vector<std::string> keys;
  for (const auto& [k, v] : metadata.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "g", "g/b", "g/h"}));
  EXPECT_EQ(metadata["a"], json_of(*store, "a/zarr.json"));
  EXPECT_EQ(metadata["g/b"], json_of(*store, "g/b/zarr.json"));
  json g = json_of(*store, "g/zarr.json");
  g["consolidated_metadata"] = kEmptyBlock;  // groups inside carry an empty block, as in zarr-python
  EXPECT_EQ(metadata["g"], g);
  EXPECT_FALSE(json_of(*store, "g/zarr.json").contains("consolidated_metadata"));  // children untouched
}

TEST(Consolidated, V2IsZmetadataAsZarrPythonWritesIt) {
  auto store = MemoryStore::create();
  make_hierarchy(store, 2);
  consolidate_metadata(store);
  const json doc = json_of(*store, ".zmetadata");
  EXPECT_EQ(doc["zarr_consolidated_format"], 1);
  const json& metadata = doc.at("metadata");
  std::vector<std::string> keys;
  for (const auto& [k, v] : metadata.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{".zattrs", ".zgroup", "a/.zarray", "a/.zattrs", "g/.zattrs", "g/.zgroup",
                                            "g/b/.zarray", "g/b/.zattrs", "g/h/.zattrs", "g/h/.zgroup"}));
  EXPECT_EQ(metadata[".zattrs"], (json{{"title", "t"}}));
  EXPECT_EQ(metadata["a/.zarray"], json_of(*store, "a/.zarray"));
  EXPECT_EQ(metadata["a/.zattrs"], (json{{"x", 1}}));
  EXPECT_EQ(metadata["g/h/.zgroup"], (json{{"zarr_format", 2}}));
}

TEST(Consolidated, OpeningTheHierarchyCostsOneGet) {
  for (int format : {3, 2}) {
    auto memory = MemoryStore::create();
    make_hierarchy(memory, format);
    consolidate_metadata(memory);
    auto counting = std::make_shared<GetCountingStore>(memory);
    Group root = Group::open(counting);
    const auto opened = counting->take();
    // v3: zarr.json. v2: the zarr.json probe is a size lookup that finds nothing (no get),
    // then .zmetadata answers everything.
    const std::vector<std::string> expected =
        format == 3 ? std::vector<std::string>{"zarr.json"} : std::vector<std::string>{".zmetadata"};
    EXPECT_EQ(opened, expected);
    EXPECT_TRUE(root.has_consolidated_metadata());
    EXPECT_EQ(root.attributes(), (json{{"title", "t"}}));
    EXPECT_EQ(paths_of(root.walk()), (std::vector<std::string>{"a", "g", "g/b", "g/h"}));
    EXPECT_EQ(paths_of(root.members()), (std::vector<std::string>{"a", "g"}));
    Group g = root.open_group("g");
    EXPECT_EQ(g.attributes(), (json{{"y", 2}}));
    EXPECT_EQ(paths_of(g.members()), (std::vector<std::string>{"g/b", "g/h"}));
    Array b = g.open_array("b");
    EXPECT_EQ(b.metadata().attributes, (json{{"x", 1}}));
    EXPECT_EQ(b.path(), "g/b");
    Array a = root.open_array("a");
    EXPECT_EQ(a.shape(), (Shape{4}));
    EXPECT_EQ(counting->take(), std::vector<std::string>{}) << "format " << format;
    // The arrays work: they read their chunks from the store.
    EXPECT_EQ(b.read().num_elements(), 4u);
  }
}

TEST(Consolidated, WithoutItGroupsReadTheStoreAndNodesMissingFromItAreStillFound) {
  auto memory = MemoryStore::create();
  make_hierarchy(memory, 3);
  EXPECT_FALSE(Group::open(memory).has_consolidated_metadata());
  consolidate_metadata(memory);
  Group::open(memory).create_group("later");  // not in the snapshot
  Group root = Group::open(memory);
  EXPECT_EQ(paths_of(root.members()), (std::vector<std::string>{"a", "g"}));
  EXPECT_EQ(root.open_group("later").path(), "later");
  root.consolidate();
  EXPECT_EQ(paths_of(Group::open(memory).members()), (std::vector<std::string>{"a", "g", "later"}));
}

// use_consolidated as in zarr-python: None (where present), True (required), False (ignored:
// the store is read, .zmetadata included for v2's own attributes).
TEST(Consolidated, OpeningCanRequireOrIgnoreIt) {
  for (int format : {3, 2}) {
    auto memory = MemoryStore::create();
    make_hierarchy(memory, format);
    EXPECT_THROW(Group::open(memory, "", ConsolidatedUse::kRequire), NotFoundError) << "format " << format;
    consolidate_metadata(memory);
    Group::open(memory).create_group("later");  // not in the snapshot
    EXPECT_TRUE(Group::open(memory, "", ConsolidatedUse::kRequire).has_consolidated_metadata());
    auto counting = std::make_shared<GetCountingStore>(memory);
    Group ignoring = Group::open(counting, "", ConsolidatedUse::kIgnore);
    EXPECT_FALSE(ignoring.has_consolidated_metadata());
    const auto opened = counting->take();
    EXPECT_EQ(std::count(opened.begin(), opened.end(), ".zmetadata"), 0) << "format " << format;
    EXPECT_EQ(ignoring.attributes(), (json{{"title", "t"}}));
    EXPECT_EQ(paths_of(ignoring.members()), (std::vector<std::string>{"a", "g", "later"}));
    EXPECT_EQ(paths_of(Group::open(memory).members()), (std::vector<std::string>{"a", "g"}));
  }
}

TEST(Consolidated, V2AttributesStayInStepWithZmetadata) {
  auto memory = MemoryStore::create();
  make_hierarchy(memory, 2);
  Group root = consolidate_metadata(memory);
  root.set_attributes({{"title", "new"}});
  EXPECT_EQ(Group::open(memory).attributes(), (json{{"title", "new"}}));
  EXPECT_EQ(json_of(*memory, ".zattrs"), (json{{"title", "new"}}));
}

TEST(Consolidated, ConsolidatingASubgroupKeysPathsFromIt) {
  auto memory = MemoryStore::create();
  make_hierarchy(memory, 3);
  Group g = consolidate_metadata(memory, "g");
  const json doc = json_of(*memory, "g/zarr.json");
  const json& metadata = doc["consolidated_metadata"]["metadata"];
  EXPECT_TRUE(metadata.contains("b") && metadata.contains("h") && metadata.size() == 2);
  EXPECT_EQ(paths_of(Group::open(memory, "g").walk()), (std::vector<std::string>{"g/b", "g/h"}));
}

// ---- Malformed documents ---------------------------------------------------------------------

json v3_group_with(json block) {
  return {{"zarr_format", 3}, {"node_type", "group"}, {"attributes", json::object()}, {"consolidated_metadata", block}};
}

TEST(Consolidated, MalformedDocumentsAreTypedErrors) {
  const json array_doc = json::parse(dump_json(array_metadata_to_v3_json(small_array(3))));
  auto open_with = [&](const json& block) {
    auto memory = MemoryStore::create();
    memory->set("zarr.json", as_bytes(v3_group_with(block).dump()));
    return Group::open(memory);
  };
  json bad_path = kEmptyBlock;
  bad_path["metadata"]["../x"] = array_doc;
  EXPECT_THROW(open_with(bad_path), InvalidArgumentError);
  json not_a_node = kEmptyBlock;
  not_a_node["metadata"]["x"] = 5;
  EXPECT_THROW(open_with(not_a_node), InvalidArgumentError);
  json deep = kEmptyBlock;
  std::string path = "n";
  for (int i = 0; i < 70; ++i) path += "/n";
  deep["metadata"][path] = array_doc;
  EXPECT_THROW(open_with(deep), ResourceExhaustedError);
  // An entry whose parent is not a group of the document is left out; a bad array document
  // fails when that array is opened.
  json orphan = kEmptyBlock;
  orphan["metadata"]["a"] = array_doc;
  orphan["metadata"]["a/inside"] = array_doc;
  orphan["metadata"]["missing/child"] = array_doc;
  orphan["metadata"]["broken"] = {{"zarr_format", 3}, {"node_type", "array"}, {"shape", "no"}};
  Group g = open_with(orphan);
  EXPECT_EQ(paths_of(g.walk()), (std::vector<std::string>{"a", "broken"}));
  EXPECT_THROW(g.open_array("broken"), InvalidArgumentError);
  EXPECT_THROW(g.open_group("a"), InvalidArgumentError);

  auto memory = MemoryStore::create();
  memory->set(".zgroup", as_bytes(R"({"zarr_format": 2})"));
  memory->set(".zmetadata", as_bytes(R"({"metadata": {}, "zarr_consolidated_format": 2})"));
  EXPECT_THROW(Group::open(memory), InvalidArgumentError);
  memory->set(".zmetadata", as_bytes(R"({"metadata": [], "zarr_consolidated_format": 1})"));
  EXPECT_THROW(Group::open(memory), InvalidArgumentError);
  memory->set(".zmetadata", as_bytes(R"({"metadata": {".zgroup": {"zarr_format": 3}}, "zarr_consolidated_format": 1})"));
  EXPECT_THROW(Group::open(memory), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
