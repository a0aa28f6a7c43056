#include "zarrkit/store.h"

#include <gtest/gtest.h>

#include <string>

#include "zarrkit/error.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using namespace std::string_literals;

TEST(ValidateKey, AcceptsOrdinaryKeys) {
  for (const char* key : {"zarr.json", "a/b/c", "group/array/c/0/1", ".zarray", "a/.zattrs",
                          "a..b", "...", "x y", "\xc3\xa9t\xc3\xa9"}) {
    EXPECT_NO_THROW(validate_key(key)) << key;
  }
}

TEST(ValidateKey, RejectsUnsafeKeys) {
  const std::string bad[] = {
      "",       "/abs",   "/",     "a/",    "a//b",   ".",      "..",    "../x",
      "a/../b", "a/./b",  "a/.",   "a/..",  "a\\b",   "..\\x",  "a\0b"s, "\0"s,
      "a\nb",   "a\tb",   "a\rb",  "a\x1f", "a\x7f",  "//",     "./a",
  };
  for (const std::string& key : bad) {
    EXPECT_THROW(validate_key(key), InvalidArgumentError) << "key of " << key.size() << " bytes";
  }
}

TEST(ValidateKey, MessageNamesTheKeyAndEscapesControlBytes) {
  try {
    validate_key("group/../etc");
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("group/../etc"), std::string::npos) << e.what();
  }
  try {
    validate_key("a\0b"s);
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("a\\x00b"), std::string::npos) << message;
    EXPECT_EQ(message.find('\0'), std::string::npos);
  }
}

TEST(ValidatePrefix, AllowsRootAndTrailingSlash) {
  EXPECT_NO_THROW(validate_prefix(""));
  EXPECT_NO_THROW(validate_prefix("a"));
  EXPECT_NO_THROW(validate_prefix("a/b/"));
  EXPECT_THROW(validate_prefix("/"), InvalidArgumentError);
  EXPECT_THROW(validate_prefix("a//"), InvalidArgumentError);
  EXPECT_THROW(validate_prefix("../"), InvalidArgumentError);
  EXPECT_THROW(validate_prefix("/a"), InvalidArgumentError);
  EXPECT_EQ(normalize_prefix("a/b/"), "a/b");
  EXPECT_EQ(normalize_prefix(""), "");
}

TEST(JoinKey, SkipsEmptyPartsAndDuplicateSlashes) {
  EXPECT_EQ(join_key("a/b", "zarr.json"), "a/b/zarr.json");
  EXPECT_EQ(join_key("", "zarr.json"), "zarr.json");
  EXPECT_EQ(join_key("a", ""), "a");
  EXPECT_EQ(join_key("a/", "b"), "a/b");
  EXPECT_EQ(join_key("", ""), "");
}

TEST(KeyIsUnder, DirectorySemantics) {
  EXPECT_TRUE(key_is_under("a/b", "a"));
  EXPECT_TRUE(key_is_under("a/b/c", "a/b"));
  EXPECT_TRUE(key_is_under("anything", ""));
  EXPECT_FALSE(key_is_under("ab", "a"));
  EXPECT_FALSE(key_is_under("a", "a"));
}

TEST(ByteRangeResolve, ClampsToTheValue) {
  using R = std::pair<std::uint64_t, std::uint64_t>;
  EXPECT_EQ(ByteRange::range(2, 5).resolve(10), (R{2, 5}));
  EXPECT_EQ(ByteRange::range(8, 50).resolve(10), (R{8, 10}));
  EXPECT_EQ(ByteRange::range(20, 50).resolve(10), (R{10, 10}));
  EXPECT_EQ(ByteRange::range(5, 3).resolve(10), (R{5, 5}));  // reversed: empty
  EXPECT_EQ(ByteRange::from_offset(4).resolve(10), (R{4, 10}));
  EXPECT_EQ(ByteRange::from_offset(40).resolve(10), (R{10, 10}));
  EXPECT_EQ(ByteRange::last(3).resolve(10), (R{7, 10}));
  EXPECT_EQ(ByteRange::last(30).resolve(10), (R{0, 10}));
  EXPECT_EQ(ByteRange::last(0).resolve(10), (R{10, 10}));
  EXPECT_EQ(ByteRange::range(0, UINT64_MAX).resolve(UINT64_MAX), (R{0, UINT64_MAX}));
}

