// Every ZARRKIT_* variable: read into its setting, and a malformed value is an error naming
// the variable.
#include "core/settings_env.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "zarrkit/error.h"

namespace zarrkit {
namespace {

using std::chrono::milliseconds;

EnvironmentLookup environment(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const std::string& name) -> std::optional<std::string> {
    auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

Config from(std::map<std::string, std::string> variables) { return config_from_environment(environment(std::move(variables))); }

TEST(SettingsEnvironment, NoVariablesGiveTheDefaults) {
  EXPECT_EQ(from({}), Config{});
  // Empty values count as unset, as a shell's `VAR=` does.
  EXPECT_EQ(from({{"ZARRKIT_HTTP_CONCURRENCY", ""}, {"ZARRKIT_GDS_MODE", ""}, {"ZARRKIT_NVCOMP_DECODE", ""}}), Config{});
}

struct Valid {
  const char* name;
  const char* value;
  std::function<bool(const Config&)> holds;
};

TEST(SettingsEnvironment, EachVariableSetsItsSetting) {
  const std::vector<Valid> cases = {
      {"ZARRKIT_NUM_THREADS", "6", [](const Config& c) { return c.num_threads == 6; }},
      {"ZARRKIT_DURABLE_WRITES", "1", [](const Config& c) { return c.durable_writes; }},
      {"ZARRKIT_DURABLE_WRITES", "off", [](const Config& c) { return !c.durable_writes; }},
      {"ZARRKIT_MAX_CHUNK_BYTES", "4M", [](const Config& c) { return c.max_chunk_bytes == (4u << 20); }},
      {"ZARRKIT_MAX_REQUEST_BYTES", "4096", [](const Config& c) { return c.max_request_bytes == 4096; }},
      {"ZARRKIT_HTTP_CONCURRENCY", "8", [](const Config& c) { return c.remote.concurrency == 8; }},
      {"ZARRKIT_HTTP_CONCURRENCY", "0", [](const Config& c) { return c.remote.concurrency == 1; }},
      {"ZARRKIT_HTTP_THREADS", "3", [](const Config& c) { return c.remote.event_loops == 3; }},
      {"ZARRKIT_HTTP_THREADS", "1000", [](const Config& c) { return c.remote.event_loops == 64; }},
      {"ZARRKIT_HTTP_CONNECT_TIMEOUT_MS", "250", [](const Config& c) { return c.remote.connect_timeout == milliseconds(250); }},
      {"ZARRKIT_HTTP_STALL_TIMEOUT_MS", "3000", [](const Config& c) { return c.remote.stall_timeout == milliseconds(3000); }},
      {"ZARRKIT_HTTP_REQUEST_TIMEOUT_MS", "9", [](const Config& c) { return c.remote.request_timeout == milliseconds(9); }},
      {"ZARRKIT_HTTP_MAX_ATTEMPTS", "3", [](const Config& c) { return c.remote.max_attempts == 3; }},
      {"ZARRKIT_HTTP_MAX_ATTEMPTS", "0", [](const Config& c) { return c.remote.max_attempts == 1; }},
      {"ZARRKIT_HTTP_MAX_ATTEMPTS", "5000", [](const Config& c) { return c.remote.max_attempts == 100; }},
      {"ZARRKIT_HTTP_RETRY_INITIAL_MS", "10", [](const Config& c) { return c.remote.retry_initial_delay == milliseconds(10); }},
      {"ZARRKIT_HTTP_RETRY_MAX_MS", "200", [](const Config& c) { return c.remote.retry_max_delay == milliseconds(200); }},
      {"ZARRKIT_HTTP_RETRY_TOTAL_MS", "1000", [](const Config& c) { return c.remote.retry_total == milliseconds(1000); }},
      {"ZARRKIT_HTTP_VERIFY_TLS", "0", [](const Config& c) { return !c.remote.verify_tls; }},
      {"ZARRKIT_HTTP_VERIFY_TLS", "Off", [](const Config& c) { return !c.remote.verify_tls; }},
      {"ZARRKIT_HTTP_VERIFY_TLS", "yes", [](const Config& c) { return c.remote.verify_tls; }},
      {"ZARRKIT_CA_BUNDLE", "/etc/ca.pem", [](const Config& c) { return c.remote.ca_bundle == "/etc/ca.pem"; }},
      {"AWS_CA_BUNDLE", "/aws/ca.pem", [](const Config& c) { return c.remote.ca_bundle == "/aws/ca.pem"; }},
      {"CURL_CA_BUNDLE", "/curl/ca.pem", [](const Config& c) { return c.remote.ca_bundle == "/curl/ca.pem"; }},
      {"ZARRKIT_S3_MULTIPART_THRESHOLD", "6291456",
       [](const Config& c) { return c.remote.s3_multipart_threshold_bytes == (6u << 20); }},
      {"ZARRKIT_S3_PART_SIZE", "5242880", [](const Config& c) { return c.remote.s3_part_size_bytes == (5u << 20); }},
      {"ZARRKIT_GPU_BATCH_BYTES", "64M", [](const Config& c) { return c.gpu.batch_budget_bytes == (64u << 20); }},
      {"ZARRKIT_GPU_BATCH_BYTES", "4096", [](const Config& c) { return c.gpu.batch_budget_bytes == 4096; }},
      {"ZARRKIT_GPU_PIPELINE_DEPTH", "2", [](const Config& c) { return c.gpu.pipeline_depth == 2; }},
      {"ZARRKIT_GPU_DEVICES_SHARING_HOST", "4", [](const Config& c) { return c.gpu.devices_sharing_host == 4; }},
      {"ZARRKIT_GPU_DEVICES_SHARING_HOST", "0", [](const Config& c) { return c.gpu.devices_sharing_host == 1; }},
      {"ZARRKIT_GPU_PIPELINE_DEPTH", "0", [](const Config& c) { return c.gpu.pipeline_depth == 1; }},
      {"ZARRKIT_GPU_PIPELINE_DEPTH", "99", [](const Config& c) { return c.gpu.pipeline_depth == 8; }},
      {"ZARRKIT_NVCOMP_DECODE", "1", [](const Config& c) { return c.gpu.nvcomp_decode; }},
      {"ZARRKIT_NVCOMP_DECODE", "TRUE", [](const Config& c) { return c.gpu.nvcomp_decode; }},
      {"ZARRKIT_NVCOMP_DECODE", "0", [](const Config& c) { return !c.gpu.nvcomp_decode; }},
      {"ZARRKIT_NVCOMP_MIN_CHUNKS", "16", [](const Config& c) { return c.gpu.nvcomp_min_chunks == 16; }},
      {"ZARRKIT_NVCOMP_MIN_CHUNKS", "0", [](const Config& c) { return c.gpu.nvcomp_min_chunks == 1; }},
      {"ZARRKIT_ZSTD_KERNELS", "1", [](const Config& c) { return c.gpu.zstd_kernels == KernelUse::kOn; }},
      {"ZARRKIT_ZSTD_KERNELS", "off", [](const Config& c) { return c.gpu.zstd_kernels == KernelUse::kOff; }},
      {"ZARRKIT_ZSTD_KERNELS", "Auto", [](const Config& c) { return c.gpu.zstd_kernels == KernelUse::kAuto; }},
      {"ZARRKIT_DEFLATE_KERNELS", "1", [](const Config& c) { return c.gpu.deflate_kernels == KernelUse::kOn; }},
      {"ZARRKIT_DEFLATE_KERNELS", "off", [](const Config& c) { return c.gpu.deflate_kernels == KernelUse::kOff; }},
      {"ZARRKIT_GDS_DIRECT", "0", [](const Config& c) { return !c.gpu.gds_direct; }},
      {"ZARRKIT_GDS_DIRECT", "no", [](const Config& c) { return !c.gpu.gds_direct; }},
      {"ZARRKIT_GDS_MODE", "compat", [](const Config& c) { return c.gpu.gds_mode == GdsMode::kCompat; }},
      {"ZARRKIT_GDS_MODE", "CUFILE", [](const Config& c) { return c.gpu.gds_mode == GdsMode::kCufile; }},
      {"ZARRKIT_GDS_THREADS", "3", [](const Config& c) { return c.gpu.gds_threads == 3; }},
      {"ZARRKIT_GDS_THREADS", "1000", [](const Config& c) { return c.gpu.gds_threads == 256; }},
      {"ZARRKIT_GDS_PIECE_BYTES", "2M", [](const Config& c) { return c.gpu.gds_piece_bytes == (2u << 20); }},
      {"ZARRKIT_GDS_PIECE_BYTES", "512k", [](const Config& c) { return c.gpu.gds_piece_bytes == (512u << 10); }},
      {"ZARRKIT_GPU_BATCH_BYTES", "1G", [](const Config& c) { return c.gpu.batch_budget_bytes == (1u << 30); }},
      {"ZARRKIT_CUFILE_LIBRARY", "/opt/libcufile.so", [](const Config& c) { return c.gpu.cufile_library == "/opt/libcufile.so"; }},
      {"ZARRKIT_NVCOMP_LIBRARY", "/opt/libnvcomp.so", [](const Config& c) { return c.gpu.nvcomp_library == "/opt/libnvcomp.so"; }},
      {"ZARRKIT_CACHE_BYTES", "512M", [](const Config& c) { return c.cache.host_bytes == (512u << 20); }},
      {"ZARRKIT_CACHE_BYTES", "4G", [](const Config& c) { return c.cache.host_bytes == (std::uint64_t{4} << 30); }},
      {"ZARRKIT_CACHE_BYTES", "0", [](const Config& c) { return c.cache.host_bytes == 0; }},
      {"ZARRKIT_CACHE_ARRAY_BYTES", "64k", [](const Config& c) { return c.cache.array_bytes == (64u << 10); }},
      {"ZARRKIT_CACHE_DEVICE_BYTES", "1000", [](const Config& c) { return c.cache.device_bytes == 1000; }},
  };
  for (const Valid& v : cases) {
    const Config c = from({{v.name, v.value}});
    EXPECT_TRUE(v.holds(c)) << v.name << "=" << v.value;
  }
}

TEST(SettingsEnvironment, OneVariableChangesOnlyItsSetting) {
  Config expected;
  expected.remote.stall_timeout = milliseconds(1000);
  EXPECT_EQ(from({{"ZARRKIT_HTTP_STALL_TIMEOUT_MS", "1000"}}), expected);
  expected = Config{};
  expected.gpu.nvcomp_decode = true;
  EXPECT_EQ(from({{"ZARRKIT_NVCOMP_DECODE", "1"}}), expected);
  expected = Config{};
  expected.gpu.zstd_kernels = KernelUse::kOn;
  EXPECT_EQ(from({{"ZARRKIT_ZSTD_KERNELS", "yes"}}), expected);
}

TEST(SettingsEnvironment, ZarrkitsCaBundleComesFirstThenBoto3sThenCurls) {
  EXPECT_EQ(from({{"ZARRKIT_CA_BUNDLE", "/z"}, {"AWS_CA_BUNDLE", "/a"}, {"CURL_CA_BUNDLE", "/c"}}).remote.ca_bundle, "/z");
  EXPECT_EQ(from({{"AWS_CA_BUNDLE", "/a"}, {"CURL_CA_BUNDLE", "/c"}}).remote.ca_bundle, "/a");
  EXPECT_EQ(from({{"ZARRKIT_CA_BUNDLE", ""}, {"CURL_CA_BUNDLE", "/c"}}).remote.ca_bundle, "/c");
}

TEST(SettingsEnvironment, AMalformedValueIsAnErrorNamingTheVariable) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"ZARRKIT_NUM_THREADS", "many"},
      {"ZARRKIT_NUM_THREADS", "4097"},  // more than kMaxNumThreads
      {"ZARRKIT_DURABLE_WRITES", "sometimes"},
      {"ZARRKIT_HTTP_CONCURRENCY", "-4"},
      {"ZARRKIT_HTTP_CONCURRENCY", "abc"},
      {"ZARRKIT_HTTP_THREADS", "2.5"},
      {"ZARRKIT_HTTP_CONNECT_TIMEOUT_MS", "10s"},
      {"ZARRKIT_HTTP_STALL_TIMEOUT_MS", " 30"},
      {"ZARRKIT_HTTP_REQUEST_TIMEOUT_MS", "-1"},
      {"ZARRKIT_HTTP_MAX_ATTEMPTS", "x"},
      {"ZARRKIT_HTTP_RETRY_INITIAL_MS", "1e3"},
      {"ZARRKIT_HTTP_RETRY_MAX_MS", "99999999999999999999999"},
      {"ZARRKIT_HTTP_RETRY_TOTAL_MS", "one"},
      {"ZARRKIT_HTTP_VERIFY_TLS", "maybe"},
      {"ZARRKIT_S3_MULTIPART_THRESHOLD", "64M"},
      {"ZARRKIT_S3_PART_SIZE", "-5"},
      {"ZARRKIT_GPU_BATCH_BYTES", "0"},
      {"ZARRKIT_GPU_BATCH_BYTES", "4T"},
      {"ZARRKIT_GPU_PIPELINE_DEPTH", "deep"},
      {"ZARRKIT_NVCOMP_DECODE", "2"},
      {"ZARRKIT_NVCOMP_MIN_CHUNKS", "-1"},
      {"ZARRKIT_GDS_DIRECT", "direct"},
      {"ZARRKIT_GDS_MODE", "posix"},
      {"ZARRKIT_GDS_THREADS", "0"},
      {"ZARRKIT_GDS_PIECE_BYTES", "-1"},
      {"ZARRKIT_GDS_PIECE_BYTES", "4x"},
      {"ZARRKIT_CACHE_BYTES", "-1"},
      {"ZARRKIT_CACHE_BYTES", "1T"},
      {"ZARRKIT_CACHE_BYTES", "M"},
      {"ZARRKIT_CACHE_ARRAY_BYTES", "lots"},
      {"ZARRKIT_CACHE_DEVICE_BYTES", "99999999999G"},
  };
  for (const auto& [name, value] : cases) {
    try {
      from({{name, value}});
      ADD_FAILURE() << name << "=" << value << " was accepted";
    } catch (const InvalidArgumentError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(name), std::string::npos) << message;
      EXPECT_NE(message.find(std::string("\"") + value + "\""), std::string::npos) << message;
    }
  }
}

