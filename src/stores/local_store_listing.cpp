// LocalStore: listing, bulk removal and the clean-up of stale temporary files.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <set>
#include <utility>

#include "stores/file_io.h"
#include "stores/local_store_internal.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/local_store.h"

namespace zarrkit {
namespace {

using detail::errno_text;

// Calls `visit(name, d_type)` for each entry of the directory `path` except "." and "..".
// Returns false when the directory cannot be opened (the caller decides if that matters).
bool for_each_entry(const std::string& path, const std::function<void(const char*, unsigned char)>& visit,
                    int& error) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) {
    error = errno;
    return false;
  }
  std::unique_ptr<DIR, int (*)(DIR*)> closer(dir, ::closedir);
  for (;;) {
    errno = 0;
    dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      error = errno;
      return error == 0;
    }
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    visit(entry->d_name, entry->d_type);
  }
}

bool is_valid_key_segment(std::string_view name) {
  if (name.find('/') != std::string_view::npos) return false;
  try {
    validate_key(name);
    return true;
  } catch (const InvalidArgumentError&) {
    return false;
  }
}

struct ListedEntry {
  std::string name;
  bool is_directory;
};

// The entries of `path` a listing shows: regular files and directories named like valid
// key segments, not temporary files; a symlink only when it is one to a regular file
// inside `root`.
std::vector<ListedEntry> listed_entries(const std::string& path, const std::string& root,
                                        const std::string& store) {
  std::vector<ListedEntry> entries;
  int error = 0;
  bool ok = for_each_entry(path, [&](const char* name, unsigned char type) {
    if (detail::is_temp_file_name(name) || !is_valid_key_segment(name)) return;
    std::string full = path + '/' + name;
    if (type == DT_UNKNOWN || type == DT_LNK) {
      struct stat st;
      if (::lstat(full.c_str(), &st) != 0) return;  // vanished meanwhile
      if (S_ISLNK(st.st_mode)) {
        char* resolved = ::realpath(full.c_str(), nullptr);
        if (resolved == nullptr) return;  // dangling
        bool inside = detail::path_is_inside(resolved, root);
        std::free(resolved);
        // Only files: descending into directory symlinks could loop or list a tree twice.
        if (!inside || ::stat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
      }
      type = S_ISREG(st.st_mode) ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR : DT_UNKNOWN;
    }
    if (type == DT_REG || type == DT_DIR) entries.push_back({name, type == DT_DIR});
  }, error);
  if (!ok && error != ENOENT && error != ENOTDIR) {
    fail_io("{}: cannot list the directory \"{}\": {}", store, path, errno_text(error));
  }
  return entries;
}

}  // namespace

