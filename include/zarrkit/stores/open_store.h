// Opens a store from a user-facing location: a filesystem path or file:// URL today;
// memory:// for a fresh in-memory store. Later: zip files, s3://, https://.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "zarrkit/store.h"

namespace zarrkit {

struct StoreLocation {
  std::shared_ptr<Store> store;
  std::string path;  // node path inside the store ("" for the root)
};

// `location` names a store and optionally a node inside it. For a filesystem path the
// store root is the outermost directory that is part of a Zarr hierarchy and `path` the
// rest. `for_writing` allows the location not to exist yet (the root is then the path).
StoreLocation open_location(std::string_view location, bool for_writing = false);

}  // namespace zarrkit