TEST(SettingsEnvironment, GdsModesByName) {
  EXPECT_EQ(detail::parse_gds_mode("auto", "x"), GdsMode::kAuto);
  EXPECT_EQ(detail::parse_gds_mode("Compat", "x"), GdsMode::kCompat);
  EXPECT_EQ(detail::gds_mode_name(GdsMode::kCufile), "cufile");
  EXPECT_THROW(detail::parse_gds_mode("posix", "GdsOptions::mode"), InvalidArgumentError);
}

TEST(SettingsEnvironment, KernelUsesByNameOrBoolean) {
  EXPECT_EQ(detail::parse_kernel_use("auto", "x"), KernelUse::kAuto);
  EXPECT_EQ(detail::parse_kernel_use("ON", "x"), KernelUse::kOn);
  EXPECT_EQ(detail::parse_kernel_use("true", "x"), KernelUse::kOn);
  EXPECT_EQ(detail::parse_kernel_use("0", "x"), KernelUse::kOff);
  EXPECT_EQ(detail::kernel_use_name(KernelUse::kAuto), "auto");
  EXPECT_EQ(detail::kernel_use_name(KernelUse::kOff), "off");
  EXPECT_THROW(detail::parse_kernel_use("sometimes", "ZARRKIT_ZSTD_KERNELS"), InvalidArgumentError);
}

