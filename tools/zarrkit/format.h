// Small helpers for readable output.
#pragma once

#include <cstdint>
#include <string>

#include "zarrkit/ndbuffer.h"

namespace zarrkit::cli {

// "(10, 20)", "(10,)", "()".
std::string format_shape(const Shape& shape);
// "512 B", "1.5 KiB", "12.3 MiB", ...
std::string format_bytes(std::uint64_t bytes);

}  // namespace zarrkit::cli
