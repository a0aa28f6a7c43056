// A store that forwards every call to another store and makes chosen calls fail, for
// reliability tests: "the 3rd chunk write fails", "every list fails", "the next read of a
// shard comes back cut short".
//
// Calls are grouped into four operations:
//   kGet   get, get_ranges, exists, size
//   kSet   set
//   kErase erase, erase_prefix
//   kList  list, list_dir
// Each injected Fault counts the calls that match it (its operation and, if given, a key
// containing `key_contains`), starting from the moment it is injected, and fires on calls
// number first_call .. first_call + count - 1 (1 = the next matching call). A fault:
//   kFail       throws IoError instead of making the call (the inner store is untouched);
//   kFailAfter  makes the call, then throws IoError (the write happened but was reported
//               failed, as after a lost reply);
//   kTruncate   for get and get_ranges only: returns at most `keep_bytes` of each value
//               (a torn or short read reaching the caller). Only get and get_ranges are
//               counted by such a fault.
// When several faults fire on one call, the first injected wins. Thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "zarrkit/store.h"

namespace zarrkit {

class FaultInjectionStore : public Store {
 public:
  enum class Operation : std::uint8_t { kGet, kSet, kErase, kList };
  enum class Action : std::uint8_t { kFail, kFailAfter, kTruncate };
  static constexpr std::uint64_t kForever = std::numeric_limits<std::uint64_t>::max();

  struct Fault {
    Operation operation = Operation::kGet;
    Action action = Action::kFail;
    std::uint64_t first_call = 1;  // 1-based, counted from injection
    std::uint64_t count = 1;       // consecutive calls it fires on; kForever for all
    std::string key_contains;      // empty: every key (for lists: the prefix)
    std::size_t keep_bytes = 0;    // kTruncate
  };

  explicit FaultInjectionStore(std::shared_ptr<Store> inner);

  void inject(Fault fault);
  // Shorthands: the `n`th next call of `operation` fails / the `n`th next get is cut.
  void fail_nth(Operation operation, std::uint64_t n);
  void fail_all(Operation operation);
  void truncate_nth_get(std::uint64_t n, std::size_t keep_bytes);
  // Removes every fault.
  void clear_faults();

  // Calls of `operation` seen since construction (failed ones included), and faults fired.
  std::uint64_t calls(Operation operation) const;
  std::uint64_t faults_fired() const;

  const std::shared_ptr<Store>& inner() const { return inner_; }

  StoreCapabilities capabilities() const override;
  std::string describe() const override;
  std::string cache_identity() const override { return inner_->cache_identity(); }
  std::optional<Buffer> get(std::string_view key,
                            const BufferPrototype& prototype = BufferPrototype::host(),
                            std::optional<ByteRange> range = std::nullopt) override;
  std::optional<std::vector<Buffer>> get_ranges(std::string_view key,
                                                std::span<const ByteRange> ranges,
                                                const BufferPrototype& prototype =
                                                    BufferPrototype::host()) override;
  bool exists(std::string_view key) override;
  std::optional<std::uint64_t> size(std::string_view key) override;
  void set(std::string_view key, ByteView value) override;
  void erase(std::string_view key) override;
  std::unique_ptr<UpdateLock> lock_for_update(std::string_view key) override { return inner_->lock_for_update(key); }
  void erase_prefix(std::string_view prefix) override;
  std::vector<std::string> list(std::string_view prefix = "") override;
  DirListing list_dir(std::string_view prefix) override;

 private:
  struct ArmedFault {
    Fault fault;
    std::uint64_t seen = 0;
  };
  struct Decision {
    Action action = Action::kFail;
    bool fires = false;
    std::size_t keep_bytes = 0;
  };
  // Counts the call against every fault and says what to do with it.
  Decision decide(Operation operation, std::string_view key, bool is_value_read);
  [[noreturn]] void fail(std::string_view call, std::string_view key) const;
  // Runs `call` on the inner store under the decision for (operation, key).
  template <typename Call>
  auto run(Operation operation, std::string_view name, std::string_view key, Call call);

  std::shared_ptr<Store> inner_;
  mutable std::mutex mutex_;
  std::vector<ArmedFault> faults_;
  std::uint64_t calls_[4] = {0, 0, 0, 0};
  std::uint64_t fired_ = 0;
};

}  // namespace zarrkit
