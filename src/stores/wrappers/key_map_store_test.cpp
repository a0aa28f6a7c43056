#include "stores/wrappers/key_map_store.h"

#include <array>

#include <gtest/gtest.h>

#include "zarrkit/error.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

std::string text(const std::optional<Buffer>& value) {
  return value ? std::string(as_chars(value->view())) : "<absent>";
}

struct Fixture {
  std::shared_ptr<MemoryStore> inner = MemoryStore::create();
  std::shared_ptr<KeyMapStore> view;

  Fixture() {
    inner->set("arr/c/3/1", as_bytes("chunk three-one"));
    inner->set("arr/c/0/0", as_bytes("chunk zero"));
    std::map<std::string, Buffer, std::less<>> held;
    held.emplace("zarr.json", Buffer::copy_of(as_bytes("{metadata}")));
    view = std::make_shared<KeyMapStore>(
        inner,
        std::map<std::string, std::string, std::less<>>{
            {"c/0/0", "arr/c/3/1"}, {"c/1/0", "arr/c/0/0"}, {"c/2/0", "arr/c/9/9"}},
        std::move(held));
  }
};

TEST(KeyMapStore, ReadsMappedKeysFromTheInnerStoreAndHeldValuesFromItself) {
  Fixture f;
  EXPECT_EQ(text(f.view->get("c/0/0")), "chunk three-one");
  EXPECT_EQ(text(f.view->get("c/1/0", BufferPrototype::host(), ByteRange::range(6, 10))), "zero");
  EXPECT_EQ(text(f.view->get("c/2/0")), "<absent>");  // mapped to a key the inner store lacks
  EXPECT_EQ(text(f.view->get("arr/c/0/0")), "<absent>");  // inner keys are not visible as such
  EXPECT_EQ(text(f.view->get("zarr.json", BufferPrototype::host(), ByteRange::last(9))), "metadata}");
  EXPECT_TRUE(f.view->exists("c/1/0"));
  EXPECT_FALSE(f.view->exists("c/2/0"));
  EXPECT_EQ(f.view->size("c/0/0"), 15u);
  EXPECT_EQ(f.view->size("zarr.json"), 10u);

  std::array<char, 5> first{};
  std::array<char, 3> last{};
  const std::array<ByteRange, 2> ranges{ByteRange::range(0, 5), ByteRange::last(3)};
  const std::array<MutableByteView, 2> dests{MutableByteView{reinterpret_cast<std::byte*>(first.data()), 5},
                                             MutableByteView{reinterpret_cast<std::byte*>(last.data()), 3}};
  EXPECT_EQ(f.view->read_into("c/0/0", ranges, dests), 15u);
  EXPECT_EQ(std::string(first.data(), 5), "chunk");
  EXPECT_EQ(std::string(last.data(), 3), "one");

  auto parts = f.view->get_ranges("c/1/0", std::array{ByteRange::range(0, 5)});
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(std::string(as_chars((*parts)[0].view())), "chunk");
}

TEST(KeyMapStore, ListsWhatExistsAndRefusesWrites) {
  Fixture f;
  EXPECT_EQ(f.view->list(), (std::vector<std::string>{"c/0/0", "c/1/0", "zarr.json"}));
  EXPECT_EQ(f.view->list("c"), (std::vector<std::string>{"c/0/0", "c/1/0"}));
  EXPECT_FALSE(f.view->capabilities().writable);
  EXPECT_THROW(f.view->set("c/0/0", as_bytes("x")), UnsupportedError);
  EXPECT_THROW(f.view->erase("c/0/0"), UnsupportedError);
  EXPECT_THROW(f.view->erase_prefix("c"), UnsupportedError);
  EXPECT_EQ(text(f.inner->get("arr/c/3/1")), "chunk three-one");
}

TEST(KeyMapStore, RefusesKeysThatEscape) {
  auto inner = MemoryStore::create();
  EXPECT_THROW(KeyMapStore(inner, {{"c/0", "../x"}}, {}), InvalidArgumentError);
  EXPECT_THROW(KeyMapStore(inner, {{"/c", "x"}}, {}), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