std::vector<std::string> LocalStore::list(std::string_view prefix) {
  std::string_view dir = normalize_prefix(prefix);
  std::vector<std::string> keys;
  std::set<std::pair<dev_t, ino_t>> visited;  // a bind-mount loop ends here
  std::vector<std::pair<std::string, std::string>> pending{{checked_path(dir), std::string(dir)}};
  while (!pending.empty()) {
    auto [path, key_dir] = std::move(pending.back());
    pending.pop_back();
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (!visited.emplace(st.st_dev, st.st_ino).second) continue;
    for (ListedEntry& entry : listed_entries(path, canonical_root_, describe())) {
      std::string key = join_key(key_dir, entry.name);
      if (entry.is_directory) {
        pending.emplace_back(path + '/' + entry.name, std::move(key));
      } else {
        keys.push_back(std::move(key));
      }
    }
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

DirListing LocalStore::list_dir(std::string_view prefix) {
  std::string_view dir = normalize_prefix(prefix);
  DirListing listing;
  for (ListedEntry& entry : listed_entries(checked_path(dir), canonical_root_, describe())) {
    (entry.is_directory ? listing.prefixes : listing.keys).push_back(std::move(entry.name));
  }
  std::sort(listing.keys.begin(), listing.keys.end());
  std::sort(listing.prefixes.begin(), listing.prefixes.end());
  return listing;
}

void LocalStore::erase_prefix(std::string_view prefix) {
  std::string_view dir = normalize_prefix(prefix);
  require_writable("erase everything under", dir);
  const WriteScope erased(*this, dir, /*below=*/true);
  const std::string path = checked_path(dir);
  if (dir.empty()) return erase_root_entries(path);
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;   // nothing there
  if (!S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) return;  // a value named like the prefix stays
  // The tree is first renamed to a hidden temporary name, in one step, and removed from
  // there: a crash part-way leaves the node whole or gone, never half of its chunks (what
  // is left is a temporary that the next writer removes).
  const std::string parent = path.substr(0, path.rfind('/'));
  const std::string doomed = parent + '/' + detail::temp_name_for(path.substr(parent.size() + 1));
  if (detail::retry_eintr([&] { return io_->rename(path.c_str(), doomed.c_str()); }) != 0) {
    fail_io("{}: cannot erase everything under \"{}\": cannot move it aside: {}", describe(), dir,
            errno_text(errno));
  }
  if (options_.durable) sync_directory(parent, dir);
  std::error_code ec;
  std::filesystem::remove_all(doomed, ec);  // never follows symlinks
  if (ec) fail_io("{}: \"{}\" is erased, but removing its files failed: {}", describe(), dir, ec.message());
}

void LocalStore::erase_root_entries(const std::string& path) {
  // The root cannot be renamed away, so its entries move into one hidden temporary
  // directory, the node's metadata first: a crash part-way leaves no node (rather than a
  // node missing some of its chunks) plus a temporary the next writer removes.
  int error = 0;
  std::vector<std::string> names;
  if (!for_each_entry(path, [&](const char* name, unsigned char) { names.emplace_back(name); }, error)) {
    fail_io("{}: cannot list the root to erase it: {}", describe(), errno_text(error));
  }
  std::erase_if(names, [](const std::string& name) { return detail::is_temp_file_name(name); });
  if (names.empty()) return;
  auto metadata_rank = [](const std::string& name) {
    return name == "zarr.json" || name == ".zarray" || name == ".zgroup" || name == ".zmetadata" ? 0 : 1;
  };
  std::stable_sort(names.begin(), names.end(),
                   [&](const std::string& a, const std::string& b) { return metadata_rank(a) < metadata_rank(b); });
  const std::string doomed = path + '/' + detail::temp_name_for("root");
  if (detail::retry_eintr([&] { return io_->mkdir(doomed.c_str(), 0700); }) != 0) {
    fail_io("{}: cannot erase the root: cannot make the directory \"{}\": {}", describe(), doomed,
            errno_text(errno));
  }
  for (const std::string& name : names) {
    const std::string from = path + '/' + name;
    const std::string to = doomed + '/' + name;
    if (detail::retry_eintr([&] { return io_->rename(from.c_str(), to.c_str()); }) != 0) {
      fail_io("{}: cannot erase \"{}\": {}", describe(), name, errno_text(errno));
    }
  }
  if (options_.durable) sync_directory(path, "");
  std::error_code ec;
  std::filesystem::remove_all(doomed, ec);  // never follows symlinks
  if (ec) fail_io("{}: the root is erased, but removing its files failed: {}", describe(), ec.message());
}

std::size_t LocalStore::clean_stale_temp_files(double min_age_seconds) {
  // Best effort: an unreadable directory or a file that vanished must not stop an open.
  // Directory symlinks are not followed, so only files inside the root are ever removed.
  // A temporary is stale when its writer is gone (its name carries the writer's process id)
  // or, for names without one, when it is older than `min_age_seconds`.
  const auto now = std::chrono::system_clock::now();
  std::size_t removed = 0;
  std::vector<std::string> pending{root_string_};  // "" is "/", see the constructor
  while (!pending.empty()) {
    std::string path = std::move(pending.back());
    pending.pop_back();
    int error = 0;
    for_each_entry(path.empty() ? "/" : path, [&](const char* name, unsigned char type) {
      std::string full = path + '/' + name;
      struct stat st;
      bool have_stat = false;
      if (type == DT_UNKNOWN) {
        if (::lstat(full.c_str(), &st) != 0) return;
        have_stat = true;
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
      }
      const bool temp = detail::is_temp_file_name(name);
      if (type == DT_DIR && !temp) {
        pending.push_back(std::move(full));
        return;
      }
      if (!temp || (type != DT_REG && type != DT_DIR)) return;
      bool stale = detail::temp_writer_is_gone(name);
      if (!stale && !detail::temp_name_writer(name)) {
        if (!have_stat && ::lstat(full.c_str(), &st) != 0) return;
        auto modified = std::chrono::system_clock::from_time_t(st.st_mtime);
        stale = std::chrono::duration<double>(now - modified).count() >= min_age_seconds;
      }
      if (!stale) return;
      if (type == DT_DIR) {
        // A node a killed writer was writing, or moving away to erase it.
        std::error_code ec;
        if (std::filesystem::remove_all(full, ec) > 0 && !ec) ++removed;
      } else if (io_->unlink(full.c_str()) == 0) {
        ++removed;
      }
    }, error);
  }
  return removed;
}

}  // namespace zarrkit
