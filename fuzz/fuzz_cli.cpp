// Fuzz target: the command line. The input is the argument list (split at NUL bytes), parsed
// and run by the CLI's own entry point (zarrkit::cli::run: CLI11's parsing, every command's
// options, --select, --codec, --chunks, --fill-value, ..., then the command itself) in a
// scratch directory holding a few small stores: a v3 array (a.zarr), a consolidated v3 group
// with a plain and a sharded member (g.zarr), a v2 group with a v2 member (h.zarr/x), a zip
// archive (t.zip) and an .npy file (x.npy). The directory is restored before every input.
//
// Nothing outside the scratch directory may be touched: inputs with an argument that is an
// absolute path, goes up (".."), starts with "~", names a URL scheme ("s3:", "http:", "gds:",
// "file:", ...), holds a number of more than four digits (a shape or chunk count that would
// size the work by the machine, not by the input), or asks for more than 8 threads (each size
// asked for starts a pool the process keeps) are skipped. The CLI's output goes
// nowhere; its exit code must be 0, 1 or 2, and no exception may escape it.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <sstream>

#include "fuzz_target.h"
#include "zarrkit/app.h"
#include "zarrkit/config.h"
#include "zarrkit/npy.h"

namespace zarrkit::fuzz {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxArguments = 24;

std::vector<std::string> split_arguments(std::string_view input) {
  std::vector<std::string> out;
  while (out.size() < kMaxArguments) {
    const std::size_t end = input.find('\0');
    out.emplace_back(input.substr(0, end));
    if (end == std::string_view::npos) break;
    input.remove_prefix(end + 1);
  }
  return out;
}

// True when `argument` stays inside the working directory and sizes nothing by the machine.
bool harmless(const std::string& argument) {
  if (argument.find("..") != std::string::npos || argument.find('~') != std::string::npos) return false;
  std::size_t digits = 0;
  for (std::size_t i = 0; i < argument.size(); ++i) {
    const char c = argument[i];
    // A path starts at the beginning, after '=' (--option=value) or after ',' (lists).
    if (c == '/' && (i == 0 || argument[i - 1] == '=' || argument[i - 1] == ',')) return false;
    digits = std::isdigit(static_cast<unsigned char>(c)) ? digits + 1 : 0;
    if (digits > 4) return false;
  }
  // A URL scheme ("s3:", "file:", ...): letters, digits, '+', '-', '.' then ':'. Options
  // ("--codec=zstd:level=3") and the value after --codec are not locations.
  if (argument.starts_with("-")) return true;
  const std::size_t colon = argument.find(':');
  if (colon == std::string::npos || colon == 0 || !std::isalpha(static_cast<unsigned char>(argument[0]))) return true;
  for (std::size_t i = 0; i < colon; ++i) {
    const char c = argument[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return true;
  }
  return false;
}

// False when --threads asks for more than a few threads: every size asked for starts a pool
// the process keeps, and thousands of inputs would start thousands of threads.
bool few_threads(const std::vector<std::string>& arguments) {
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    std::string_view value;
    if (arguments[i] == "--threads" && i + 1 < arguments.size()) {
      value = arguments[i + 1];
    } else if (arguments[i].starts_with("--threads=")) {
      value = std::string_view(arguments[i]).substr(10);
    } else {
      continue;
    }
    const bool number = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (number && (value.size() > 1 || value[0] > '8')) return false;
  }
  return true;
}

int run_cli(const std::vector<std::string>& arguments) {
  std::vector<const char*> argv{"zarrkit"};
  for (const std::string& a : arguments) argv.push_back(a.c_str());
  return cli::run(static_cast<int>(argv.size()), argv.data());
}

// The scratch directory: a pristine copy of the stores and the working copy commands run in.
class Sandbox {
 public:
  Sandbox() {
    root_ = fs::temp_directory_path() / ("zarrkit-fuzz-cli-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "pristine");
    const fs::path previous = fs::current_path();
    fs::current_path(root_ / "pristine");
    NDBuffer values = NDBuffer::allocate({6, 8}, DataType::int_(32));
    std::iota(reinterpret_cast<std::int32_t*>(values.data()), reinterpret_cast<std::int32_t*>(values.data()) + 48, -5);
    cli::write_npy("x.npy", values);
    fs::create_directories("g.zarr");
    std::ofstream("g.zarr/zarr.json") << R"({"zarr_format": 3, "node_type": "group", "attributes": {"a": 1}})";
    fs::create_directories("h.zarr");
    std::ofstream("h.zarr/.zgroup") << R"({"zarr_format": 2})";
    const std::vector<std::vector<std::string>> setup = {
        {"import", "x.npy", "a.zarr", "--chunks", "3,4", "--fill-value", "7"},
        {"import", "x.npy", "g.zarr/plain", "--chunks", "6,3", "--codec", "gzip"},
        {"import", "x.npy", "g.zarr/sharded", "--chunks", "2,2", "--shards", "6,4", "--dimension-names", "y,x"},
        {"import", "x.npy", "h.zarr/x", "--zarr-format", "2", "--chunks", "2,8", "--codec", "zlib"},
        {"cp", "a.zarr", "t.zip"},
        {"consolidate", "g.zarr"},
    };
    for (const auto& command : setup) {
      if (run_cli(command) != 0) {
        std::fprintf(stderr, "fuzz_cli: setting up the scratch stores failed\n");
        std::abort();
      }
    }
    fs::current_path(previous);
    global_config() = environment_config();
  }
  ~Sandbox() {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  // A fresh working copy, made the working directory until `leave`.
  void enter() {
    previous_ = fs::current_path();
    std::error_code ec;
    fs::remove_all(root_ / "work", ec);
    fs::copy(root_ / "pristine", root_ / "work", fs::copy_options::recursive);
    fs::current_path(root_ / "work");
  }
  void leave() { fs::current_path(previous_); }

 private:
  fs::path root_;
  fs::path previous_;
};

Sandbox& sandbox() {
  static Sandbox s;
  return s;
}

std::string joined(std::initializer_list<const char*> arguments) {
  std::string out;
  for (const char* a : arguments) out += (out.empty() ? "" : std::string(1, '\0')) + a;
  return out;
}

}  // namespace

std::vector<std::string> seeds() {
  return {
      joined({"info", "a.zarr"}),
      joined({"info", "g.zarr", "--json"}),
      joined({"info", "t.zip"}),
      joined({"export", "a.zarr", "out.npy", "--select", "1:5,::2"}),
      joined({"export", "g.zarr/sharded", "out.npy", "--select", "...,-1"}),
      joined({"export", "h.zarr/x", "out.npy", "--select", "[0, 3:1:-1]"}),
      joined({"import", "x.npy", "n.zarr", "--chunks", "4", "--codec", "blosc:cname=lz4,clevel=5,shuffle=bitshuffle"}),
      joined({"import", "x.npy", "a.zarr", "--overwrite", "--zarr-format", "2", "--order", "F", "--separator", "/"}),
      joined({"import", "x.npy", "n.zip", "--fill-value", "\"NaN\"", "--codec", "gzip:level=1", "--codec", "crc32c"}),
      joined({"cp", "g.zarr", "c.zarr", "--zarr-format", "3", "--chunks", "3,3", "--consolidate", "--durable"}),
      joined({"cp", "t.zip", "h.zarr/x", "--overwrite", "--write-empty-chunks", "--threads", "3"}),
      joined({"resize", "a.zarr", "9,2"}),
      joined({"append", "a.zarr", "x.npy", "--axis", "1"}),
      joined({"consolidate", "g.zarr", "--durable"}),
      joined({"migrate", "v3", "h.zarr", "--dry-run"}),
      joined({"--threads", "2", "cp", "a.zarr", "b.zarr", "--shards", "6,8", "--chunks", "3,4"}),
      joined({"import", "--help"}),
  };
}

}  // namespace zarrkit::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zarrkit;
  const auto arguments = fuzz::split_arguments(std::string_view(reinterpret_cast<const char*>(data), size));
  for (const std::string& a : arguments) {
    if (!fuzz::harmless(a)) return 0;
  }
  if (!fuzz::few_threads(arguments)) return 0;
  // The CLI's output (std::cout and stdio) and its error lines (std::cerr) go nowhere, the
  // setting up of the scratch stores' included; sanitizer reports still reach stderr.
  static const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  std::fflush(stdout);
  const int saved_stdout = ::dup(STDOUT_FILENO);
  ::dup2(null_fd, STDOUT_FILENO);
  std::ostringstream discarded;
  std::streambuf* err = std::cerr.rdbuf(discarded.rdbuf());
  fuzz::Sandbox& sandbox = fuzz::sandbox();
  sandbox.enter();
  const int code = fuzz::run_cli(arguments);
  std::cout.flush();
  std::fflush(stdout);
  std::cerr.rdbuf(err);
  ::dup2(saved_stdout, STDOUT_FILENO);
  ::close(saved_stdout);
  sandbox.leave();
  global_config() = environment_config();  // --threads, --durable, write_empty_chunks
  if (code < 0 || code > 2) {
    std::fprintf(stderr, "fuzz_cli: exit code %d\n", code);
    std::abort();
  }
  return 0;
}
