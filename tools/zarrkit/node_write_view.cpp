#include "zarrkit/node_write_view.h"

#include <algorithm>
#include <atomic>
#include <exception>

#include <fmt/format.h>

#include "core/run_on_threads.h"
#include "stores/local_store_internal.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/s3_store.h"

namespace zarrkit::cli {
namespace {

constexpr std::string_view kMetadataDocuments[] = {"zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"};
// The documents that make a node a node; .zattrs and .zmetadata only go with them.
constexpr std::string_view kNodeDocuments[] = {"zarr.json", ".zarray", ".zgroup"};

std::string_view last_segment(std::string_view key) {
  const std::size_t slash = key.rfind('/');
  return slash == std::string_view::npos ? key : key.substr(slash + 1);
}

// Store requests wait on a server: they run this many at a time, off the shared pool.
constexpr std::size_t kRequestsAtOnce = 16;

// Runs step(key) for every key, kRequestsAtOnce at a time; the first failure is thrown once
// every running step has finished.
void for_each_key(const std::vector<std::string>& keys, const std::function<void(const std::string&)>& step) {
  if (keys.empty()) return;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  const auto errors = run_on_threads(std::min(kRequestsAtOnce, keys.size()), [&](std::size_t) {
    for (std::size_t i = next++; i < keys.size() && !failed; i = next++) {
      try {
        step(keys[i]);
      } catch (...) {
        failed = true;
        throw;
      }
    }
  });
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace

bool is_metadata_document_key(std::string_view key) {
  const std::string_view name = last_segment(key);
  return std::find(std::begin(kMetadataDocuments), std::end(kMetadataDocuments), name) != std::end(kMetadataDocuments);
}

NodeWriteView::NodeWriteView(std::shared_ptr<Store> base, std::string node, Placement placement,
                             std::vector<std::string> old_keys)
    : base_(std::move(base)), node_(std::move(node)), placement_(placement), old_keys_(std::move(old_keys)) {
  if (placement_ == Placement::kBeside) staging_ = join_key(node_, detail::temp_name_for("new-node"));
}

bool NodeWriteView::under_node(std::string_view key) const { return node_.empty() || key_is_under(key, node_); }

bool NodeWriteView::dir_within_node(std::string_view dir) const { return dir == node_ || under_node(dir); }

std::string NodeWriteView::stored_key(std::string_view key) const {
  if (placement_ == Placement::kInPlace) return std::string(key);
  return join_key(staging_, node_.empty() ? key : key.substr(node_.size() + 1));
}

StoreCapabilities NodeWriteView::capabilities() const {
  StoreCapabilities c = base_->capabilities();
  c.batched_gets = false;  // reads through the view are few: the writer's own values
  return c;
}

std::string NodeWriteView::describe() const { return base_->describe(); }

std::optional<Buffer> NodeWriteView::get(std::string_view key, const BufferPrototype& prototype,
                                         std::optional<ByteRange> range) {
  validate_key(key);
  if (!under_node(key)) return base_->get(key, prototype, range);
  if (is_metadata_document_key(key)) {
    std::lock_guard lock(mutex_);
    auto it = held_.find(key);
    if (it == held_.end()) return std::nullopt;
    const auto [begin, end] = (range ? *range : ByteRange::from_offset(0)).resolve(it->second.size());
    return Buffer::copy_of(it->second.view().subspan(begin, end - begin));
  }
  {
    std::lock_guard lock(mutex_);
    if (!written_.contains(key)) return std::nullopt;
  }
  return base_->get(stored_key(key), prototype, range);
}

bool NodeWriteView::exists(std::string_view key) {
  validate_key(key);
  if (!under_node(key)) return base_->exists(key);
  std::lock_guard lock(mutex_);
  return held_.contains(key) || written_.contains(key);
}

std::optional<std::uint64_t> NodeWriteView::size(std::string_view key) {
  validate_key(key);
  if (!under_node(key)) return base_->size(key);
  {
    std::lock_guard lock(mutex_);
    if (auto it = held_.find(key); it != held_.end()) return it->second.size();
    if (!written_.contains(key)) return std::nullopt;
  }
  return base_->size(stored_key(key));
}

void NodeWriteView::set(std::string_view key, ByteView value) {
  validate_key(key);
  if (!under_node(key)) return base_->set(key, value);
  if (is_metadata_document_key(key)) {
    std::lock_guard lock(mutex_);
    held_.insert_or_assign(std::string(key), Buffer::copy_of(value));
    return;
  }
  base_->set(stored_key(key), value);
  std::lock_guard lock(mutex_);
  written_.insert_or_assign(std::string(key), value.size());
}

void NodeWriteView::erase(std::string_view key) {
  validate_key(key);
  if (!under_node(key)) return base_->erase(key);
  bool was_written = false;
  {
    std::lock_guard lock(mutex_);
    if (auto it = held_.find(key); it != held_.end()) return void(held_.erase(it));
    if (auto it = written_.find(key); it != written_.end()) {
      written_.erase(it);
      was_written = true;
    }
  }
  // A key the writer never wrote is not shown to it; an old one goes at the commit.
  if (was_written) base_->erase(stored_key(key));
}

void NodeWriteView::erase_prefix(std::string_view prefix) {
  const std::string dir(normalize_prefix(prefix));
  if (!dir_within_node(dir)) {
    fail_invalid("{}: a node being written cannot remove \"{}\", which holds it", describe(), dir);
  }
  for (const std::string& key : view_keys_under(dir)) erase(key);
}

std::vector<std::string> NodeWriteView::view_keys_under(std::string_view dir) const {
  std::vector<std::string> keys;
  std::lock_guard lock(mutex_);
  for (const auto& [key, value] : held_) {
    if (dir.empty() || key_is_under(key, dir)) keys.push_back(key);
  }
  for (const auto& [key, size] : written_) {
    if (dir.empty() || key_is_under(key, dir)) keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<std::string> NodeWriteView::list(std::string_view prefix) {
  const std::string dir(normalize_prefix(prefix));
  if (dir_within_node(dir)) return view_keys_under(dir);
  // An ancestor of the node: what the store has outside the node, and the view inside it.
  std::vector<std::string> keys;
  for (std::string& key : base_->list(dir)) {
    if (!under_node(key)) keys.push_back(std::move(key));
  }
  for (std::string& key : view_keys_under(node_)) keys.push_back(std::move(key));
  std::sort(keys.begin(), keys.end());
  return keys;
}

void NodeWriteView::copy_into_place(const std::map<std::string, std::uint64_t, std::less<>>& keys) {
  auto* s3 = dynamic_cast<S3Store*>(base_.get());
  std::vector<std::string> names;
  for (const auto& [key, size] : keys) names.push_back(key);
  for_each_key(names, [&](const std::string& key) {
    const std::string from = stored_key(key);
    if (s3 != nullptr && keys.find(key)->second <= S3Store::kMaxCopyBytes) return s3->copy(from, key);
    auto value = base_->get(from);
    if (!value) fail_io("{}: the new value of \"{}\" is gone from \"{}\"", describe(), key, from);
    base_->set(key, value->view());
  });
}

void NodeWriteView::commit() {
  std::map<std::string, Buffer, std::less<>> held;
  std::map<std::string, std::uint64_t, std::less<>> written;
  {
    std::lock_guard lock(mutex_);
    held = held_;
    written = written_;
  }
  auto is_node_document = [&](std::string_view key) {
    return std::any_of(std::begin(kNodeDocuments), std::end(kNodeDocuments),
                       [&](std::string_view name) { return key == join_key(node_, name); });
  };
  const std::string context = fmt::format("{}: putting the new node at \"{}\" in place", describe(),
                                          node_.empty() ? "/" : node_);
  try {
    if (placement_ == Placement::kBeside) {
      // The old node's metadata, its own documents first: from the first one removed, the
      // destination holds no node (nor any member that could be opened by its path).
      std::vector<std::string> old_documents;
      for (const std::string& key : old_keys_) {
        if (is_metadata_document_key(key)) old_documents.push_back(key);
      }
      std::stable_partition(old_documents.begin(), old_documents.end(), is_node_document);
      for (const std::string& key : old_documents) base_->erase(key);
      copy_into_place(written);
    }
    std::vector<std::string> stale;
    for (const std::string& key : old_keys_) {
      const bool removed_already = placement_ == Placement::kBeside && is_metadata_document_key(key);
      if (!removed_already && !held.contains(key) && !written.contains(key)) stale.push_back(key);
    }
    for_each_key(stale, [&](const std::string& key) { base_->erase(key); });
    // The metadata, the node's own documents last: the node appears when it is complete.
    for (const auto& [key, value] : held) {
      if (!is_node_document(key)) base_->set(key, value.view());
    }
    for (const auto& [key, value] : held) {
      if (is_node_document(key)) base_->set(key, value.view());
    }
  } catch (const Error& e) {
    rethrow_with_context(e, context);
  }
  discard();
}

void NodeWriteView::discard() noexcept {
  if (staging_.empty()) return;
  try {
    base_->erase_prefix(staging_);
  } catch (...) {
    // Left for the next write with --overwrite there, which removes it with the old keys.
  }
}

}  // namespace zarrkit::cli
