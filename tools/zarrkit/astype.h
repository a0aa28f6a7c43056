// `zarrkit export --astype TYPE`: element types that NumPy's .npy format has no name for,
// written as a type it has. Today that is bfloat16 (NumPy knows it only through the
// ml_dtypes package), which export writes as
//   float32, float64  the same values, exactly: every bfloat16 is a float32 (its 16 high
//                     bits) and a float64; NaN stays NaN, infinities and -0 stay;
//   bfloat16          the 2-byte patterns unchanged, as 2-byte voids (descr '|V2'): the
//                     bytes np.save writes for an ml_dtypes.bfloat16 array (it names them
//                     '<V2', the same type), so np.load(f).view(ml_dtypes.bfloat16) gives
//                     the values back.
// Every other type is written as it is; --astype naming that same type is accepted.
#pragma once

#include <string>

#include "zarrkit/dtype.h"
#include "zarrkit/ndbuffer.h"

namespace zarrkit::cli {

// The element type export writes for an array of `source` when asked for `astype` (empty:
// not asked). UsageError (exit 2) for a name it does not know, for a conversion it does not
// make, and for bfloat16 without --astype (the message names the choices).
DataType export_type(const DataType& source, const std::string& astype);

// `values` (C order, native byte order) as elements of `target`, a result of export_type for
// their type; the same buffer when nothing changes.
NDBuffer convert_for_export(NDBuffer values, const DataType& target);

}  // namespace zarrkit::cli
