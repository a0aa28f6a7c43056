// Handing out values a store holds in host memory (memory stores, held or fetched values,
// remote bodies), shared by the stores that do it.
#pragma once

#include <optional>
#include <string_view>

#include "zarrkit/store.h"

namespace zarrkit {

// The part of `value` that `range` selects (all of it without one), sharing its memory.
Buffer range_of(const Buffer& value, std::optional<ByteRange> range);

// `value` (host memory, never modified) in memory of the prototype's kind: itself for host
// memory, a copy for pinned host memory. Device memory is UnsupportedError naming `store`
// and `key` (when given): such stores cannot fill it (the GPU stores do).
Buffer host_value_for(Buffer value, const BufferPrototype& prototype, std::string_view store,
                      std::string_view key = {});

}  // namespace zarrkit
