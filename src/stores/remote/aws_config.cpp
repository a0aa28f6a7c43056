#include "stores/remote/aws_config.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "zarrkit/error.h"

namespace zarrkit::remote {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const std::string* find(const IniSections& sections, std::string_view section, std::string_view key) {
  auto s = sections.find(section);
  if (s == sections.end()) return nullptr;
  auto k = s->second.find(std::string(key));
  if (k == s->second.end() || k->second.empty()) return nullptr;
  return &k->second;
}

std::string expand_home(const std::string& path, const EnvironmentLookup& environment) {
  if (path == "~" || path.starts_with("~/")) {
    if (auto home = environment("HOME")) return *home + path.substr(1);
  }
  return path;
}

std::optional<std::string> non_empty(std::optional<std::string> value) {
  if (value && value->empty()) return std::nullopt;
  return value;
}

}  // namespace

bool truthy(std::string_view value) {
  const std::string v = lower(trim(value));
  return v == "1" || v == "true" || v == "yes" || v == "on";
}

IniSections parse_aws_ini(std::string_view text) {
  IniSections sections;
  std::string section;
  bool in_section = false;
  std::string nested_parent;  // the key of a "key =" line whose value is an indented block
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    const bool indented = !raw.empty() && (raw.front() == ' ' || raw.front() == '\t');
    std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      nested_parent.clear();
      const std::size_t close = line.find(']');
      in_section = close != std::string_view::npos;
      if (!in_section) continue;  // malformed header: ignore its settings, as botocore does
      section = std::string(trim(line.substr(1, close - 1)));
      sections[section];
      continue;
    }
    if (!in_section) continue;
    const std::size_t equals = line.find('=');
    if (equals == std::string_view::npos) continue;
    std::string key = lower(trim(line.substr(0, equals)));
    std::string value(trim(line.substr(equals + 1)));
    if (indented && !nested_parent.empty()) {
      sections[section][nested_parent + "." + key] = value;
      continue;
    }
    nested_parent = value.empty() ? key : std::string();
    sections[section][key] = value;
  }
  return sections;
}

AwsSettings resolve_aws_settings(const EnvironmentLookup& environment, const FileReader& read_file) {
  auto env = [&](const char* name) { return non_empty(environment(name)); };
  AwsSettings settings;
  settings.profile = env("AWS_PROFILE").value_or(env("AWS_DEFAULT_PROFILE").value_or("default"));

  const std::string credentials_path =
      expand_home(env("AWS_SHARED_CREDENTIALS_FILE").value_or("~/.aws/credentials"), environment);
  const std::string config_path = expand_home(env("AWS_CONFIG_FILE").value_or("~/.aws/config"), environment);
  const IniSections credentials_file = parse_aws_ini(read_file(credentials_path).value_or(""));
  const IniSections config_file = parse_aws_ini(read_file(config_path).value_or(""));
  const std::string config_section = settings.profile == "default" ? "default" : "profile " + settings.profile;
  auto config = [&](std::string_view key) { return find(config_file, config_section, key); };

  // Credentials.
  if (auto flag = env("AWS_NO_SIGN_REQUEST"); flag && truthy(*flag)) {
    settings.credentials_source = "anonymous (AWS_NO_SIGN_REQUEST)";
  } else if (auto id = env("AWS_ACCESS_KEY_ID"), secret = env("AWS_SECRET_ACCESS_KEY"); id && secret) {
    settings.credentials = {*id, *secret, env("AWS_SESSION_TOKEN").value_or(env("AWS_SECURITY_TOKEN").value_or(""))};
    settings.credentials_source = "environment";
  } else {
    bool found = false;
    for (const auto& [file, section, path] :
         {std::tuple{&credentials_file, settings.profile, credentials_path},
          std::tuple{&config_file, config_section, config_path}}) {
      const std::string* key_id = find(*file, section, "aws_access_key_id");
      const std::string* key = find(*file, section, "aws_secret_access_key");
      if (!key_id || !key) continue;
      const std::string* token = find(*file, section, "aws_session_token");
      settings.credentials = {*key_id, *key, token ? *token : ""};
      settings.credentials_source = fmt::format("{} (profile {})", path, settings.profile);
      found = true;
      break;
    }
    if (!found) {
      for (const char* other : {"credential_process", "sso_session", "sso_start_url", "role_arn",
                                "web_identity_token_file", "source_profile"}) {
        if (config(other) || find(credentials_file, settings.profile, other)) {
          fail_unsupported(
              "AWS profile \"{}\" gets its credentials through \"{}\", which zarrkit does not support; set "
              "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (for example from `aws configure export-credentials`)",
              settings.profile, other);
        }
      }
      const bool profile_named = env("AWS_PROFILE") || env("AWS_DEFAULT_PROFILE");
      if (profile_named && !credentials_file.contains(settings.profile) && !config_file.contains(config_section)) {
        fail_not_found("AWS profile \"{}\" is in neither {} nor {}", settings.profile, credentials_path, config_path);
      }
      settings.credentials_source = "anonymous (no credentials found)";
    }
  }

  // Region.
  if (auto region = env("AWS_REGION")) {
    settings.region = *region;
  } else if (auto default_region = env("AWS_DEFAULT_REGION")) {
    settings.region = *default_region;
  } else if (const std::string* configured = config("region")) {
    settings.region = *configured;
  } else {
    settings.region = "us-east-1";
  }

  // Endpoint.
  const bool ignore_endpoints = [&] {
    if (auto flag = env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) return truthy(*flag);
    const std::string* configured = config("ignore_configured_endpoint_urls");
    return configured && truthy(*configured);
  }();
  if (!ignore_endpoints) {
    if (auto url = env("AWS_ENDPOINT_URL_S3")) {
      settings.endpoint_url = *url;
    } else if (auto general = env("AWS_ENDPOINT_URL")) {
      settings.endpoint_url = *general;
    } else if (const std::string* nested = config("s3.endpoint_url")) {
      settings.endpoint_url = *nested;
    } else if (const std::string* profile_url = config("endpoint_url")) {
      settings.endpoint_url = *profile_url;
    }
  }

  if (const std::string* style = config("s3.addressing_style")) {
    const std::string s = lower(*style);
    if (s == "path") {
      settings.addressing = AddressingStyle::kPath;
    } else if (s == "virtual") {
      settings.addressing = AddressingStyle::kVirtual;
    } else if (s != "auto") {
      fail_invalid("AWS profile \"{}\": s3 addressing_style \"{}\" is not path, virtual or auto", settings.profile,
                   *style);
    }
  }
  return settings;
}

AwsSettings resolve_aws_settings() {
  return resolve_aws_settings(
      environment_variable,
      [](const std::string& path) -> std::optional<std::string> {
        std::ifstream in(path, std::ios::binary);
        if (!in) return std::nullopt;
        std::ostringstream text;
        text << in.rdbuf();
        return text.str();
      });
}

}  // namespace zarrkit::remote
