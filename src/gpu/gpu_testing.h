// Shared by the GPU tests: skip, naming the reason, where no CUDA device can be used, and
// compare a read into device memory with the same read on the CPU.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "zarrkit/array.h"
#include "zarrkit/gpu.h"

#define REQUIRE_GPU()                                                                 \
  do {                                                                                \
    if (!::zarrkit::gpu_available()) {                                                \
      GTEST_SKIP() << "no CUDA device: " << ::zarrkit::gpu_unavailable_reason();      \
    }                                                                                 \
    ::zarrkit::install_gpu_support();                                                 \
  } while (0)

namespace zarrkit {

// `selection` of `array` read into device memory equals the CPU's read, byte for byte.
inline void expect_same_read(const Array& array, const Selection& selection, const std::string& what) {
  const NDBuffer cpu = array.read(selection);
  NDBuffer gpu;
  {
    ScopedGpu device;
    gpu = array.read(selection);
  }
  ASSERT_EQ(gpu.shape(), cpu.shape()) << what;
  const Buffer back = to_host(gpu.buffer());
  ASSERT_EQ(back.size(), cpu.nbytes()) << what;
  if (back.size() > 0) {
    ASSERT_EQ(std::memcmp(back.data(), cpu.data(), back.size()), 0) << what;
  }
}

}  // namespace zarrkit
