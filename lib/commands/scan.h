// `leakgate scan -- SCRIPT [ARGS...]`: a leak audit of any script, run in a worker.
#pragma once

#include "leakgate/api.h"

#include "leakgate/report.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace leakgate {

struct ScanOptions {
    std::string script;
    std::vector<std::string> args;
    std::optional<std::string> python; // --python; default: the interpreter of this build
    std::chrono::seconds timeout{300};
    bool forwardOutput = true;
};

// Throws UsageError when nothing can run (no such script, a Python of another version).
LEAKGATE_API Report runScan(const ScanOptions& options);

} // namespace leakgate