// A store that implements only the pure virtual methods, to test Store's defaults.
class MinimalStore : public Store {
 public:
  StoreCapabilities capabilities() const override { return {}; }
  std::string describe() const override { return "minimal"; }
  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype,
                            std::optional<ByteRange> range) override {
    ++gets;
    return inner.get(key, prototype, range);
  }
  void set(std::string_view key, ByteView value) override { inner.set(key, value); }
  void erase(std::string_view key) override {
    ++erases;
    inner.erase(key);
  }
  std::vector<std::string> list(std::string_view prefix) override { return inner.list(prefix); }

  MemoryStore inner;
  int gets = 0;
  int erases = 0;
};

MutableByteView as_writable(std::string& s) { return {reinterpret_cast<std::byte*>(s.data()), s.size()}; }

TEST(StoreDefaults, GetRangesExistsSize) {
  MinimalStore store;
  store.set("k", as_bytes("0123456789"));
  Store& s = store;
  const ByteRange ranges[] = {ByteRange::range(1, 3), ByteRange::last(2), ByteRange::from_offset(20)};
  auto parts = s.get_ranges("k", ranges);
  ASSERT_TRUE(parts);
  ASSERT_EQ(parts->size(), 3u);
  EXPECT_EQ(as_chars((*parts)[0].view()), "12");
  EXPECT_EQ(as_chars((*parts)[1].view()), "89");
  EXPECT_EQ(as_chars((*parts)[2].view()), "");
  EXPECT_EQ(store.gets, 3);
  EXPECT_FALSE(s.get_ranges("missing", ranges));
  EXPECT_FALSE(s.get_ranges("missing", {}));
  auto none = s.get_ranges("k", {});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());

  EXPECT_TRUE(s.exists("k"));
  EXPECT_FALSE(s.exists("missing"));
  EXPECT_EQ(s.size("k"), 10u);
  EXPECT_EQ(s.size("missing"), std::nullopt);
}

TEST(StoreDefaults, OpenReaderHoldsTheWholeValue) {
  MinimalStore store;
  store.set("k", as_bytes("0123456789"));
  Store& s = store;
  const std::unique_ptr<ByteSource> reader = s.open_reader("k");
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(store.gets, 1);
  store.set("k", as_bytes("replaced"));  // reads see the value as it was when opened
  EXPECT_EQ(reader->size(), 10u);
  ASSERT_TRUE(reader->in_memory().has_value());
  EXPECT_EQ(as_chars(*reader->in_memory()), "0123456789");
  std::string part(4, '.');
  EXPECT_EQ(reader->read(3, as_writable(part)), 4u);
  EXPECT_EQ(part, "3456");
  EXPECT_EQ(reader->read(8, as_writable(part)), 2u);  // the value ends first
  EXPECT_EQ(part.substr(0, 2), "89");
  EXPECT_EQ(reader->read(20, as_writable(part)), 0u);
  EXPECT_EQ(s.open_reader("missing"), nullptr);
}

TEST(StoreDefaults, ListDirAndErasePrefix) {
  MinimalStore store;
  for (const char* key : {"a/zarr.json", "a/c/0", "a/c/1", "a/b/zarr.json", "ab", "z"}) {
    store.set(key, as_bytes("x"));
  }
  Store& s = store;
  DirListing root = s.list_dir("");
  EXPECT_EQ(root.keys, (std::vector<std::string>{"ab", "z"}));
  EXPECT_EQ(root.prefixes, (std::vector<std::string>{"a"}));
  DirListing a = s.list_dir("a/");
  EXPECT_EQ(a.keys, (std::vector<std::string>{"zarr.json"}));
  EXPECT_EQ(a.prefixes, (std::vector<std::string>{"b", "c"}));
  EXPECT_THROW(s.list_dir("../"), InvalidArgumentError);

  s.erase_prefix("a");
  EXPECT_EQ(store.erases, 4);
  EXPECT_EQ(s.list(""), (std::vector<std::string>{"ab", "z"}));
  EXPECT_THROW(s.erase_prefix("/"), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
