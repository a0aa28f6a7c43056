#include "zarrkit/location.h"

#include "zarrkit/error.h"
#include "zarrkit/stores/open_store.h"
#include "zarrkit/stores/zip_store.h"

namespace zarrkit::cli {

OpenedNode open_node(const std::string& location) {
  StoreLocation opened = open_location(location);
  auto info = probe_node(*opened.store, opened.path);
  if (!info) fail_not_found("{}: no Zarr array or group there (no zarr.json, .zarray or .zgroup)", location);
  return {location, std::move(opened.store), std::move(opened.path), std::move(*info)};
}

Array open_array(const std::string& location) {
  OpenedNode node = open_node(location);
  if (node.info.type != NodeType::kArray) fail_invalid("{} is a group, not an array", location);
  try {
    return Array::open(node.store, node.path);
  } catch (const Error& e) {
    rethrow_with_context(e, location);
  }
}

void finish_writes(const StoreLocation& where, const std::string& location) {
  auto* zip = dynamic_cast<ZipStore*>(where.store.get());
  if (zip == nullptr) return;
  try {
    zip->flush();
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("writing {}", location));
  }
}

}  // namespace zarrkit::cli
