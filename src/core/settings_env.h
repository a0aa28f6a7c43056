// The settings code's side of the process environment: the only place in zarrkit that
// reads environment variables.
//
// zarrkit's own knobs (ZARRKIT_*) are read once, into environment_config() (the defaults
// global_config() starts from). Everything else that comes from the environment (the
// AWS_* variables and the AWS files they point to, which belong to S3 credential
// resolution, and the variables tests read) goes through environment_variable(), which
// reads the live environment: credentials are resolved when a store is opened, as boto3
// resolves them for each session, so that a program may set them before opening one.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "zarrkit/config.h"

namespace zarrkit {

// Reads one environment variable: nullopt when it is unset. The functions below take one
// of these so that tests give them an environment of their own.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The most worker threads Config::num_threads may ask for (ZARRKIT_NUM_THREADS, the CLI's
// --threads, zarrkit.config's num_threads): more would size a pool by a typo, not a machine.
inline constexpr std::size_t kMaxNumThreads = 4096;

// This process's environment, now.
std::optional<std::string> environment_variable(const std::string& name);

// The defaults with every ZARRKIT_* variable of `environment` applied (an empty value
// counts as unset). InvalidArgumentError naming the variable and its value for a malformed
// one. docs/settings.md lists the variables.
Config config_from_environment(const EnvironmentLookup& environment);

namespace detail {
// "auto", "cufile" or "compat" (any case) as a GdsMode; InvalidArgumentError naming
// `where` (the variable or option it came from) otherwise.
GdsMode parse_gds_mode(std::string_view text, std::string_view where);
std::string_view gds_mode_name(GdsMode mode);
// "auto", or a boolean as the variables take them (1, true, yes, on; 0, false, no, off; any
// case) as a KernelUse; InvalidArgumentError naming `where` otherwise.
KernelUse parse_kernel_use(std::string_view text, std::string_view where);
std::string_view kernel_use_name(KernelUse use);  // "off", "auto" or "on"
}  // namespace detail

}  // namespace zarrkit
