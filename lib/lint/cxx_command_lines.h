// The command line each C/C++ file is parsed with: its own from a compile_commands.json, a
// neighbour's for a file the database does not list (a header), or the flags the lint was given.
#pragma once

#include "lib/clang/libclang.h"
#include "lib/lint/cxx.h"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace leakgate::lint::cxx {

// Whether `path` is read as C++ rather than C, by its extension.
bool isCxxLanguage(const std::string& path);

// A file's command line, and which of its arguments names the file (none when no argument could be
// matched to it: such a line is used as it is).
struct CommandLine {
    std::vector<std::string> args;
    std::optional<size_t> fileArg;
};

// The command line to parse `file` with: its own from the database, a neighbour's for a file the
// database does not list (a header), or the explicit flags.
class CommandLines {
  public:
    explicit CommandLines(const CxxLintOptions& options);

    const std::string& databasePath() const { return databasePath_; }

    CommandLine forFile(const std::string& file) const;

  private:
    const CxxLintOptions& options_;
    std::string databasePath_;
    std::optional<clang::CompilationDatabaseGuard> database_;
    std::multimap<std::string, std::pair<std::vector<std::string>, std::string>> neighbours_;
    std::optional<std::pair<std::vector<std::string>, std::string>> fallback_;

    static std::string directory(CXCompileCommand command);

    // The database's arguments, run from its directory.
    static std::vector<std::string> arguments(CXCompileCommand command);
};

} // namespace leakgate::lint::cxx
