// The GPU settings a device read or write takes: the scoped ones of the thread that starts
// it (host side: runs without a GPU).
#include "gpu/device_settings.h"

#include <thread>

#include <gtest/gtest.h>

namespace zarrkit::gpu {
namespace {

TEST(DeviceSettings, TheReaderTakesTheScopedSettingsOfItsThread) {
  const DeviceSettings global = device_settings();
  ScopedConfig scoped([](Config& c) {
    c.gpu.batch_budget_bytes = 3 * 32 * 40 * 4;
    c.gpu.pipeline_depth = 2;
    c.gpu.nvcomp_decode = !c.gpu.nvcomp_decode;
    c.gpu.nvcomp_min_chunks = 7;
    c.gpu.zstd_kernels = KernelUse::kOn;
    c.gpu.deflate_kernels = KernelUse::kOff;
    c.gpu.gds_direct = !c.gpu.gds_direct;
  });
  const DeviceSettings s = device_settings();
  EXPECT_EQ(s.batch_budget_bytes, 3u * 32 * 40 * 4);
  EXPECT_EQ(s.pipeline_depth, 2u);
  EXPECT_EQ(s.nvcomp_decode, !global.nvcomp_decode);
  EXPECT_EQ(s.nvcomp_min_chunks, 7u);
  EXPECT_EQ(s.zstd_kernels, KernelUse::kOn);
  EXPECT_EQ(s.deflate_kernels, KernelUse::kOff);
  EXPECT_EQ(s.gds_direct, !global.gds_direct);
  DeviceSettings other;
  std::thread([&] { other = device_settings(); }).join();
  EXPECT_EQ(other.batch_budget_bytes, global.batch_budget_bytes);
  EXPECT_EQ(other.pipeline_depth, global.pipeline_depth);
}

TEST(DeviceSettings, ValuesOutOfRangeAreBroughtIntoRange) {
  GpuConfig gpu;
  gpu.batch_budget_bytes = 0;
  gpu.pipeline_depth = 0;
  gpu.nvcomp_min_chunks = 0;
  DeviceSettings s = device_settings(gpu);
  EXPECT_EQ(s.batch_budget_bytes, 1u);
  EXPECT_EQ(s.pipeline_depth, 1u);
  EXPECT_EQ(s.nvcomp_min_chunks, 1u);
  gpu.pipeline_depth = 100;
  EXPECT_EQ(device_settings(gpu).pipeline_depth, 8u);
}

TEST(DeviceSettings, TheDefaultsAreThoseOfConfig) {
  const DeviceSettings s = device_settings(GpuConfig{});
  EXPECT_EQ(s.batch_budget_bytes, 256u << 20);
  EXPECT_EQ(s.pipeline_depth, 4u);
  EXPECT_FALSE(s.nvcomp_decode);
  EXPECT_EQ(s.nvcomp_min_chunks, 512u);
  EXPECT_EQ(s.zstd_kernels, KernelUse::kAuto);
  EXPECT_EQ(s.deflate_kernels, KernelUse::kAuto);
  EXPECT_TRUE(s.gds_direct);
}

}  // namespace
}  // namespace zarrkit::gpu
