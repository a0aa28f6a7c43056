// Replays the malicious-input corpus (tests/malicious/, made by make_cases.py): every case is
// a small store that is wrong in one way, and tests/malicious/manifest.json says what to do
// with it and which typed error must come out. Any other outcome fails: no error, another
// error class, an exception that is not a zarrkit::Error, and (under ASan/UBSan) a crash or
// sanitizer report.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrkit/array.h"
#include "zarrkit/error.h"
#include "zarrkit/group.h"
#include "zarrkit/stores/local_store.h"

namespace zarrkit {
namespace {

namespace fs = std::filesystem;

fs::path malicious_dir() { return fs::path(ZARRKIT_SOURCE_DIR) / "tests" / "malicious"; }

struct MaliciousCase {
  std::string id;      // unique; the test name
  std::string dir;     // directory under cases/
  std::string action;  // see make_cases.py
  ErrorCode expect = ErrorCode::kInternal;
  std::string why;
  std::string key;   // store_get
  std::string path;  // open_array_path
};

void PrintTo(const MaliciousCase& c, std::ostream* os) { *os << c.id << " (" << c.why << ")"; }

ErrorCode parse_code(const std::string& name) {
  static const std::map<std::string, ErrorCode> kCodes = {
      {"InvalidArgument", ErrorCode::kInvalidArgument},
      {"DataLoss", ErrorCode::kDataLoss},
      {"NotFound", ErrorCode::kNotFound},
      {"Unsupported", ErrorCode::kUnsupported},
      {"ResourceExhausted", ErrorCode::kResourceExhausted},
      {"Io", ErrorCode::kIo},
  };
  auto it = kCodes.find(name);
  if (it == kCodes.end()) throw std::runtime_error("manifest: unknown error code " + name);
  return it->second;
}

nlohmann::json load_manifest() {
  std::ifstream in(malicious_dir() / "manifest.json");
  if (!in) throw std::runtime_error("cannot read " + (malicious_dir() / "manifest.json").string());
  return nlohmann::json::parse(in);
}

std::vector<MaliciousCase> load_cases() {
  std::vector<MaliciousCase> cases;
  const nlohmann::json manifest = load_manifest();  // named: a temporary would die before the loop
  for (const auto& entry : manifest.at("cases")) {
    MaliciousCase c;
    c.id = entry.at("id").get<std::string>();
    c.dir = entry.at("case").get<std::string>();
    c.action = entry.at("action").get<std::string>();
    c.expect = parse_code(entry.at("expect").get<std::string>());
    c.why = entry.at("why").get<std::string>();
    c.key = entry.value("key", "");
    c.path = entry.value("path", "");
    cases.push_back(std::move(c));
  }
  return cases;
}

std::shared_ptr<LocalStore> case_store(const MaliciousCase& c) {
  LocalStoreOptions options;
  options.read_only = true;
  options.create = false;
  return LocalStore::open(malicious_dir() / "cases" / c.dir, options);
}

// Reads the whole array: variable-length (string, bytes) arrays through read_var.
void read_whole(const Array& array) {
  if (array.dtype().is_variable_length()) {
    (void)array.read_var();
  } else {
    (void)array.read();
  }
}

// Runs the case's action; it must throw. Which step is allowed to throw depends on the action.
void run_action(const MaliciousCase& c) {
  auto store = case_store(c);
  if (c.action == "open_array") {
    Array::open(store);
  } else if (c.action == "read_array") {
    // The metadata is valid: opening must work, so the error below really is the chunk's.
    std::optional<Array> array;
    try {
      array.emplace(Array::open(store));
    } catch (const Error& e) {
      ADD_FAILURE() << "opening should succeed (only the chunk is bad), but got "
                    << error_code_name(e.code()) << ": " << e.what();
      throw;
    }
    read_whole(*array);
  } else if (c.action == "open_or_read") {
    read_whole(Array::open(store));
  } else if (c.action == "open_group") {
    Group::open(store);
  } else if (c.action == "store_get") {
    (void)store->get(c.key);
  } else if (c.action == "open_array_path") {
    Array::open(store, c.path);
  } else {
    throw std::runtime_error("manifest: unknown action " + c.action);
  }
}

class MaliciousInput : public ::testing::TestWithParam<MaliciousCase> {};

TEST_P(MaliciousInput, FailsWithTheExpectedTypedError) {
  const MaliciousCase& c = GetParam();
  SCOPED_TRACE(c.why);
  try {
    run_action(c);
    ADD_FAILURE() << c.id << ": no error; expected " << error_code_name(c.expect) << " (" << c.why << ")";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), c.expect) << c.id << ": expected " << error_code_name(c.expect) << ", got "
                                  << error_code_name(e.code()) << ": " << e.what();
    EXPECT_FALSE(std::string(e.what()).empty()) << "errors must say what was wrong";
  } catch (const std::exception& e) {
    ADD_FAILURE() << c.id << ": an exception that is not a zarrkit::Error: " << e.what();
  }
}

std::string case_name(const ::testing::TestParamInfo<MaliciousCase>& info) {
  std::string out;
  for (char ch : info.param.id) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return out;
}

// Loaded while tests are registered: a broken manifest must fail a test, not abort the binary.
std::vector<MaliciousCase> registered_cases() {
  try {
    return load_cases();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "malicious_test: cannot load the manifest: %s\n", e.what());
    return {};  // ManifestAndDirectoriesAgree fails on it too
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, MaliciousInput, ::testing::ValuesIn(registered_cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(MaliciousInput);

// Every directory under cases/ is in the manifest (nothing added without an expected error),
// and every manifest entry has its directory.
TEST(MaliciousCorpus, ManifestAndDirectoriesAgree) {
  std::set<std::string> listed;
  for (const MaliciousCase& c : load_cases()) {
    listed.insert(c.dir);
    EXPECT_TRUE(fs::is_directory(malicious_dir() / "cases" / c.dir)) << c.dir;
  }
  std::set<std::string> present;
  for (const auto& entry : fs::directory_iterator(malicious_dir() / "cases"))
    if (entry.is_directory()) present.insert(entry.path().filename().string());
  EXPECT_EQ(listed, present);
  EXPECT_GE(listed.size(), 100u);
}

}  // namespace
}  // namespace zarrkit
