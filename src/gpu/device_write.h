// Writing to Zarr chunks from device memory: the GPU batch writer behind Array::write
// (device_write.cpp says how a request runs).
#pragma once

#include "zarrkit/array.h"

namespace zarrkit::gpu {

// Writes `data` (device memory, any strides, broadcastable to the selection) to `selection`
// of `array`.
void write_from_device(Array& array, const Selection& selection, const NDView& data);

}  // namespace zarrkit::gpu
