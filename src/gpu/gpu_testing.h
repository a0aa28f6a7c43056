// Shared by the GPU tests: skip, naming the reason, where no CUDA device can be used.
#pragma once

#include <gtest/gtest.h>

#include "zarrkit/gpu.h"

#define REQUIRE_GPU()                                                                 \
  do {                                                                                \
    if (!::zarrkit::gpu_available()) {                                                \
      GTEST_SKIP() << "no CUDA device: " << ::zarrkit::gpu_unavailable_reason();      \
    }                                                                                 \
    ::zarrkit::install_gpu_support();                                                 \
  } while (0)
