// `leakgate scan -- SCRIPT [ARGS...]` or `leakgate scan -m MODULE [ARGS...]`: a leak audit of any
// script or module, run in a worker.
#pragma once

#include "leakgate/api.h"

#include "leakgate/report.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace leakgate {

struct ScanOptions {
    std::string script; // a file, or
    std::string module; // a module run as `python -m` runs it (exactly one of the two)
    std::vector<std::string> args;
    std::optional<std::string> python; // --python; default: the interpreter of this build
    std::chrono::seconds timeout{300};
    bool forwardOutput = true;
};

// Throws UsageError when nothing can run (no such script, a Python of another version); a module
// that cannot be found is the worker's usage error (exit 2).
LEAKGATE_API Report runScan(const ScanOptions& options);

} // namespace leakgate
