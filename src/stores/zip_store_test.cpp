#include "zarrkit/stores/zip_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>
#include <zip.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "stores/testing/temp_dir.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::TempDir;

std::string read_string(Store& store, std::string_view key, std::optional<ByteRange> range = std::nullopt) {
  auto value = store.get(key, BufferPrototype::host(), range);
  if (!value) return "<absent>";
  return std::string(as_chars(value->view()));
}

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::uint32_t le32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}
void put_le32(std::string& s, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Offsets of one member's fields in a zip file zarrkit wrote (no zip64, no comment): its
// local header and its central directory record, found by name.
struct MemberFields {
  std::size_t local = 0;    // "PK\3\4"
  std::size_t central = 0;  // "PK\1\2"
};
MemberFields find_member(const std::string& zip, const std::string& name) {
  MemberFields f{std::string::npos, std::string::npos};
  for (std::size_t at = zip.find("PK\1\2"); at != std::string::npos; at = zip.find("PK\1\2", at + 4)) {
    const std::size_t name_length = le32(zip, at + 28) & 0xffff;
    if (zip.compare(at + 46, name_length, name) == 0) {
      f.central = at;
      f.local = le32(zip, at + 42);
    }
  }
  if (f.central == std::string::npos) throw std::logic_error("no such member: " + name);
  return f;
}
// Patches the CRC-32 or the uncompressed size in both headers of a member.
void patch_crc(std::string& zip, const MemberFields& f, std::uint32_t crc) {
  put_le32(zip, f.local + 14, crc);
  put_le32(zip, f.central + 16, crc);
}
void patch_size(std::string& zip, const MemberFields& f, std::uint32_t size) {
  put_le32(zip, f.local + 22, size);
  put_le32(zip, f.central + 24, size);
}
// Renames a member in both headers (same length).
void patch_name(std::string& zip, const std::string& from, const std::string& to) {
  ASSERT_EQ(from.size(), to.size());
  MemberFields f = find_member(zip, from);
  zip.replace(f.local + 30, from.size(), to);
  zip.replace(f.central + 46, from.size(), to);
}

std::int64_t member_count(const fs::path& path) {
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY, &error);
  if (archive == nullptr) return -1;
  std::int64_t n = zip_get_num_entries(archive, 0);
  zip_discard(archive);
  return n;
}

std::int32_t member_method(const fs::path& path, const std::string& name) {
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY, &error);
  zip_stat_t st;
  zip_stat(archive, name.c_str(), 0, &st);
  std::int32_t method = st.comp_method;
  zip_discard(archive);
  return method;
}

ZipStoreOptions writable(bool deflate = false) {
  ZipStoreOptions o;
  o.read_only = false;
  o.deflate_new_members = deflate;
  return o;
}

TEST(ZipStore, WritesOnFlushAndReadsBack) {
  TempDir dir;
  const fs::path path = dir / "sub/data.zip";
  const std::string chunk = random_bytes(100000, 1);
  {
    auto store = ZipStore::open(path, writable());
    EXPECT_TRUE(store->capabilities().writable);
    store->set("zarr.json", as_bytes("{}"));
    store->set("a/c/0/0", as_bytes(chunk));
    store->set("a/c/0/1", as_bytes(""));
    // Pending writes are visible at once, and nothing is on disk before the flush.
    EXPECT_EQ(read_string(*store, "zarr.json"), "{}");
    EXPECT_EQ(read_string(*store, "a/c/0/0", ByteRange::range(10, 20)), chunk.substr(10, 10));
    EXPECT_FALSE(fs::exists(path));
    store->close();
    EXPECT_THROW(store->get("zarr.json"), InvalidArgumentError);
  }
  EXPECT_EQ(member_count(path), 3);
  EXPECT_EQ(member_method(path, "a/c/0/0"), ZIP_CM_STORE);  // as zarr-python writes
  auto store = ZipStore::open(path);
  EXPECT_FALSE(store->capabilities().writable);
  EXPECT_EQ(read_string(*store, "a/c/0/0"), chunk);
  EXPECT_EQ(read_string(*store, "a/c/0/1"), "");
  EXPECT_EQ(read_string(*store, "missing"), "<absent>");
  EXPECT_EQ(store->size("a/c/0/0"), chunk.size());
  EXPECT_TRUE(store->exists("zarr.json"));
  EXPECT_FALSE(store->exists("a"));
  EXPECT_EQ(store->list(), (std::vector<std::string>{"a/c/0/0", "a/c/0/1", "zarr.json"}));
  EXPECT_EQ(store->list("a/c"), (std::vector<std::string>{"a/c/0/0", "a/c/0/1"}));
  DirListing top = store->list_dir("");
  EXPECT_EQ(top.keys, std::vector<std::string>{"zarr.json"});
  EXPECT_EQ(top.prefixes, std::vector<std::string>{"a"});
  EXPECT_THROW(store->set("x", as_bytes("1")), UnsupportedError);
  EXPECT_THROW(store->erase("zarr.json"), UnsupportedError);
}

