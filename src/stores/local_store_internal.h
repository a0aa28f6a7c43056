// Helpers shared by the files that implement LocalStore.
#pragma once

#include <cerrno>
#include <string>
#include <string_view>
#include <system_error>

namespace zarrkit::detail {

inline constexpr std::string_view kTempMarker = ".zarrkit-tmp.";

// Temporary files are ".<name>.zarrkit-tmp.<random>" beside their final name.
inline bool is_temp_file_name(std::string_view name) {
  return name.starts_with('.') && name.find(kTempMarker) != std::string_view::npos;
}

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
