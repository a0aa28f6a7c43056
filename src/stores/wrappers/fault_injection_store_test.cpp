#include "stores/wrappers/fault_injection_store.h"

#include <gtest/gtest.h>

#include "zarrkit/error.h"
#include "zarrkit/stores/memory_store.h"

namespace zarrkit {
namespace {

using Op = FaultInjectionStore::Operation;
using Action = FaultInjectionStore::Action;

struct Fixture {
  std::shared_ptr<MemoryStore> memory = MemoryStore::create();
  FaultInjectionStore store{memory};

  std::string read(std::string_view key) {
    auto value = store.get(key);
    return value ? std::string(as_chars(value->view())) : "<absent>";
  }
};

TEST(FaultInjectionStore, ForwardsEverythingWithoutFaults) {
  Fixture f;
  f.store.set("a/b", as_bytes("hello"));
  f.store.set("a/c/d", as_bytes("x"));
  EXPECT_EQ(f.read("a/b"), "hello");
  EXPECT_EQ(as_chars(f.memory->get("a/b")->view()), "hello");
  EXPECT_TRUE(f.store.exists("a/b"));
  EXPECT_EQ(f.store.size("a/b"), 5u);
  const ByteRange ranges[] = {ByteRange::range(1, 3)};
  EXPECT_EQ(as_chars(f.store.get_ranges("a/b", ranges)->front().view()), "el");
  EXPECT_EQ(f.store.list("a"), (std::vector<std::string>{"a/b", "a/c/d"}));
  EXPECT_EQ(f.store.list_dir("a").prefixes, (std::vector<std::string>{"c"}));
  f.store.erase("a/b");
  f.store.erase_prefix("a/c");
  EXPECT_TRUE(f.memory->list().empty());
  EXPECT_EQ(f.store.calls(Op::kGet), 4u);
  EXPECT_EQ(f.store.calls(Op::kSet), 2u);
  EXPECT_EQ(f.store.calls(Op::kErase), 2u);
  EXPECT_EQ(f.store.calls(Op::kList), 2u);
  EXPECT_EQ(f.store.faults_fired(), 0u);
  EXPECT_EQ(f.store.describe(), "fault-injection(" + f.memory->describe() + ")");
}

TEST(FaultInjectionStore, TheNthSetFailsBeforeTouchingTheInnerStore) {
  Fixture f;
  f.store.fail_nth(Op::kSet, 3);
  f.store.set("k1", as_bytes("1"));
  f.store.set("k2", as_bytes("2"));
  try {
    f.store.set("k3", as_bytes("3"));
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("k3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("injected"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(f.memory->exists("k3"));
  f.store.set("k3", as_bytes("3"));  // only the 3rd call failed
  EXPECT_EQ(f.read("k3"), "3");
  EXPECT_EQ(f.store.faults_fired(), 1u);
}

TEST(FaultInjectionStore, FailAfterMakesTheCallThenReportsFailure) {
  Fixture f;
  f.store.inject({.operation = Op::kSet, .action = Action::kFailAfter, .first_call = 1, .count = 1,
                  .key_contains = {}, .keep_bytes = 0});
  EXPECT_THROW(f.store.set("k", as_bytes("written")), IoError);
  EXPECT_EQ(as_chars(f.memory->get("k")->view()), "written");
}

TEST(FaultInjectionStore, FailAllAndClear) {
  Fixture f;
  f.store.set("k", as_bytes("v"));
  f.store.fail_all(Op::kGet);
  for (int i = 0; i < 3; ++i) {
    EXPECT_THROW(f.store.get("k"), IoError);
    EXPECT_THROW(f.store.exists("k"), IoError);
    EXPECT_THROW(f.store.size("k"), IoError);
    EXPECT_THROW(f.store.get_ranges("k", {}), IoError);
  }
  EXPECT_NO_THROW(f.store.list());  // other operations are unaffected
  f.store.set("k2", as_bytes("v"));
  f.store.clear_faults();
  EXPECT_EQ(f.read("k"), "v");
  EXPECT_EQ(f.store.faults_fired(), 12u);
}

TEST(FaultInjectionStore, ListAndEraseFaults) {
  Fixture f;
  f.store.set("a/b", as_bytes("v"));
  f.store.fail_nth(Op::kList, 1);
  f.store.fail_nth(Op::kList, 2);
  EXPECT_THROW(f.store.list(), IoError);
  EXPECT_THROW(f.store.list_dir(""), IoError);
  EXPECT_EQ(f.store.list(), (std::vector<std::string>{"a/b"}));
  f.store.fail_nth(Op::kErase, 1);
  EXPECT_THROW(f.store.erase("a/b"), IoError);
  EXPECT_TRUE(f.memory->exists("a/b"));
  f.store.fail_nth(Op::kErase, 1);
  EXPECT_THROW(f.store.erase_prefix("a"), IoError);
  EXPECT_TRUE(f.memory->exists("a/b"));
}

TEST(FaultInjectionStore, KeyFilterCountsOnlyMatchingCalls) {
  Fixture f;
  f.store.inject({.operation = Op::kGet, .action = Action::kFail, .first_call = 2, .count = 1,
                  .key_contains = "/c/", .keep_bytes = 0});
  f.store.set("arr/zarr.json", as_bytes("{}"));
  f.store.set("arr/c/0", as_bytes("chunk0"));
  f.store.set("arr/c/1", as_bytes("chunk1"));
  EXPECT_EQ(f.read("arr/zarr.json"), "{}");  // not counted
  EXPECT_EQ(f.read("arr/c/0"), "chunk0");     // 1st matching
  EXPECT_EQ(f.read("arr/zarr.json"), "{}");
  EXPECT_THROW(f.store.get("arr/c/1"), IoError);  // 2nd matching
  EXPECT_EQ(f.read("arr/c/1"), "chunk1");
}

TEST(FaultInjectionStore, TruncatesReturnedValues) {
  Fixture f;
  f.store.set("k", as_bytes("0123456789"));
  f.store.truncate_nth_get(2, 4);
  EXPECT_TRUE(f.store.exists("k"));  // exists and size do not count for truncation
  EXPECT_EQ(f.read("k"), "0123456789");
  EXPECT_EQ(f.read("k"), "0123");
  EXPECT_EQ(f.read("k"), "0123456789");
  EXPECT_EQ(as_chars(f.memory->get("k")->view()), "0123456789");  // stored value intact

  f.store.inject({.operation = Op::kGet, .action = Action::kTruncate, .first_call = 1,
                  .count = FaultInjectionStore::kForever, .key_contains = {}, .keep_bytes = 1});
  const ByteRange ranges[] = {ByteRange::range(2, 6), ByteRange::last(3)};
  auto parts = f.store.get_ranges("k", ranges);
  ASSERT_TRUE(parts);
  EXPECT_EQ(as_chars((*parts)[0].view()), "2");
  EXPECT_EQ(as_chars((*parts)[1].view()), "7");
  EXPECT_EQ(f.read("missing"), "<absent>");  // nothing to cut
}

TEST(FaultInjectionStore, RejectsMeaninglessFaults) {
  Fixture f;
  EXPECT_THROW(f.store.fail_nth(Op::kSet, 0), InvalidArgumentError);
  EXPECT_THROW(f.store.inject({.operation = Op::kSet, .action = Action::kTruncate, .first_call = 1,
                               .count = 1, .key_contains = {}, .keep_bytes = 0}),
               InvalidArgumentError);
  EXPECT_THROW(FaultInjectionStore(nullptr), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
