// The command line, whoever runs it: the leakgate binary (cmd/main.cpp) or the Python package's
// extension module (package/native.cpp), which passes its own file so that workers start as the
// environment's interpreter loading it (lib/worker/main.h).
#pragma once

#include <string>

namespace leakgate::cmd {

// Parses argv, runs the subcommand, returns the exit code; argv[0]'s file name is the program's
// name in help, diagnostics and reports. Installs leakgate's signal handlers for the process.
int runCli(int argc, char** argv, const std::string& extensionModule = "");

} // namespace leakgate::cmd
