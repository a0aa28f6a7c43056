#include "zarrkit/group.h"

#include <atomic>
#include <filesystem>

#include <unistd.h>

#include <gtest/gtest.h>

#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

json json_of(Store& store, const std::string& key) {
  auto v = store.get(key, BufferPrototype::host());
  if (!v) return "<absent>";
  return json::parse(as_chars(v->view()));
}

ArrayMetadata small_array(int zarr_format) {
  ArraySpec spec;
  spec.zarr_format = zarr_format;
  spec.shape = {4};
  spec.chunks = {2};
  spec.dtype = DataType::int_(16);
  return make_array_metadata(spec, CodecRegistry::builtin());
}

std::vector<std::string> paths_of(const std::vector<NodeInfo>& nodes) {
  std::vector<std::string> out;
  for (const auto& n : nodes) out.push_back(n.path);
  return out;
}

TEST(Group, V3CreateWritesZarrJsonForTheGroupAndItsAncestors) {
  auto store = MemoryStore::create();
  const Group g = Group::create(store, "a/b", 3, {{"title", "t"}});
  EXPECT_EQ(g.path(), "a/b");
  EXPECT_EQ(store->list(""), (std::vector<std::string>{"a/b/zarr.json", "a/zarr.json", "zarr.json"}));
  EXPECT_EQ(json_of(*store, "a/b/zarr.json"),
            json::parse(R"({"attributes": {"title": "t"}, "zarr_format": 3, "node_type": "group"})"));
  EXPECT_EQ(json_of(*store, "zarr.json"),
            json::parse(R"({"attributes": {}, "zarr_format": 3, "node_type": "group"})"));
  const Group reopened = Group::open(store, "/a/b/");
  EXPECT_EQ(reopened.attributes(), (json{{"title", "t"}}));
  EXPECT_EQ(reopened.zarr_format(), 3);
}

TEST(Group, V2CreateWritesZgroupAndZattrs) {
  auto store = MemoryStore::create();
  Group g = Group::create(store, "x", 2);
  EXPECT_EQ(store->list(""), (std::vector<std::string>{".zattrs", ".zgroup", "x/.zattrs", "x/.zgroup"}));
  EXPECT_EQ(json_of(*store, "x/.zgroup"), json::parse(R"({"zarr_format": 2})"));
  EXPECT_EQ(json_of(*store, "x/.zattrs"), json::object());
  g.set_attributes({{"k", 1}});
  EXPECT_EQ(json_of(*store, "x/.zattrs"), (json{{"k", 1}}));
  EXPECT_EQ(Group::open(store, "x").attributes(), (json{{"k", 1}}));
  EXPECT_EQ(Group::open(store, "x").zarr_format(), 2);
}

TEST(Group, MembersAndWalk) {
  for (int format : {2, 3}) {
    SCOPED_TRACE(format);
    auto store = MemoryStore::create();
    const Group root = Group::create(store, "", format);
    const Group b = root.create_group("b");
    root.create_array("a", small_array(format));
    b.create_array("z", small_array(format));
    const Group c = b.create_group("c");
    c.create_group("d");
    root.create_group("e");
    store->set("stray/file.bin", as_bytes("x"));  // a directory without metadata: not a node

    const auto members = root.members();
    EXPECT_EQ(paths_of(members), (std::vector<std::string>{"a", "b", "e"}));
    EXPECT_EQ(members[0].type, NodeType::kArray);
    EXPECT_EQ(members[1].type, NodeType::kGroup);
    EXPECT_EQ(members[1].name, "b");
    EXPECT_EQ(members[1].zarr_format, format);
    EXPECT_EQ(paths_of(root.walk()), (std::vector<std::string>{"a", "b", "b/c", "b/c/d", "b/z", "e"}));
    EXPECT_EQ(paths_of(b.walk()), (std::vector<std::string>{"b/c", "b/c/d", "b/z"}));

    const auto info = probe_node(*store, "b/c/d");
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->name, "d");
    EXPECT_EQ(info->type, NodeType::kGroup);
    EXPECT_FALSE(probe_node(*store, "stray").has_value());
    EXPECT_EQ(probe_node(*store, "b/z")->type, NodeType::kArray);

    EXPECT_EQ(root.open_group("b/c").path(), "b/c");
    EXPECT_EQ(root.open_array("b/z").shape(), Shape{4});
    EXPECT_THROW(root.open_array("b"), InvalidArgumentError);
    EXPECT_THROW(root.open_group("a"), InvalidArgumentError);
    EXPECT_THROW(root.open_group("missing"), NotFoundError);
  }
}

