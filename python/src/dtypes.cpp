// Data types between NumPy and the engine.
//
// To NumPy: a descriptor np.dtype() accepts (a type string, or a list of fields for
// structured types), always in native byte order since that is how the engine holds
// elements in memory; "string", "bytes" and the v3 names of bfloat16 and the float8/6/4 and
// 2/4-bit integer types name the types NumPy has no type string for (the Python side maps
// them, the last ones to ml_dtypes). From NumPy: the Python side sends the v2 form
// (dtype.str or dtype.descr) or, for the ml_dtypes types, the v3 name.
#include "dtypes.h"

#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit::python {

nlohmann::json numpy_descr(const DataType& dtype) {
  switch (dtype.kind()) {
    case DataTypeKind::kBFloat16:
    case DataTypeKind::kMiniFloat:
    case DataTypeKind::kSubByteInt:
    case DataTypeKind::kSubByteUInt: return dtype.name();
    case DataTypeKind::kString: return "string";
    case DataTypeKind::kVarBytes: return "bytes";
    default: break;
  }
  // The v2 form of the little-endian type: the engine's memory order on every platform it
  // builds for (see native_endian()). The Python side also applies newbyteorder('=').
  return dtype_to_v2_json(dtype.with_storage_endian(Endian::kLittle));
}

DataType dtype_from_python(const nlohmann::json& spec) {
  if (!spec.is_object() || spec.size() != 1) {
    fail_invalid("dtype must be given as {{\"v2\": ...}} or {{\"v3\": ...}}");
  }
  if (spec.contains("v2")) return parse_dtype_v2(spec["v2"]);
  if (spec.contains("v3")) return parse_dtype_v3(spec["v3"]);
  fail_invalid("dtype must be given as {{\"v2\": ...}} or {{\"v3\": ...}}");
}

}  // namespace zarrkit::python
