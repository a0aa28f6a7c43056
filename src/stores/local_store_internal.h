// Helpers shared by the files that implement LocalStore.
#pragma once

#include <cerrno>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace zarrkit::detail {

inline constexpr std::string_view kTempMarker = ".zarrkit-tmp.";
// How much of the final name a temporary name keeps (file names are at most 255 bytes).
inline constexpr std::size_t kTempNameMaxStem = 100;

// Temporary files are ".<name>.zarrkit-tmp.<pid>-<random>" beside their final name (older
// versions wrote ".<name>.zarrkit-tmp.<random>"); so are the directories that a whole node is
// written into before it is swapped into place, and those a node is moved into to be erased.
inline bool is_temp_file_name(std::string_view name) {
  return name.starts_with('.') && name.find(kTempMarker) != std::string_view::npos;
}

// A temporary name for `final_name`, unique with high probability, naming this process as
// its writer, short enough for NAME_MAX whatever `final_name` is.
std::string temp_name_for(std::string_view final_name);

// The process id a temporary name carries, or nullopt for names without one (older ones).
std::optional<long> temp_name_writer(std::string_view name);

// True when the temporary `name` was made by a process that no longer runs on this host, so
// nothing will ever rename it into place: the next writer may remove it at once. Names
// without a process id, and those of live processes (this one included), are not known to
// be abandoned. On a directory shared by several hosts, another host's live writer can look
// gone here; removing its temporary makes its rename fail with an error, never loses data.
bool temp_writer_is_gone(std::string_view name);

inline std::string errno_text(int error) { return std::generic_category().message(error); }

// Repeats a system call while it fails with EINTR.
template <typename Call>
auto retry_eintr(Call call) {
  for (;;) {
    auto result = call();
    if (result != -1 || errno != EINTR) return result;
  }
}

// True when `resolved` (an absolute path without symlinks) is `root` or lies below it.
inline bool path_is_inside(std::string_view resolved, std::string_view root) {
  if (root == "/") return true;
  return resolved.starts_with(root) && (resolved.size() == root.size() || resolved[root.size()] == '/');
}

}  // namespace zarrkit::detail
