// `leakgate lint PATH...`: a static audit of Python sources for the code shapes that keep frames
// alive (lib/lint/python_rules/), run in a worker with CPython's own `ast` (a list of files
// too long for one worker's command line is split across several), and of C/C++ extension
// sources with libclang, each translation unit in a forked child (lib/lint/cxx.h). Nothing in the
// sources is imported, compiled or run.
#pragma once

#include "leakgate/api.h"

#include "leakgate/report.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace leakgate::commands {

struct LintOptions {
    std::vector<std::string> paths;    // files, or directories searched for *.py and C/C++ sources
    std::optional<std::string> python; // --python: whose `ast` parses; default: this build's
    // C/C++: a compile_commands.json (or its directory); default: one at the top of a directory
    // given in `paths` (or in its build/). Files it does not list get cxxFlags and -I includeDirs.
    std::optional<std::string> compileCommands;
    std::vector<std::string> cxxFlags;
    std::vector<std::string> includeDirs;
    std::chrono::seconds timeout{300};
    bool forwardOutput = true;
    int jobs = 1; // Python lint workers at the same time, each given a share of the files
    // What the project asks (lib/lint/project.h): rules as "rule,rule" lists (--select replaces the
    // pyproject.toml's, --ignore and --exclude add to it), exclude globs relative to the current
    // directory, and the shipped headers under site-packages.
    std::optional<std::vector<std::string>> select;
    std::vector<std::string> ignore;
    std::vector<std::string> exclude;
    bool sitePackagesHeaders = false;
    // The `[tool.leakgate.lint]` table: of configFile, or (findProjectFile) of the nearest
    // pyproject.toml above the paths when readProjectFile is set (`leakgate lint` without --no-config).
    std::optional<std::string> configFile;
    bool readProjectFile = false;
    // --diff: the fixes of the findings that have one (lib/lint/fix.h), each checked on a fixed
    // copy, in details.fixes with their diffs; --fix: and written over the files.
    bool diff = false;
    bool fix = false;
};

// One check, `lint`: fail when any selected rule matched where no `leakgate: ignore` comment
// accepts it, pass otherwise. A file that does not parse (for C/C++: a translation unit with
// errors) is listed in the result's details (`unparsed`) and does not stop the run; a run whose
// every file is excluded is skipped. In a build without libclang, C/C++ files get a second check,
// `lint-cxx`, skipped with the reason. Throws UsageError when nothing can run (no path, a path that does
// not exist, a Python of another version, an unknown rule, a pyproject.toml table that does not read).
LEAKGATE_API Report runLint(const LintOptions& options);

} // namespace leakgate::commands
