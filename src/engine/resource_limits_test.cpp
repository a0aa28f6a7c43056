// The resource limits of reads and writes (engine/read_limits.h, engine/stored_chunks.h):
// chunks over the limits are refused with the array, the key and the setting named; reads
// and writes over huge grids of absent chunks cost what is stored.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine/array_testing.h"
#include "engine/read_limits.h"
#include "engine/stored_chunks.h"
#include "stores/wrappers/fault_injection_store.h"
#include "zarrkit/array.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/memory_store.h"
#include "zarrkit/vlen.h"

namespace zarrkit {
namespace {

using Op = FaultInjectionStore::Operation;

Array make_array(const std::shared_ptr<Store>& store, Shape shape, Shape chunks, DataType dtype = DataType::int_(16)) {
  ArraySpec spec;
  spec.shape = std::move(shape);
  spec.chunks = std::move(chunks);
  spec.dtype = dtype;
  return Array::create(store, "a", make_array_metadata(spec, CodecRegistry::builtin()));
}

std::string error_of(const std::function<void()>& run, ErrorCode expected) {
  try {
    run();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), expected) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(ReadLimits, AChunkOverMaxChunkBytesIsRefusedNamingArrayKeyAndSetting) {
  auto store = MemoryStore::create();
  Array a = make_array(store, {4096}, {2048});
  const ScopedConfig limit([](Config& c) { c.max_chunk_bytes = 1024; });
  const std::string message = error_of([&] { a.read(); }, ErrorCode::kResourceExhausted);
  EXPECT_NE(message.find("array 'a'"), std::string::npos) << message;
  EXPECT_NE(message.find("chunk 'c/0'"), std::string::npos) << message;
  EXPECT_NE(message.find("max_chunk_bytes"), std::string::npos) << message;
}

TEST(ReadLimits, ChunksDecodedAtOnceStayWithinTheRequestBudget) {
  Config c;
  c.max_chunk_bytes = 1000;
  c.max_request_bytes = 2500;
  EXPECT_EQ(chunks_decoded_at_once(1000, 16, c, "array 'a'", "c/0"), 2u);
  EXPECT_EQ(chunks_decoded_at_once(100, 16, c, "array 'a'", "c/0"), 16u);
  c.max_request_bytes = 500;
  c.max_chunk_bytes = 5000;
  const std::string message = error_of([&] { chunks_decoded_at_once(1000, 4, c, "array 'a'", "c/0"); },
                                       ErrorCode::kResourceExhausted);
  EXPECT_NE(message.find("max_request_bytes"), std::string::npos) << message;
}

TEST(ReadLimits, ReadsWithinATightRequestBudgetStillReadEverything) {
  auto store = MemoryStore::create();
  Array a = make_array(store, {64}, {8});
  std::vector<std::int16_t> values(64);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int16_t>(i * 3);
  a.write({}, view_of(values, {64}, a.dtype()));
  const ScopedConfig limit([](Config& c) { c.max_request_bytes = 16; });  // one chunk at a time
  EXPECT_EQ(values_of<std::int16_t>(a.read()), values);
}

TEST(ReadLimits, VariableLengthElementsOfOneReadAreBoundedInSum) {
  auto store = MemoryStore::create();
  Array a = make_array(store, {8}, {2}, DataType::string());
  std::vector<std::string> elements(8, std::string(1000, 'x'));
  a.write_var({}, VarNDBuffer({8}, DataType::string(), elements));
  EXPECT_EQ(a.read_var().elements(), elements);
  const ScopedConfig limit([](Config& c) { c.max_request_bytes = 3000; });
  const std::string message = error_of([&] { a.read_var(); }, ErrorCode::kResourceExhausted);
  EXPECT_NE(message.find("max_request_bytes"), std::string::npos) << message;
}

TEST(SparseReads, AHugeGridWithAFewStoredChunksIsReadFromOneListing) {
  auto counted = std::make_shared<FaultInjectionStore>(MemoryStore::create());
  const std::uint64_t chunks = std::uint64_t{1} << 20;
  Array a = make_array(counted, {chunks * 4}, {4});
  std::vector<std::int16_t> one{1, 2, 3, 4};
  for (std::uint64_t c : {std::uint64_t{0}, std::uint64_t{12345}, chunks - 1}) {
    a.write({Slice{static_cast<std::int64_t>(c * 4), static_cast<std::int64_t>(c * 4 + 4)}}, view_of(one, {4}, a.dtype()));
  }
  const std::uint64_t gets_before = counted->calls(Op::kGet);
  const NDBuffer out = a.read();
  // A sample, the three stored chunks; never a get per chunk of the grid.
  EXPECT_LE(counted->calls(Op::kGet) - gets_before, 64u);
  const auto values = values_of<std::int16_t>(out);
  ASSERT_EQ(values.size(), chunks * 4);
  EXPECT_EQ(values[12345 * 4 + 2], 3);
  EXPECT_EQ(values[chunks * 4 - 1], 4);
  EXPECT_EQ(values[4], 0);
  std::int64_t sum = 0;
  for (std::int16_t v : values) sum += v;
  EXPECT_EQ(sum, 30);
  // A part of it: the same values.
  const NDBuffer part = a.read({Slice{12345 * 4 - 2, 12345 * 4 + 4}});
  EXPECT_EQ(values_of<std::int16_t>(part), (std::vector<std::int16_t>{0, 0, 1, 2, 3, 4}));
}

TEST(SparseWrites, WritingFillValuesOverANewArrayErasesNothing) {
  auto counted = std::make_shared<FaultInjectionStore>(MemoryStore::create());
  Array a = make_array(counted, {std::uint64_t{1} << 16}, {4});
  std::vector<std::int16_t> zeros(std::size_t{1} << 16);
  zeros[100] = 5;
  a.write({}, view_of(zeros, {zeros.size()}, a.dtype()));
  EXPECT_EQ(counted->calls(Op::kErase), 0u);
  EXPECT_EQ(counted->calls(Op::kSet), 1u + 2u);  // the chunk, and the metadata of the array and its group
  EXPECT_EQ(values_of<std::int16_t>(a.read()), zeros);
}

TEST(StoredChunks, TaskOfChunkFollowsThePlansOrder) {
  const ChunkPlan plan({100, 100}, {10, 10}, {Slice{15, 95}, Slice{0, 100, 20}});
  const auto tasks = plan.tasks();
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    EXPECT_EQ(task_of_chunk(plan, tasks[i].chunk_coords), i);
  }
  EXPECT_EQ(task_of_chunk(plan, std::vector<std::uint64_t>{0, 0}), std::nullopt);   // row chunk 0 untouched
  EXPECT_EQ(task_of_chunk(plan, std::vector<std::uint64_t>{2, 1}), std::nullopt);   // column chunk 1 untouched
}

}  // namespace
}  // namespace zarrkit
