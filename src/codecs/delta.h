// What the rest of zarrkit may ask the numcodecs delta codec (its device half decodes
// integer chunks with a running sum on the GPU).
#pragma once

#include "zarrkit/codec.h"

namespace zarrkit {

struct DeltaCodecTypes {
  DataType dtype;   // the decoded elements
  DataType astype;  // the stored differences
};

// The types `codec` works with. InternalError unless it is a delta codec.
DeltaCodecTypes delta_codec_types(const Codec& codec);

}  // namespace zarrkit
