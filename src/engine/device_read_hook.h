// The engine's door to the GPU path. Array::read_into hands reads into device memory, and
// Array::write writes from device memory, to the functions registered here; the GPU module (src/gpu) registers it when installed
// (install_gpu_support). The engine does not link the GPU module: without it, or in a
// build without CUDA, such a read is an UnsupportedError.
#pragma once

#include "zarrkit/ndbuffer.h"
#include "zarrkit/selection.h"

namespace zarrkit {

class Array;

using DeviceReadHook = void (*)(const Array& array, const Selection& selection, const NDView& out);
using DeviceWriteHook = void (*)(Array& array, const Selection& selection, const NDView& data);

void set_device_read_hook(DeviceReadHook hook);
void set_device_write_hook(DeviceWriteHook hook);

// Reads `selection` of `array` into `out`, which lies in device memory. The caller has
// checked the dtype; the hook checks the rest.
void read_into_device(const Array& array, const Selection& selection, const NDView& out);
// Writes `data`, which lies in device memory, to `selection` of `array`.
void write_from_device(Array& array, const Selection& selection, const NDView& data);

}  // namespace zarrkit
