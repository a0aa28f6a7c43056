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
// Decodes chunks into device memory (batch_decode.h): requests[i] of the batch, whose
// outputs all lie in device memory; `regions` and `tasks` are their outputs and tasks as
// the engine plans them, `describe(i)` names request i in errors.
struct DeviceDecodeBatch;
using DeviceDecodeHook = void (*)(const DeviceDecodeBatch& batch);

void set_device_read_hook(DeviceReadHook hook);
void set_device_write_hook(DeviceWriteHook hook);
void set_device_decode_hook(DeviceDecodeHook hook);

// Reads `selection` of `array` into `out`, which lies in device memory. The caller has
// checked the dtype; the hook checks the rest.
void read_into_device(const Array& array, const Selection& selection, const NDView& out);
// Writes `data`, which lies in device memory, to `selection` of `array`.
void write_from_device(Array& array, const Selection& selection, const NDView& data);
// Decodes a batch whose outputs lie in device memory.
void decode_on_device(const DeviceDecodeBatch& batch);

}  // namespace zarrkit
