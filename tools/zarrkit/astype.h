// `zarrkit export --astype TYPE`: element types that NumPy's .npy format has no name for,
// written as a type it has. These are the ml_dtypes types (NumPy knows them only through
// that package): bfloat16, the float8/float6/float4 formats and int2/int4/uint2/uint4,
// which export writes as
//   float32, float64  the same values, exactly: every one of them is a float32 and a
//                     float64; NaN stays NaN, infinities and -0 stay;
//   the type's name   the byte patterns unchanged, as voids of the type's size (descr
//                     '|V2', '|V1'): the bytes np.save writes for an ml_dtypes array, so
//                     np.load(f).view(ml_dtypes.<name>) gives the values back.
// Every other type is written as it is; --astype naming that same type is accepted.
#pragma once

#include <string>

#include "zarrkit/dtype.h"
#include "zarrkit/ndbuffer.h"

namespace zarrkit::cli {

// The element type export writes for an array of `source` when asked for `astype` (empty:
// not asked). UsageError (exit 2) for a name it does not know, for a conversion it does not
// make, and for an ml_dtypes type without --astype (the message names the choices).
DataType export_type(const DataType& source, const std::string& astype);

// `values` (C order, native byte order) as elements of `target`, a result of export_type for
// their type; the same buffer when nothing changes.
NDBuffer convert_for_export(NDBuffer values, const DataType& target);

}  // namespace zarrkit::cli
