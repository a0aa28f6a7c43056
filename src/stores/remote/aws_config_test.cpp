#include "stores/remote/aws_config.h"

#include <gtest/gtest.h>

#include "zarrkit/error.h"

namespace zarrkit::remote {
namespace {

// A fake process: environment variables and files, nothing read from the real machine.
struct FakeSystem {
  std::map<std::string, std::string> env{{"HOME", "/home/u"}};
  std::map<std::string, std::string> files;

  AwsSettings resolve() const {
    return resolve_aws_settings(
        [this](const std::string& name) -> std::optional<std::string> {
          auto it = env.find(name);
          if (it == env.end()) return std::nullopt;
          return it->second;
        },
        [this](const std::string& path) -> std::optional<std::string> {
          auto it = files.find(path);
          if (it == files.end()) return std::nullopt;
          return it->second;
        });
  }
};

TEST(AwsIni, SectionsCommentsNestingAndWhitespace) {
  const IniSections ini = parse_aws_ini(
      "# comment\n"
      "ignored = before any section\n"
      "[default]\r\n"
      "aws_access_key_id = AKID \n"
      "  ; indented comment\n"
      "Region=eu-west-1\n"
      "s3 =\n"
      "  endpoint_url = http://127.0.0.1:9000\n"
      "  addressing_style = path\n"
      "output = json\n"
      "[ profile dev ]\n"
      "region = us-west-2\n"
      "[broken\n"
      "lost = yes\n");
  ASSERT_EQ(ini.size(), 2u);
  const auto& d = ini.at("default");
  EXPECT_EQ(d.at("aws_access_key_id"), "AKID");
  EXPECT_EQ(d.at("region"), "eu-west-1");  // key names are case-insensitive
  EXPECT_EQ(d.at("s3.endpoint_url"), "http://127.0.0.1:9000");
  EXPECT_EQ(d.at("s3.addressing_style"), "path");
  EXPECT_EQ(d.at("output"), "json");  // the nested block ended at the unindented line
  EXPECT_FALSE(d.contains("output.") || d.contains("s3.output"));
  EXPECT_EQ(ini.at("profile dev").at("region"), "us-west-2");
}

TEST(AwsSettings, NothingConfiguredIsAnonymousInUsEast1) {
  const AwsSettings s = FakeSystem{}.resolve();
  EXPECT_TRUE(s.credentials.anonymous());
  EXPECT_EQ(s.region, "us-east-1");
  EXPECT_EQ(s.profile, "default");
  EXPECT_FALSE(s.endpoint_url);
  EXPECT_EQ(s.addressing, AddressingStyle::kAuto);
}

TEST(AwsSettings, EnvironmentCredentialsWin) {
  FakeSystem sys;
  sys.env["AWS_ACCESS_KEY_ID"] = "ENVKEY";
  sys.env["AWS_SECRET_ACCESS_KEY"] = "envsecret";
  sys.env["AWS_SESSION_TOKEN"] = "token";
  sys.env["AWS_PROFILE"] = "dev";
  sys.files["/home/u/.aws/credentials"] = "[dev]\naws_access_key_id = FILEKEY\naws_secret_access_key = f\n";
  const AwsSettings s = sys.resolve();
  EXPECT_EQ(s.credentials.access_key_id, "ENVKEY");
  EXPECT_EQ(s.credentials.secret_access_key, "envsecret");
  EXPECT_EQ(s.credentials.session_token, "token");
  EXPECT_EQ(s.credentials_source, "environment");
  // Half a pair in the environment is not used.
  sys.env.erase("AWS_SECRET_ACCESS_KEY");
  EXPECT_EQ(sys.resolve().credentials.access_key_id, "FILEKEY");
}

TEST(AwsSettings, ProfilesFromBothFiles) {
  FakeSystem sys;
  sys.files["/home/u/.aws/credentials"] =
      "[default]\naws_access_key_id = DEF\naws_secret_access_key = defsecret\n"
      "[dev]\naws_access_key_id = DEV\naws_secret_access_key = devsecret\naws_session_token = devtoken\n";
  sys.files["/home/u/.aws/config"] =
      "[default]\nregion = eu-central-1\n"
      "[profile dev]\nregion = ap-south-1\ns3 =\n  addressing_style = virtual\n"
      "[profile cfg]\naws_access_key_id = CFG\naws_secret_access_key = cfgsecret\nendpoint_url = http://e:1\n";
  AwsSettings s = sys.resolve();
  EXPECT_EQ(s.credentials.access_key_id, "DEF");
  EXPECT_EQ(s.region, "eu-central-1");

  sys.env["AWS_PROFILE"] = "dev";
  s = sys.resolve();
  EXPECT_EQ(s.credentials.access_key_id, "DEV");
  EXPECT_EQ(s.credentials.session_token, "devtoken");
  EXPECT_EQ(s.region, "ap-south-1");
  EXPECT_EQ(s.addressing, AddressingStyle::kVirtual);
  EXPECT_EQ(s.credentials_source, "/home/u/.aws/credentials (profile dev)");

  sys.env["AWS_PROFILE"] = "cfg";  // keys in the config file are used too
  s = sys.resolve();
  EXPECT_EQ(s.credentials.access_key_id, "CFG");
  EXPECT_EQ(s.endpoint_url, "http://e:1");

  sys.env["AWS_PROFILE"] = "missing";
  EXPECT_THROW(sys.resolve(), NotFoundError);
}

TEST(AwsSettings, FileLocationsFromTheEnvironment) {
  FakeSystem sys;
  sys.env["AWS_SHARED_CREDENTIALS_FILE"] = "/etc/creds";
  sys.env["AWS_CONFIG_FILE"] = "~/cfg";
  sys.files["/etc/creds"] = "[default]\naws_access_key_id = K\naws_secret_access_key = S\n";
  sys.files["/home/u/cfg"] = "[default]\nregion = sa-east-1\n";
  const AwsSettings s = sys.resolve();
  EXPECT_EQ(s.credentials.access_key_id, "K");
  EXPECT_EQ(s.region, "sa-east-1");
}

TEST(AwsSettings, RegionPrecedence) {
  FakeSystem sys;
  sys.files["/home/u/.aws/config"] = "[default]\nregion = from-config\n";
  EXPECT_EQ(sys.resolve().region, "from-config");
  sys.env["AWS_DEFAULT_REGION"] = "from-default-region";
  EXPECT_EQ(sys.resolve().region, "from-default-region");
  sys.env["AWS_REGION"] = "from-region";
  EXPECT_EQ(sys.resolve().region, "from-region");
}

TEST(AwsSettings, EndpointPrecedenceAsBoto3) {
  FakeSystem sys;
  sys.files["/home/u/.aws/config"] = "[default]\nendpoint_url = http://profile\ns3 =\n  endpoint_url = http://nested\n";
  EXPECT_EQ(sys.resolve().endpoint_url, "http://nested");
  sys.env["AWS_ENDPOINT_URL"] = "http://general";
  EXPECT_EQ(sys.resolve().endpoint_url, "http://general");
  sys.env["AWS_ENDPOINT_URL_S3"] = "http://s3-only";
  EXPECT_EQ(sys.resolve().endpoint_url, "http://s3-only");
  sys.env["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"] = "true";
  EXPECT_FALSE(sys.resolve().endpoint_url);
}

TEST(AwsSettings, AnonymousOnRequestAndUnsupportedProviders) {
  FakeSystem sys;
  sys.env["AWS_ACCESS_KEY_ID"] = "K";
  sys.env["AWS_SECRET_ACCESS_KEY"] = "S";
  sys.env["AWS_NO_SIGN_REQUEST"] = "YES";
  EXPECT_TRUE(sys.resolve().credentials.anonymous());

  FakeSystem sso;
  sso.files["/home/u/.aws/config"] = "[default]\ncredential_process = /bin/get-creds\n";
  EXPECT_THROW(sso.resolve(), UnsupportedError);

  FakeSystem bad_style;
  bad_style.files["/home/u/.aws/config"] = "[default]\ns3 =\n  addressing_style = sideways\n";
  EXPECT_THROW(bad_style.resolve(), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit::remote
