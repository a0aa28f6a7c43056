// The zarrkit command line: subcommand wiring and the mapping from errors to exit codes.
#pragma once

#include <exception>
#include <functional>
#include <stdexcept>
#include <string>

namespace zarrkit::cli {

// A mistake in how the tool was called: a bad flag value, a bad --select or --codec.
// Exit code 2, like a CLI11 parse error.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // data, IO, format errors
inline constexpr int kExitUsage = 2;    // bad flags, bad --select

// What to print (one line, without the "zarrkit: error: " prefix) and the exit code for an
// exception that escaped a command.
struct ErrorReport {
  int exit_code = kExitFailure;
  std::string message;
};
ErrorReport report_error(std::exception_ptr error);

// Runs `parse` (which parses user input such as --select or --codec) and turns the
// zarrkit::InvalidArgumentError it throws into a UsageError naming `what`.
void as_usage_error(const std::string& what, const std::function<void()>& parse);

// Parses the arguments and runs the command; returns the exit code. Errors are printed to
// stderr as "zarrkit: error: <what>".
int run(int argc, const char* const* argv);

}  // namespace zarrkit::cli
