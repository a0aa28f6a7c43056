// zarrkit: the command-line tool. Everything lives in app.cpp and one file per command,
// so that the tests can link all of it but this entry point.
#include "zarrkit/app.h"

int main(int argc, char** argv) { return zarrkit::cli::run(argc, argv); }
