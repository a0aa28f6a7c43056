// One function per subcommand, each in its own file: it adds the subcommand, its options
// and the callback that runs it.
#pragma once

namespace CLI {
class App;
}

namespace zarrkit::cli {

void add_info_command(CLI::App& app);    // info.cpp
void add_export_command(CLI::App& app);  // export.cpp
void add_import_command(CLI::App& app);  // import.cpp
void add_cp_command(CLI::App& app);      // cp.cpp

}  // namespace zarrkit::cli