TEST(ZipStore, ByteRangesOfStoredAndDeflatedMembers) {
  TempDir dir;
  const std::string value = random_bytes(300000, 2) + std::string(300000, 'z');
  for (bool deflate : {false, true}) {
    const fs::path path = dir / (deflate ? "deflated.zip" : "stored.zip");
    {
      auto store = ZipStore::open(path, writable(deflate));
      store->set("k", as_bytes(value));
    }  // destroyed normally: flushed
    EXPECT_EQ(member_method(path, "k"), deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE);
    auto store = ZipStore::open(path);
    EXPECT_EQ(read_string(*store, "k"), value);
    EXPECT_EQ(read_string(*store, "k", ByteRange::range(123456, 400000)), value.substr(123456, 400000 - 123456));
    EXPECT_EQ(read_string(*store, "k", ByteRange::last(1000)), value.substr(value.size() - 1000));
    EXPECT_EQ(read_string(*store, "k", ByteRange::from_offset(599990)), value.substr(599990));
    EXPECT_EQ(read_string(*store, "k", ByteRange::range(700000, 800000)), "");
    std::vector<ByteRange> ranges{ByteRange::range(0, 5), ByteRange::range(599995, 600000)};
    auto parts = store->get_ranges("k", ranges);
    ASSERT_TRUE(parts);
    EXPECT_EQ(std::string(as_chars((*parts)[1].view())), value.substr(599995));
  }
}

// A ranged read of a stored member seeks to the range and stops there: it never reaches the
// end of the member, so a wrong CRC-32 (which only a read to the end can detect) goes
// unnoticed by ranged reads and is DataLossError for a whole read.
TEST(ZipStore, RangedReadsOfStoredMembersReadOnlyTheRange) {
  TempDir dir;
  const fs::path path = dir / "a.zip";
  const std::string value = random_bytes(1 << 20, 3);
  ZipStore::open(path, writable())->set("shard", as_bytes(value));
  std::string zip = slurp(path);
  patch_crc(zip, find_member(zip, "shard"), 0x12345678);
  spit(path, zip);
  auto store = ZipStore::open(path);
  EXPECT_EQ(read_string(*store, "shard", ByteRange::range(500000, 500100)), value.substr(500000, 100));
  EXPECT_THROW(store->get("shard"), DataLossError);
}

TEST(ZipStore, OverwriteAndEraseLeaveOneMemberPerName) {
  TempDir dir;
  const fs::path path = dir / "a.zip";
  {
    auto store = ZipStore::open(path, writable(true));
    store->set("zarr.json", as_bytes("v1"));
    store->set("c/0", as_bytes(std::string(5000, 'a')));
    store->set("c/1", as_bytes("one"));
    store->set("d/x", as_bytes("x"));
  }
  {
    auto store = ZipStore::open(path, writable());
    store->set("zarr.json", as_bytes("v2"));  // overwrite a member of the archive
    store->erase("c/1");
    store->erase("c/1");  // absent: no error
    store->erase_prefix("d");
    store->set("c/2", as_bytes("two"));
    store->set("c/2", as_bytes("two again"));  // overwrite a pending value
    EXPECT_EQ(store->list(), (std::vector<std::string>{"c/0", "c/2", "zarr.json"}));
    store->flush();
    EXPECT_EQ(read_string(*store, "zarr.json"), "v2");  // usable after flush
    store->set("c/3", as_bytes("three"));
  }
  EXPECT_EQ(member_count(path), 4);
  EXPECT_EQ(member_method(path, "c/0"), ZIP_CM_DEFLATE);  // kept members are copied as they are
  auto store = ZipStore::open(path);
  EXPECT_EQ(read_string(*store, "zarr.json"), "v2");
  EXPECT_EQ(read_string(*store, "c/0"), std::string(5000, 'a'));
  EXPECT_EQ(read_string(*store, "c/2"), "two again");
  EXPECT_EQ(read_string(*store, "c/3"), "three");
  EXPECT_EQ(read_string(*store, "c/1"), "<absent>");
}