TEST(Group, CreateKeepsAnExistingGroupAndRefusesAnArray) {
  auto store = MemoryStore::create();
  Group::create(store, "g", 3, {{"first", true}});
  const Group again = Group::create(store, "g", 3, {{"second", true}});
  EXPECT_EQ(again.attributes(), (json{{"first", true}}));  // kept as it was
  const Group replaced = Group::create(store, "g", 3, {{"second", true}}, /*overwrite=*/true);
  EXPECT_EQ(Group::open(store, "g").attributes(), (json{{"second", true}}));

  Array::create(store, "arr", small_array(3));
  EXPECT_THROW(Group::create(store, "arr"), InvalidArgumentError);
  EXPECT_THROW(Group::create(store, "arr/inside"), InvalidArgumentError);
  Group::create(store, "arr", 3, json::object(), /*overwrite=*/true);
  EXPECT_EQ(probe_node(*store, "arr")->type, NodeType::kGroup);
}

TEST(Group, CreateArrayChecksTheFormat) {
  auto store = MemoryStore::create();
  const Group v3 = Group::create(store, "", 3);
  EXPECT_THROW(v3.create_array("a", small_array(2)), InvalidArgumentError);
  EXPECT_THROW(v3.create_group(""), InvalidArgumentError);
  EXPECT_THROW(v3.create_group("zarr.json"), InvalidArgumentError);
  EXPECT_THROW(v3.create_group("..."), InvalidArgumentError);
  EXPECT_THROW(Group::create(store, "g", 4), InvalidArgumentError);
  EXPECT_THROW(Group::create(store, "g", 3, json::array()), InvalidArgumentError);
}

TEST(Group, OpenErrors) {
  auto store = MemoryStore::create();
  try {
    Group::open(store, "nothing/here");
    FAIL();
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find("'nothing/here'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(store->describe()), std::string::npos) << e.what();
  }
  store->set("bad/zarr.json", as_bytes(R"({"zarr_format": 3, "node_type": "dataset"})"));
  EXPECT_THROW(Group::open(store, "bad"), InvalidArgumentError);
  EXPECT_THROW(probe_node(*store, "bad"), InvalidArgumentError);
  EXPECT_THROW(Group::open(store, "../x"), InvalidArgumentError);
  // node_type of the wrong JSON type: a typed error, never a JSON library exception.
  store->set("seven/zarr.json", as_bytes(R"({"zarr_format": 3, "node_type": 7})"));
  EXPECT_THROW(Group::open(store, "seven"), InvalidArgumentError);
  EXPECT_THROW(Array::open(store, "seven"), InvalidArgumentError);
  EXPECT_THROW(probe_node(*store, "seven"), InvalidArgumentError);
}

TEST(Group, WalkStopsAtTheDepthLimit) {
  auto store = MemoryStore::create();
  const std::string group = R"({"attributes": {}, "zarr_format": 3, "node_type": "group"})";
  std::string path;
  store->set("zarr.json", as_bytes(group));
  for (int depth = 1; depth <= 70; ++depth) {
    path += (path.empty() ? "" : "/") + std::string("n");
    store->set(path + "/zarr.json", as_bytes(group));
  }
  EXPECT_THROW(Group::open(store).walk(), ResourceExhaustedError);
  // 64 levels are fine.
  EXPECT_EQ(Group::open(store, "n/n/n/n/n/n").walk().size(), 64u);
}

TEST(Group, LocalStoreHierarchy) {
  static std::atomic<int> counter{0};
  const auto dir = std::filesystem::temp_directory_path() /
                   fmt::format("zarrkit-group-test-{}-{}", ::getpid(), counter++);
  std::filesystem::remove_all(dir);
  {
    auto store = LocalStore::open(dir);
    const Group root = Group::create(store, "", 3);
    root.create_group("one").create_array("arr", small_array(3));
    root.create_group("two");
    const Group reopened = Group::open(LocalStore::open(dir));
    EXPECT_EQ(paths_of(reopened.walk()), (std::vector<std::string>{"one", "one/arr", "two"}));
    EXPECT_TRUE(std::filesystem::is_regular_file(dir / "one/arr/zarr.json"));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zarrkit
