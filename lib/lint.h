// `leakgate lint PATH...`: a static audit of Python sources for the code shapes that keep frames
// alive (lib/workloads/lint_rules.py), run in a worker with CPython's own `ast` (a list of files
// too long for one worker's command line is split across several). Nothing in the sources is
// imported or run.
#pragma once

#include "lib/report.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace leakgate {

struct LintOptions {
    std::vector<std::string> paths;    // Python files, or directories searched for *.py
    std::optional<std::string> python; // --python: whose `ast` parses; default: this build's
    std::chrono::seconds timeout{300};
    bool forwardOutput = true;
};

// The rules, in report order; a finding's kind is "lint:" + rule.
inline constexpr const char* kLintRules[] = {"own-frame-local", "frame-stored"};

// One check, `lint`: fail when any rule matched, pass otherwise. A file that does not parse is
// listed in the result's details (`unparsed`) and does not stop the run. Throws UsageError when
// nothing can run (no path, a path that does not exist, a Python of another version).
Report runLint(const LintOptions& options);

} // namespace leakgate
