// The device half of a codec through nvCOMP (nvcomp_device.cpp: opt-in, Config::gpu.nvcomp_decode),
// for the halves that offer it beside their own kernels (zstd_device.cpp).
#pragma once

#include <memory>

#include "gpu/device_codec.h"
#include "gpu/nvcomp_runtime.h"

namespace zarrkit::gpu {

std::shared_ptr<const DeviceBytesCodec> make_nvcomp_device(NvcompCodec codec);

}  // namespace zarrkit::gpu
