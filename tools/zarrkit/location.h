// Opening the node a command-line location names ("data.zarr", "data.zarr/group/array").
#pragma once

#include <memory>
#include <string>

#include "zarrkit/array.h"
#include "zarrkit/group.h"
#include "zarrkit/store.h"
#include "zarrkit/stores/open_store.h"

namespace zarrkit::cli {

struct OpenedNode {
  std::string location;  // as the user wrote it, for messages
  std::shared_ptr<Store> store;
  std::string path;      // inside the store
  NodeInfo info;
};

// The array or group at `location`; NotFoundError when there is neither.
OpenedNode open_node(const std::string& location);
// The array at `location`; InvalidArgumentError when it is a group.
Array open_array(const std::string& location);

// Completes the writes of a command: a zip archive is written out here (not when the store is
// destroyed), so that an error writing it reaches the exit code. No-op for other stores.
void finish_writes(const StoreLocation& where, const std::string& location);

}  // namespace zarrkit::cli
