// Where S3 settings come from, as boto3 and the AWS CLI read them:
//
//   credentials  AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN); else the
//                profile's aws_access_key_id / aws_secret_access_key / aws_session_token in
//                the shared credentials file, then in the config file; else anonymous.
//                AWS_NO_SIGN_REQUEST=true (or YES/1) forces anonymous requests.
//   profile      AWS_PROFILE (else AWS_DEFAULT_PROFILE, else "default"). The credentials
//                file names it [name], the config file [profile name] ([default] for the
//                default profile).
//   files        AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials) and AWS_CONFIG_FILE
//                (default ~/.aws/config); "~" is $HOME.
//   region       AWS_REGION, AWS_DEFAULT_REGION, the profile's region, else us-east-1.
//   endpoint     AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's nested
//                "s3 =\n  endpoint_url = ...", the profile's endpoint_url; none of them when
//                AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true.
//   addressing   the profile's nested "s3 =\n  addressing_style = path|virtual|auto".
//
// Profiles that get credentials some other way (credential_process, SSO, role_arn, web
// identity) are refused with UnsupportedError rather than silently read as anonymous.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/settings_env.h"
#include "stores/remote/sigv4.h"

namespace zarrkit::remote {

// Sections of an AWS INI file: section name -> key -> value. A nested setting
// ("s3 =" followed by indented "endpoint_url = x") is stored under the key "s3.endpoint_url".
// Key names are lower case.
using IniSections = std::map<std::string, std::map<std::string, std::string>, std::less<>>;
IniSections parse_aws_ini(std::string_view text);

enum class AddressingStyle { kAuto, kPath, kVirtual };

struct AwsSettings {
  AwsCredentials credentials;   // empty access key: anonymous
  std::string credentials_source;  // "environment", "shared credentials file (profile x)", ... for messages
  std::string profile;
  std::string region;
  std::optional<std::string> endpoint_url;
  AddressingStyle addressing = AddressingStyle::kAuto;
};

// Reads an environment variable; nullopt when unset.
using EnvironmentLookup = zarrkit::EnvironmentLookup;
// Reads a whole file; nullopt when it does not exist.
using FileReader = std::function<std::optional<std::string>(const std::string& path)>;

AwsSettings resolve_aws_settings(const EnvironmentLookup& environment, const FileReader& read_file);
// The same, from this process's environment (read now, through environment_variable(): not
// zarrkit's settings, but boto3's, which a program may set before opening a store) and files.
AwsSettings resolve_aws_settings();

// true for "1", "true", "yes", "on" in any case.
bool truthy(std::string_view value);

}  // namespace zarrkit::remote
