#include "zarrkit/app.h"

#include <iostream>
#include <new>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/settings_env.h"
#include "zarrkit/commands.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"

namespace zarrkit::cli {

ErrorReport report_error(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const CLI::ParseError& e) {
    return {e.get_exit_code() == 0 ? kExitOk : kExitUsage, e.what()};
  } catch (const UsageError& e) {
    return {kExitUsage, e.what()};
  } catch (const Error& e) {
    return {kExitFailure, e.what()};
  } catch (const std::bad_alloc&) {
    return {kExitFailure, "out of memory"};
  } catch (const std::exception& e) {
    return {kExitFailure, e.what()};
  } catch (...) {
    return {kExitFailure, "unknown error"};
  }
}

void as_usage_error(const std::string& what, const std::function<void()>& parse) {
  try {
    parse();
  } catch (const InvalidArgumentError& e) {
    throw UsageError(fmt::format("{}: {}", what, e.what()));
  }
}

int run(int argc, const char* const* argv) {
  CLI::App app("zarrkit: inspect, import, export and copy Zarr v2/v3 arrays and groups", "zarrkit");
  app.require_subcommand(1);
  // Global options may also follow the subcommand (`zarrkit cp a b --threads 4`), and take
  // effect while the command line is parsed, before the command runs.
  app.fallthrough();
  app.add_option_function<std::size_t>(
         "--threads",
         [](const std::size_t& n) {
           if (n > kMaxNumThreads) throw UsageError(fmt::format("--threads {}: at most {} threads", n, kMaxNumThreads));
           global_config().num_threads = n;
         },
         "threads that decode, encode and read (default 0: one per hardware thread; at most 4096; "
         "ZARRKIT_NUM_THREADS)")
      ->trigger_on_parse();
  add_info_command(app);
  add_export_command(app);
  add_import_command(app);
  add_cp_command(app);
  add_resize_command(app);
  add_consolidate_command(app);
  add_migrate_command(app);
  try {
    // Subcommand callbacks run inside parse(), so command errors arrive here too.
    app.parse(argc, argv);
    return kExitOk;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (...) {
    ErrorReport report = report_error(std::current_exception());
    if (report.exit_code != kExitOk) std::cerr << "zarrkit: error: " << report.message << std::endl;
    return report.exit_code;
  }
}

}  // namespace zarrkit::cli
