// What the rest of zarrkit may ask the "transpose" codec.
#pragma once

#include <cstddef>
#include <vector>

#include "zarrkit/codec.h"

namespace zarrkit {

// The permutation `codec` applies to chunks of `ndim` axes: encoded axis i is decoded axis
// order[i]. InvalidArgumentError when its order does not fit `ndim` axes; InternalError
// unless `codec` is a transpose codec.
std::vector<std::size_t> transpose_codec_order(const Codec& codec, std::size_t ndim);

}  // namespace zarrkit
