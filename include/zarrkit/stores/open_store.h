// Opens a store from a user-facing location: a filesystem path or file:// URL; memory:// for
// a fresh in-memory store; s3://bucket/prefix (S3Store); http:// and https:// (HttpStore,
// read-only); a path ending in ".zip" (ZipStore); gds://path (GdsStore).
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

// `location` names a store and optionally a node inside it:
//   "memory://" or "memory://group/array"  a new, empty MemoryStore (and that node path);
//   "file:///abs/path" or "file://localhost/abs/path"  (percent-escapes decoded), and
//   a plain path, absolute or relative to the working directory.
//   "s3://bucket" or "s3://bucket/prefix"  an S3Store rooted at the prefix (node path "");
//   "http://..." or "https://..."  a read-only HttpStore rooted at the URL (node path "");
//   writing to it is UnsupportedError.
//   "x.zip" (any case; also as a file:// URL)  a ZipStore over that archive (node path ""),
//   read-only unless `for_writing`, when a missing archive is created at its first flush;
//   "x.zip/group/array", where x.zip is a file, the same store with that node path.
//   "gds://" followed by a path ("gds:///abs/data.zarr", "gds://relative/data.zarr"): the
//   directory as a path would open it, as a GdsStore (device reads through GPUDirect
//   Storage, gds_store.h; options from the ZARRKIT_GDS_* variables). Zip paths are refused.
//   The archive is written when the store is flushed or destroyed (see zip_store.h).
// Remote locations send no request when opened. Other schemes are refused with
// UnsupportedError.
//
// Finding the store root of an existing directory: start at the directory itself and walk
// up while the parent directory is a Zarr node (holds zarr.json, .zgroup or .zarray). So
// with data.zarr/ and data.zarr/group/ both groups, "data.zarr/group/array" opens the store
// at data.zarr with node path "group/array". A directory whose parent is not a node (for
// instance one that is not a node itself, or the top of a hierarchy) is the store root
// and the node path is "".
//
// A path that does not exist is NotFoundError, unless `for_writing`: then the path itself
// becomes the root (created with its missing parents) and the node path is "". On disk
// that is the same as creating the node inside an enclosing hierarchy, since keys map to
// files. A path that is not a directory is InvalidArgumentError.
//
// Without `for_writing` a local store is opened read-only (its writes are refused, and
// stale temporary files are left alone); with it, writable.
StoreLocation open_location(std::string_view location, bool for_writing = false);

}  // namespace zarrkit
