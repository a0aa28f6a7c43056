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
void add_resize_command(CLI::App& app);  // resize.cpp: resize and append
void add_consolidate_command(CLI::App& app);  // consolidate.cpp
void add_migrate_command(CLI::App& app);      // migrate.cpp

}  // namespace zarrkit::cli
