#include "zarrkit/app.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <new>
#include <vector>

#include <CLI/CLI.hpp>

#include "zarrkit/error.h"
#include "zarrkit/npy.h"

namespace zarrkit::cli {
namespace {

namespace fs = std::filesystem;

template <typename E>
ErrorReport report_of(E error) {
  return report_error(std::make_exception_ptr(std::move(error)));
}

TEST(ExitCodes, MapErrorsToCodes) {
  EXPECT_EQ(report_of(CLI::ValidationError("--zarr-format", "4 not in {2,3}")).exit_code, kExitUsage);
  EXPECT_EQ(report_of(CLI::ExtrasError({"--bogus"})).exit_code, kExitUsage);
  EXPECT_EQ(report_of(UsageError("--select 1:2:0: zero step")).exit_code, kExitUsage);
  EXPECT_EQ(report_of(DataLossError("chunk c/0/0 of 'a': bad zstd frame")).exit_code, kExitFailure);
  EXPECT_EQ(report_of(NotFoundError("no such array")).exit_code, kExitFailure);
  EXPECT_EQ(report_of(InvalidArgumentError("bad metadata")).exit_code, kExitFailure);
  EXPECT_EQ(report_of(IoError("disk full")).exit_code, kExitFailure);
  EXPECT_EQ(report_of(std::bad_alloc()).exit_code, kExitFailure);
  EXPECT_EQ(report_of(std::bad_alloc()).message, "out of memory");
  EXPECT_EQ(report_of(DataLossError("chunk c/1 truncated")).message, "chunk c/1 truncated");
}

TEST(ExitCodes, UsageGuardTurnsOnlyInvalidArgumentIntoUsage) {
  try {
    as_usage_error("--select x", [] { fail_invalid("bad token"); });
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--select x: bad token");
  }
  EXPECT_THROW(as_usage_error("--select x", [] { fail_data_loss("corrupt"); }), DataLossError);
  EXPECT_NO_THROW(as_usage_error("--select x", [] {}));
}

struct RunResult {
  int code;
  std::string err;
};

RunResult run_args(std::vector<std::string> args) {
  args.insert(args.begin(), "zarrkit");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  int code = run(static_cast<int>(argv.size()), argv.data());
  ::testing::internal::GetCapturedStdout();
  return {code, ::testing::internal::GetCapturedStderr()};
}

class RunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("zarrkit_app_test_{}", ::getpid());
    fs::create_directories(dir_);
    NDBuffer data = NDBuffer::allocate({4, 3}, DataType::int_(32));
    std::fill(data.data(), data.data() + data.nbytes(), std::byte{1});
    npy_ = (dir_ / "in.npy").string();
    write_npy(npy_, data);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string npy_;
};

TEST_F(RunTest, BadFlagsAreUsageErrors) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {},
           {"bogus"},
           {"info"},
           {"info", "x", "--bogus"},
           {"import", "in.npy", "out.zarr", "--zarr-format", "4"},
           {"import", "in.npy", "out.zarr", "--order", "X"},
           {"import", "in.npy", "out.zarr", "--separator", "-"},
       }) {
    SCOPED_TRACE(::testing::PrintToString(args));
    RunResult r = run_args(args);
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_EQ(r.err.rfind("zarrkit: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_EQ(run_args({"--help"}).code, kExitOk);
}

TEST_F(RunTest, BadOptionValuesAreUsageErrorsBeforeAnythingIsWritten) {
  const std::string out = (dir_ / "out.zarr").string();
  for (const auto& extra : std::vector<std::vector<std::string>>{
           {"--codec", "snappy"},
           {"--codec", "zstd:level=99"},
           {"--zarr-format", "2", "--codec", "crc32c"},
           {"--zarr-format", "2", "--codec", "zstd", "--codec", "gzip"},
           {"--chunks", "2,0"},
           {"--chunks", "2,2,2"},
           {"--chunks", "a,b"},
           {"--dimension-names", "x"},
           {"--fill-value", "{"},
           {"--fill-value", "\"text\""},
       }) {
    std::vector<std::string> args = {"import", npy_, out};
    args.insert(args.end(), extra.begin(), extra.end());
    SCOPED_TRACE(::testing::PrintToString(args));
    RunResult r = run_args(args);
    EXPECT_EQ(r.code, kExitUsage) << r.err;
    EXPECT_EQ(r.err.rfind("zarrkit: error: ", 0), 0u) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
}

TEST_F(RunTest, BadSelectIsAUsageError) {
  for (const char* select : {"1:2:0", "a", "1,,2", "...,..."}) {
    SCOPED_TRACE(select);
    RunResult r = run_args({"export", (dir_ / "missing.zarr").string(), (dir_ / "o.npy").string(), "--select", select});
    EXPECT_EQ(r.code, kExitUsage) << r.err;
    EXPECT_NE(r.err.find("--select"), std::string::npos) << r.err;
  }
}

TEST_F(RunTest, ImportExportRoundTripAndErrors) {
  const std::string out = (dir_ / "a.zarr").string();
  ASSERT_EQ(run_args({"import", npy_, out, "--chunks", "2,2"}).code, kExitOk);
  ASSERT_EQ(run_args({"export", out, (dir_ / "back.npy").string(), "--select", "1:3"}).code, kExitOk);
  NpyReader back(dir_ / "back.npy");
  EXPECT_EQ(back.shape(), (Shape{2, 3}));
  // Exists already: a data error, not a usage error.
  EXPECT_EQ(run_args({"import", npy_, out}).code, kExitFailure);
  EXPECT_EQ(run_args({"import", npy_, out, "--overwrite"}).code, kExitOk);
  // An index past the end is a bad --select.
  EXPECT_EQ(run_args({"export", out, (dir_ / "x.npy").string(), "--select", "7"}).code, kExitUsage);
  RunResult missing = run_args({"info", (dir_ / "nothing.zarr").string()});
  EXPECT_EQ(missing.code, kExitFailure);
  EXPECT_NE(missing.err.find("nothing.zarr"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace zarrkit::cli
