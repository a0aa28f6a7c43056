// nvCOMP is optional: loading it either works or says why, and never throws.
#include <gtest/gtest.h>

#include "gpu/nvcomp_runtime.h"

namespace zarrkit::gpu {
namespace {

TEST(NvcompRuntime, LoadsOrSaysWhy) {
  const Nvcomp* nvcomp = Nvcomp::get();
  if (nvcomp == nullptr) {
    EXPECT_NE(Nvcomp::reason().find("nvCOMP"), std::string::npos) << Nvcomp::reason();
  } else {
    EXPECT_TRUE(Nvcomp::reason().empty());
    EXPECT_FALSE(nvcomp->path.empty());
  }
  EXPECT_EQ(Nvcomp::get(), nvcomp);  // loaded once
  EXPECT_STREQ(nvcomp_codec_name(NvcompCodec::kZstd), "Zstd");
}

}  // namespace
}  // namespace zarrkit::gpu
