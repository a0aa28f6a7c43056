#include "stores/wrappers/fault_injection_store.h"

#include "zarrkit/error.h"

namespace zarrkit {
namespace {

std::string_view operation_name(FaultInjectionStore::Operation operation) {
  switch (operation) {
    case FaultInjectionStore::Operation::kGet: return "get";
    case FaultInjectionStore::Operation::kSet: return "set";
    case FaultInjectionStore::Operation::kErase: return "erase";
    case FaultInjectionStore::Operation::kList: return "list";
  }
  return "?";
}

void truncate_to(Buffer& buffer, std::size_t keep_bytes) {
  if (buffer.size() > keep_bytes) buffer.shrink(keep_bytes);
}

}  // namespace

FaultInjectionStore::FaultInjectionStore(std::shared_ptr<Store> inner) : inner_(std::move(inner)) {
  if (!inner_) fail_invalid("FaultInjectionStore needs a store to wrap");
}

void FaultInjectionStore::inject(Fault fault) {
  if (fault.first_call == 0) fail_invalid("fault injection: first_call counts from 1");
  if (fault.action == Action::kTruncate && fault.operation != Operation::kGet) {
    fail_invalid("fault injection: only gets can be truncated, not {}", operation_name(fault.operation));
  }
  std::lock_guard lock(mutex_);
  faults_.push_back({std::move(fault), 0});
}

void FaultInjectionStore::fail_nth(Operation operation, std::uint64_t n) {
  inject({.operation = operation, .action = Action::kFail, .first_call = n, .count = 1,
          .key_contains = {}, .keep_bytes = 0});
}

void FaultInjectionStore::fail_all(Operation operation) {
  inject({.operation = operation, .action = Action::kFail, .first_call = 1, .count = kForever,
          .key_contains = {}, .keep_bytes = 0});
}

void FaultInjectionStore::truncate_nth_get(std::uint64_t n, std::size_t keep_bytes) {
  inject({.operation = Operation::kGet, .action = Action::kTruncate, .first_call = n, .count = 1,
          .key_contains = {}, .keep_bytes = keep_bytes});
}

void FaultInjectionStore::clear_faults() {
  std::lock_guard lock(mutex_);
  faults_.clear();
}

std::uint64_t FaultInjectionStore::calls(Operation operation) const {
  std::lock_guard lock(mutex_);
  return calls_[static_cast<int>(operation)];
}

std::uint64_t FaultInjectionStore::faults_fired() const {
  std::lock_guard lock(mutex_);
  return fired_;
}

FaultInjectionStore::Decision FaultInjectionStore::decide(Operation operation, std::string_view key,
                                                          bool is_value_read) {
  std::lock_guard lock(mutex_);
  ++calls_[static_cast<int>(operation)];
  Decision decision;
  for (ArmedFault& armed : faults_) {
    const Fault& fault = armed.fault;
    if (fault.operation != operation) continue;
    if (fault.action == Action::kTruncate && !is_value_read) continue;
    if (!fault.key_contains.empty() && key.find(fault.key_contains) == std::string_view::npos) continue;
    std::uint64_t n = ++armed.seen;
    bool in_window = n >= fault.first_call && (fault.count == kForever || n - fault.first_call < fault.count);
    if (in_window && !decision.fires) {
      decision = {fault.action, true, fault.keep_bytes};
      ++fired_;
    }
  }
  return decision;
}

void FaultInjectionStore::fail(std::string_view call, std::string_view key) const {
  fail_io("{} of \"{}\" on {} failed (injected fault)", call, key, inner_->describe());
}

template <typename Call>
auto FaultInjectionStore::run(Operation operation, std::string_view name, std::string_view key, Call call) {
  Decision decision = decide(operation, key, false);
  if (decision.fires && decision.action == Action::kFail) fail(name, key);
  auto result = call();
  if (decision.fires && decision.action == Action::kFailAfter) fail(name, key);
  return result;
}

StoreCapabilities FaultInjectionStore::capabilities() const { return inner_->capabilities(); }

std::string FaultInjectionStore::describe() const {
  return "fault-injection(" + inner_->describe() + ")";
}

std::optional<Buffer> FaultInjectionStore::get(std::string_view key, const BufferPrototype& prototype,
                                               std::optional<ByteRange> range) {
  Decision decision = decide(Operation::kGet, key, true);
  if (decision.fires && decision.action == Action::kFail) fail("get", key);
  auto value = inner_->get(key, prototype, range);
  if (decision.fires && decision.action == Action::kFailAfter) fail("get", key);
  if (value && decision.fires && decision.action == Action::kTruncate) truncate_to(*value, decision.keep_bytes);
  return value;
}

std::optional<std::vector<Buffer>> FaultInjectionStore::get_ranges(std::string_view key,
                                                                   std::span<const ByteRange> ranges,
                                                                   const BufferPrototype& prototype) {
  Decision decision = decide(Operation::kGet, key, true);
  if (decision.fires && decision.action == Action::kFail) fail("get_ranges", key);
  auto parts = inner_->get_ranges(key, ranges, prototype);
  if (decision.fires && decision.action == Action::kFailAfter) fail("get_ranges", key);
  if (parts && decision.fires && decision.action == Action::kTruncate) {
    for (Buffer& part : *parts) truncate_to(part, decision.keep_bytes);
  }
  return parts;
}

bool FaultInjectionStore::exists(std::string_view key) {
  return run(Operation::kGet, "exists", key, [&] { return inner_->exists(key); });
}

std::optional<std::uint64_t> FaultInjectionStore::size(std::string_view key) {
  return run(Operation::kGet, "size", key, [&] { return inner_->size(key); });
}

void FaultInjectionStore::set(std::string_view key, ByteView value) {
  run(Operation::kSet, "set", key, [&] {
    inner_->set(key, value);
    return 0;
  });
}

void FaultInjectionStore::erase(std::string_view key) {
  run(Operation::kErase, "erase", key, [&] {
    inner_->erase(key);
    return 0;
  });
}

void FaultInjectionStore::erase_prefix(std::string_view prefix) {
  run(Operation::kErase, "erase_prefix", prefix, [&] {
    inner_->erase_prefix(prefix);
    return 0;
  });
}

std::vector<std::string> FaultInjectionStore::list(std::string_view prefix) {
  return run(Operation::kList, "list", prefix, [&] { return inner_->list(prefix); });
}

DirListing FaultInjectionStore::list_dir(std::string_view prefix) {
  return run(Operation::kList, "list_dir", prefix, [&] { return inner_->list_dir(prefix); });
}

}  // namespace zarrkit
