// The metadata of the arrays that `import` and `cp` create: the user's options on top of
// zarr-python's defaults (import) or of the source array's settings (cp), converted between
// Zarr v2 and v3 where needed.
//
// v3 -> v2: a chain of [transpose (C or F order)] + bytes + at most one compressor maps to
// v2 order, dtype byte order and compressor. Anything else (sharding, crc32c, two
// compressors, other permutations) cannot be written as v2: UnsupportedError.
// Dimension names travel as the xarray attribute _ARRAY_DIMENSIONS in v2.
#pragma once

#include "zarrkit/metadata.h"
#include "zarrkit/write_options.h"

namespace zarrkit::cli {

// An array of `shape` and `dtype` (native byte order), from scratch (import).
ArraySpec import_spec(const DataType& dtype, const Shape& shape, const WriteOptions& options);

// A copy of `source` (cp): options not given keep the source's settings.
ArraySpec copy_spec(const ArrayMetadata& source, const WriteOptions& options);

// The attribute under which v2 (xarray) stores dimension names.
inline constexpr const char* kV2DimensionsAttribute = "_ARRAY_DIMENSIONS";

}  // namespace zarrkit::cli
