#include "zarrkit/stores/open_store.h"

#include <sys/stat.h>

#include <cctype>
#include <filesystem>
#include <optional>

#include "zarrkit/error.h"
#include "zarrkit/stores/gds_store.h"
#include "zarrkit/stores/http_store.h"
#include "zarrkit/stores/local_store.h"
#include "zarrkit/stores/memory_store.h"
#include "zarrkit/stores/s3_store.h"
#include "zarrkit/stores/zip_store.h"

namespace zarrkit {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMemoryScheme = "memory://";
constexpr std::string_view kFileScheme = "file://";
constexpr std::string_view kGdsScheme = "gds://";

// The URL scheme of `location` ("s3" for "s3://b/k"), or "" for a plain path.
std::string_view scheme_of(std::string_view location) {
  std::size_t colon = location.find("://");
  if (colon == std::string_view::npos || colon == 0) return {};
  std::string_view scheme = location.substr(0, colon);
  if (!std::isalpha(static_cast<unsigned char>(scheme.front()))) return {};
  for (char c : scheme) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return {};
  }
  return scheme;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The filesystem path named by a file:// URL.
std::string path_of_file_url(std::string_view url) {
  std::string_view rest = url.substr(kFileScheme.size());
  std::size_t slash = rest.find('/');
  std::string_view host = rest.substr(0, slash);
  if (slash == std::string_view::npos) fail_invalid("invalid file URL \"{}\": it has no path", url);
  if (!host.empty() && host != "localhost") {
    fail_unsupported("file URL \"{}\" names the host \"{}\"; only local files are supported", url, host);
  }
  std::string_view encoded = rest.substr(slash);
  std::string path;
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    if (encoded[i] != '%') {
      path += encoded[i];
      continue;
    }
    int high = i + 2 < encoded.size() ? hex_value(encoded[i + 1]) : -1;
    int low = i + 2 < encoded.size() ? hex_value(encoded[i + 2]) : -1;
    if (high < 0 || low < 0) fail_invalid("invalid file URL \"{}\": bad percent-escape", url);
    char decoded = static_cast<char>(high * 16 + low);
    if (decoded == '\0') fail_invalid("invalid file URL \"{}\": it encodes a NUL byte", url);
    path += decoded;
    i += 2;
  }
  return path;
}

bool is_zarr_node(const fs::path& directory) {
  std::error_code ec;
  for (const char* name : {"zarr.json", ".zgroup", ".zarray"}) {
    if (fs::is_regular_file(directory / name, ec)) return true;
  }
  return false;
}

bool has_zip_suffix(const fs::path& path) {
  std::string name = path.filename().string();
  if (name.size() <= 4) return false;
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name.ends_with(".zip");
}

// "x.zip" is a zip store; so is "x.zip/group/array" when x.zip is a file (the rest is the
// node path inside it). Nullopt when `path` names no zip archive.
std::optional<StoreLocation> open_zip_path(std::string_view location, const fs::path& path, bool for_writing) {
  ZipStoreOptions options;
  options.read_only = !for_writing;
  std::error_code ec;
  if (has_zip_suffix(path) && !fs::is_directory(path, ec)) return StoreLocation{ZipStore::open(path, options), ""};
  std::string node;
  for (fs::path archive = path; archive.has_parent_path() && archive != archive.root_path();
       archive = archive.parent_path()) {
    if (has_zip_suffix(archive) && fs::is_regular_file(archive, ec)) {
      try {
        validate_key(node);
      } catch (const InvalidArgumentError& e) {
        fail_invalid("cannot open the store \"{}\": the node path is not usable: {}", location, e.what());
      }
      return StoreLocation{ZipStore::open(archive, options), node};
    }
    node = join_key(archive.filename().string(), node);
  }
  return std::nullopt;
}

StoreLocation open_path(std::string_view location, const std::string& raw_path, bool for_writing) {
  if (raw_path.empty()) fail_invalid("cannot open the store \"{}\": the path is empty", location);
  if (raw_path.find('\0') != std::string::npos) {
    fail_invalid("cannot open the store \"{}\": the path contains a NUL byte", location);
  }
  std::error_code ec;
  fs::path path = fs::absolute(raw_path, ec).lexically_normal();
  if (ec) fail_io("cannot open the store \"{}\": {}", location, ec.message());
  if (!path.has_filename() && path.has_parent_path() && path != path.root_path()) path = path.parent_path();
  if (auto zip = open_zip_path(location, path, for_writing)) return std::move(*zip);

  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    int error = errno;
    if (error != ENOENT) {
      fail_io("cannot open the store \"{}\": {}", location, std::generic_category().message(error));
    }
    if (!for_writing) fail_not_found("cannot open the store \"{}\": no such file or directory", location);
    return {LocalStore::open(path), ""};  // writable, created with its parents
  }
  if (!S_ISDIR(st.st_mode)) {
    fail_invalid("cannot open the store \"{}\": it is not a directory", location);
  }

  fs::path root = path;
  std::string node;
  while (root.has_parent_path() && root != root.root_path() && is_zarr_node(root.parent_path())) {
    node = join_key(root.filename().string(), node);
    root = root.parent_path();
  }
  if (!node.empty()) {
    try {
      validate_key(node);
    } catch (const InvalidArgumentError& e) {
      fail_invalid("cannot open the store \"{}\": the node path is not usable: {}", location, e.what());
    }
  }
  LocalStoreOptions options;
  options.read_only = !for_writing;
  return {LocalStore::open(root, std::move(options)), node};
}

}  // namespace

StoreLocation open_location(std::string_view location, bool for_writing) {
  if (location.empty()) fail_invalid("cannot open a store: the location is empty");
  if (location.starts_with(kMemoryScheme)) {
    std::string node(location.substr(kMemoryScheme.size()));
    while (!node.empty() && node.back() == '/') node.pop_back();
    if (!node.empty()) validate_key(node);
    return {MemoryStore::create(), node};
  }
  if (location.starts_with(kFileScheme)) {
    return open_path(location, path_of_file_url(location), for_writing);
  }
  if (location.starts_with(kGdsScheme)) {
    // The directory store of the path after the scheme, read into device memory through
    // GPUDirect Storage (gds_store.h).
    StoreLocation local = open_path(location, std::string(location.substr(kGdsScheme.size())), for_writing);
    auto directory = std::dynamic_pointer_cast<LocalStore>(local.store);
    if (!directory) fail_unsupported("cannot open \"{}\": gds:// names a directory store, not an archive", location);
    return {std::make_shared<GdsStore>(std::move(directory)), std::move(local.path)};
  }
  if (std::string_view scheme = scheme_of(location); !scheme.empty()) {
    std::string lower_scheme(scheme);
    for (char& c : lower_scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower_scheme == "http" || lower_scheme == "https") {
      if (for_writing) fail_unsupported("cannot write to \"{}\": HTTP stores are read-only", location);
      return {HttpStore::open(location), ""};
    }
    if (lower_scheme == "s3") {
      S3Options options;
      options.read_only = !for_writing;
      return {S3Store::open(location, options), ""};
    }
    fail_unsupported("cannot open the store \"{}\": the scheme \"{}\" is not supported", location, scheme);
  }
  return open_path(location, std::string(location), for_writing);
}

}  // namespace zarrkit
