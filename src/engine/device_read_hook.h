// The engine's door to the GPU path. Array::read_into hands reads into device memory to the
// function registered here; the GPU module (src/gpu) registers it when installed
// (install_gpu_support). The engine does not link the GPU module: without it, or in a
// build without CUDA, such a read is an UnsupportedError.
#pragma once

#include "zarrkit/ndbuffer.h"
#include "zarrkit/selection.h"

namespace zarrkit {

class Array;

using DeviceReadHook = void (*)(const Array& array, const Selection& selection, const NDView& out);

void set_device_read_hook(DeviceReadHook hook);

// Reads `selection` of `array` into `out`, which lies in device memory. The caller has
// checked the dtype; the hook checks the rest.
void read_into_device(const Array& array, const Selection& selection, const NDView& out);

}  // namespace zarrkit