TEST(SettingsEnvironment, TheProcessEnvironmentIsReadThroughOneAccessor) {
  ::setenv("ZARRKIT_SETTINGS_TEST_VARIABLE", "seen", 1);
  EXPECT_EQ(environment_variable("ZARRKIT_SETTINGS_TEST_VARIABLE"), "seen");
  ::unsetenv("ZARRKIT_SETTINGS_TEST_VARIABLE");
  EXPECT_EQ(environment_variable("ZARRKIT_SETTINGS_TEST_VARIABLE"), std::nullopt);
}

TEST(SettingsEnvironment, ResourceLimitsDefaultToAShareOfTheMachine) {
  const Config c;
  EXPECT_LE(c.max_chunk_bytes, std::uint64_t{2} << 30);
  EXPECT_LE(c.max_request_bytes, std::uint64_t{8} << 30);
  EXPECT_GE(c.max_chunk_bytes, std::uint64_t{64} << 20);
  EXPECT_GE(c.max_request_bytes, c.max_chunk_bytes);
  if (usable_memory_bytes() >= (std::uint64_t{1} << 30)) {
    EXPECT_LE(c.max_chunk_bytes, usable_memory_bytes() / 8);
    EXPECT_LE(c.max_request_bytes, usable_memory_bytes() / 4);
  }
}

}  // namespace
}  // namespace zarrkit
