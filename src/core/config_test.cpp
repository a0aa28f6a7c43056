// The settings object: the global settings start from the environment, and ScopedConfig
// overrides every group for one thread.
#include "zarrkit/config.h"

#include <thread>

#include <gtest/gtest.h>

#include "core/settings_env.h"

namespace zarrkit {
namespace {

TEST(Config, TheGlobalSettingsStartFromTheEnvironment) {
  EXPECT_EQ(environment_config(), config_from_environment(environment_variable));
  EXPECT_EQ(&environment_config(), &environment_config());  // read once
}

TEST(Config, NestedScopesOverrideEveryGroupAndRestoreOnExit) {
  const Config before = current_config();
  {
    ScopedConfig outer([](Config& c) {
      c.remote.concurrency = 7;
      c.gpu.batch_budget_bytes = 1u << 20;
    });
    EXPECT_EQ(current_config().remote.concurrency, 7u);
    {
      ScopedConfig inner([](Config& c) {
        c.gpu.nvcomp_decode = true;
        c.gpu.gds_mode = GdsMode::kCompat;
        c.remote.ca_bundle = "/tmp/ca.pem";
      });
      // The inner scope starts from the outer one.
      EXPECT_EQ(current_config().remote.concurrency, 7u);
      EXPECT_EQ(current_config().gpu.batch_budget_bytes, 1u << 20);
      EXPECT_TRUE(current_config().gpu.nvcomp_decode);
      EXPECT_EQ(current_config().gpu.gds_mode, GdsMode::kCompat);
      EXPECT_EQ(current_config().remote.ca_bundle, "/tmp/ca.pem");
    }
    EXPECT_EQ(current_config().gpu.nvcomp_decode, before.gpu.nvcomp_decode);
    EXPECT_EQ(current_config().remote.ca_bundle, before.remote.ca_bundle);
    EXPECT_EQ(current_config().remote.concurrency, 7u);
  }
  EXPECT_EQ(current_config(), before);
}

TEST(Config, AScopeLeavesOtherThreadsAlone) {
  const Config global = global_config();
  ScopedConfig scoped([](Config& c) {
    c.remote.concurrency = 3;
    c.gpu.pipeline_depth = 1;
    c.num_threads = 2;
  });
  Config seen;
  std::thread other([&] { seen = current_config(); });
  other.join();
  EXPECT_EQ(seen, global);
  EXPECT_EQ(current_config().gpu.pipeline_depth, 1u);
}

}  // namespace
}  // namespace zarrkit
