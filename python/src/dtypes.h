// Data types between NumPy and the engine (dtypes.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include "zarrkit/dtype.h"

namespace zarrkit::python {

nlohmann::json numpy_descr(const DataType& dtype);
DataType dtype_from_python(const nlohmann::json& spec);

}  // namespace zarrkit::python