TEST(ZipStore, TruncateAndEmptyArchives) {
  TempDir dir;
  const fs::path path = dir / "a.zip";
  ZipStore::open(path, writable())->set("old", as_bytes("1"));
  ZipStoreOptions o = writable();
  o.truncate = true;
  {
    auto store = ZipStore::open(path, o);
    EXPECT_EQ(store->list(), std::vector<std::string>{});
    store->set("new", as_bytes("2"));
  }
  EXPECT_EQ(ZipStore::open(path)->list(), std::vector<std::string>{"new"});
  {
    auto store = ZipStore::open(path, writable());
    store->erase("new");
  }
  EXPECT_FALSE(fs::exists(path));  // no members left: no archive
  EXPECT_THROW(ZipStore::open(path), NotFoundError);
  EXPECT_THROW(ZipStore::open(dir.path()), InvalidArgumentError);  // a directory
}

TEST(ZipStore, DestroyedWhileUnwindingDiscardsPendingWrites) {
  TempDir dir;
  const fs::path path = dir / "a.zip";
  ZipStore::open(path, writable())->set("kept", as_bytes("1"));
  try {
    auto store = ZipStore::open(path, writable());
    store->set("lost", as_bytes("2"));
    throw std::runtime_error("the copy failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(ZipStore::open(path)->list(), std::vector<std::string>{"kept"});
}

TEST(ZipStore, DuplicateNamesTheLastOneWins) {
  // What zarr-python leaves when it writes a key twice: two members of one name.
  TempDir dir;
  const fs::path path = dir / "a.zip";
  {
    auto store = ZipStore::open(path, writable());
    store->set("zarr.jsoA", as_bytes("first"));
    store->set("zarr.jsoB", as_bytes("second"));
  }
  std::string zip = slurp(path);
  patch_name(zip, "zarr.jsoA", "zarr.json");
  patch_name(zip, "zarr.jsoB", "zarr.json");
  spit(path, zip);
  {
    auto store = ZipStore::open(path, writable());
    EXPECT_EQ(read_string(*store, "zarr.json"), "second");
    EXPECT_EQ(store->list(), std::vector<std::string>{"zarr.json"});
    store->set("other", as_bytes("x"));
  }
  EXPECT_EQ(member_count(path), 2);  // the shadowed copy is dropped on rewrite
  EXPECT_EQ(read_string(*ZipStore::open(path), "zarr.json"), "second");
}

TEST(ZipStore, ThreadsWriteAndReadConcurrently) {
  TempDir dir;
  const fs::path path = dir / "a.zip";
  auto store = ZipStore::open(path, writable());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const std::string key = fmt::format("t{}/{}", t, i);
        store->set(key, as_bytes(key));
        EXPECT_EQ(read_string(*store, key), key);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  store->close();
  EXPECT_EQ(ZipStore::open(path)->list().size(), 200u);
}

// ---- Bad archives ---------------------------------------------------------------------

struct BadArchive : ::testing::Test {
  TempDir dir;
  fs::path path = dir / "bad.zip";
  std::string good;
  void SetUp() override {
    auto store = ZipStore::open(path, writable());
    store->set("zarr.json", as_bytes("{}"));
    store->set("aa/deflated", as_bytes(std::string(1 << 20, '\0')));
    store->set("aa/stored", as_bytes(random_bytes(4096, 4)));
    store->close();
    good = slurp(path);
  }
  // Rewrites the archive with "aa/deflated" compressed (the store above stores it).
  void deflate_member() {
    auto store = ZipStore::open(path, writable(true));
    store->set("aa/deflated", as_bytes(std::string(1 << 20, '\0')));
    store->close();
    good = slurp(path);
  }
};

TEST_F(BadArchive, NotAZipOrTruncated) {
  spit(path, "this is not a zip archive at all, just text");
  EXPECT_THROW(ZipStore::open(path), DataLossError);
  spit(path, "");
  EXPECT_THROW(ZipStore::open(path), DataLossError);
  for (std::size_t keep : {good.size() - 1, good.size() - 30, good.size() / 2, std::size_t{10}}) {
    spit(path, good.substr(0, keep));
    EXPECT_THROW(ZipStore::open(path), DataLossError) << keep;
  }
}

TEST_F(BadArchive, BadCentralDirectory) {
  std::string zip = good;
  const std::size_t end = zip.rfind("PK\5\6");
  ASSERT_NE(end, std::string::npos);
  put_le32(zip, end + 16, le32(zip, end + 16) + 7);  // central directory offset points elsewhere
  spit(path, zip);
  EXPECT_THROW(ZipStore::open(path), DataLossError);

  zip = good;
  put_le32(zip, end + 8, 0xffffffffu);  // 65535 entries on this disk and in total
  spit(path, zip);
  EXPECT_THROW(ZipStore::open(path), DataLossError);

  zip = good;
  zip[find_member(zip, "aa/stored").central + 1] = 'X';  // a record's signature destroyed
  spit(path, zip);
  EXPECT_THROW(ZipStore::open(path), DataLossError);
}

TEST_F(BadArchive, NamesThatAreNotSafeKeys) {
  for (const char* name : {"../stored", "/a/stored", "a/../tord", "aa\\stored", "aa//tored"}) {
    std::string zip = good;
    patch_name(zip, "aa/stored", name);
    spit(path, zip);
    EXPECT_THROW(ZipStore::open(path), DataLossError) << name;
  }
}

TEST_F(BadArchive, DeclaredSizesAboveTheLimitAreRefused) {
  deflate_member();
  std::string zip = good;
  patch_size(zip, find_member(zip, "aa/deflated"), 0xfffffff0u);  // claims 4 GiB
  spit(path, zip);
  ZipStoreOptions o;
  o.max_member_bytes = 64 << 20;
  auto store = ZipStore::open(path, o);
  EXPECT_THROW(store->get("aa/deflated"), ResourceExhaustedError);
  EXPECT_EQ(read_string(*store, "zarr.json"), "{}");  // the others still read
}

TEST_F(BadArchive, TheMemberLimitFollowsTheChunkSettingAndHoldsBeforeInflating) {
  deflate_member();  // inflates to 1 MiB
  spit(path, good);
  const ScopedConfig limit([](Config& c) { c.max_chunk_bytes = 4096; });
  auto store = ZipStore::open(path);
  try {
    store->get("aa/deflated");
    ADD_FAILURE() << "no error";
  } catch (const ResourceExhaustedError& e) {
    EXPECT_NE(std::string(e.what()).find("max_chunk_bytes"), std::string::npos) << e.what();
  }
  // A range within the limit still reads.
  EXPECT_EQ(store->get("aa/deflated", BufferPrototype::host(), ByteRange::range(0, 100))->size(), 100u);
}

TEST_F(BadArchive, MembersLargerOrSmallerThanDeclared) {
  deflate_member();
  // Declares 1000 bytes but inflates to 1 MiB (a bomb hiding behind a small size).
  std::string zip = good;
  patch_size(zip, find_member(zip, "aa/deflated"), 1000);
  spit(path, zip);
  EXPECT_THROW(ZipStore::open(path)->get("aa/deflated"), DataLossError);
  // Declares more than it holds.
  zip = good;
  patch_size(zip, find_member(zip, "aa/deflated"), (1 << 20) + 10);
  spit(path, zip);
  EXPECT_THROW(ZipStore::open(path)->get("aa/deflated"), DataLossError);
  // A stored member whose sizes disagree.
  zip = good;
  patch_size(zip, find_member(zip, "aa/stored"), 5000);
  spit(path, zip);
  EXPECT_THROW(ZipStore::open(path)->get("aa/stored"), DataLossError);
}

TEST_F(BadArchive, CorruptDataAndCrc) {
  deflate_member();
  std::string zip = good;
  MemberFields f = find_member(zip, "aa/deflated");
  const std::size_t data = f.local + 30 + (le32(zip, f.local + 26) & 0xffff) + (le32(zip, f.local + 28) & 0xffff);
  for (std::size_t i = 0; i < 40; ++i) zip[data + i] = static_cast<char>(0xff);
  spit(path, zip);
  EXPECT_THROW(ZipStore::open(path)->get("aa/deflated"), DataLossError);
  zip = good;
  patch_crc(zip, find_member(zip, "aa/stored"), 1);
  spit(path, zip);
  EXPECT_THROW(ZipStore::open(path)->get("aa/stored"), DataLossError);
}

TEST(ZipStore, AWritableOpenRemovesTheTemporaryArchivesOfKilledWriters) {
  TempDir dir;
  const fs::path archive = dir / "data.zip";
  {
    ZipStore store(archive, ZipStoreOptions{.read_only = false});
    store.set("zarr.json", ByteView(reinterpret_cast<const std::byte*>("{}"), 2));
    store.close();
  }
  // What libzip leaves when its writer dies before zip_close: a file named after the archive
  // (a dot and six random letters or digits) holding the start of an archive, not its end.
  const std::string complete = read_file(archive);
  const std::string unfinished = complete.substr(0, complete.size() / 2);
  const auto make = [&](const std::string& name, const std::string& bytes, std::chrono::hours age) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
    fs::last_write_time(dir / name, fs::file_time_type::clock::now() - age);
  };
  make("data.zip.a1B2c3", unfinished, std::chrono::hours(2));   // stale
  make("data.zip.Zz9Yy8", unfinished, std::chrono::hours(0));   // young: a live writer's, maybe
  make("data.zip.Xx0000", "", std::chrono::hours(2));           // killed before its first member
  make("data.zip.backup", complete, std::chrono::hours(2));     // someone's copy: complete
  make("data.zip.readme", "notes", std::chrono::hours(2));      // not an archive
  make("data.zip.1", unfinished, std::chrono::hours(2));        // not libzip's pattern
  make("other.zip.a1B2c3", unfinished, std::chrono::hours(2));  // another archive's
  { ZipStore read_only(archive, ZipStoreOptions{}); }
  EXPECT_TRUE(fs::exists(dir / "data.zip.a1B2c3"));  // read-only opens delete nothing
  {
    // A writer of this host is writing an archive in the directory (it holds the directory's
    // lock shared): the young temporary may be its own and stays.
    const int writer = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_EQ(::flock(writer, LOCK_SH), 0);
    ZipStore writable(archive, ZipStoreOptions{.read_only = false});
    EXPECT_EQ(writable.get("zarr.json")->size(), 2u);
    ::close(writer);
  }
  EXPECT_FALSE(fs::exists(dir / "data.zip.a1B2c3"));
  EXPECT_FALSE(fs::exists(dir / "data.zip.Xx0000"));
  EXPECT_TRUE(fs::exists(dir / "data.zip.Zz9Yy8"));
  // No writer now: every unfinished temporary is a killed writer's, whatever its age.
  { ZipStore writable(archive, ZipStoreOptions{.read_only = false}); }
  EXPECT_FALSE(fs::exists(dir / "data.zip.Zz9Yy8"));
  EXPECT_TRUE(fs::exists(dir / "data.zip.backup"));
  EXPECT_TRUE(fs::exists(dir / "data.zip.readme"));
  EXPECT_TRUE(fs::exists(dir / "data.zip.1"));
  EXPECT_TRUE(fs::exists(dir / "other.zip.a1B2c3"));
  EXPECT_TRUE(fs::exists(archive));
}

}  // namespace
}  // namespace zarrkit
