// What the rest of zarrkit may ask the "bytes" codec (the device half folds it into its
// scatter instead of reading its configuration back).
#pragma once

#include <optional>

#include "zarrkit/codec.h"

namespace zarrkit {

// The byte order `codec` stores elements in (nullopt: none given, for types without one).
// InternalError unless `codec` is a bytes codec.
std::optional<Endian> bytes_codec_endian(const Codec& codec);

}  // namespace zarrkit
