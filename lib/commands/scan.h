// `leakgate scan -- SCRIPT [ARGS...]` or `leakgate scan -m MODULE [ARGS...]`: a leak audit of any
// script or module, run in a worker.
#pragma once

#include "leakgate/api.h"

#include "leakgate/report.h"
#include "lib/workloads/spec.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace leakgate::commands {

struct ScanOptions {
    std::string script; // a file, or
    std::string module; // a module run as `python -m` runs it (exactly one of the two)
    std::vector<std::string> args;
    std::optional<std::string> python; // --python; default: the interpreter of this build
    std::chrono::seconds timeout{300};
    bool forwardOutput = true;
    // When cycles without a frame are a finding (check `cyclic-garbage`), and whether the script
    // runs under tracemalloc so that the finding says where they are made.
    std::int64_t cycleInstances = workloads::defaults::kCycleInstances;
    std::int64_t cycleBytes = workloads::defaults::kCycleBytes;
    bool traceSites = false;
    // When a library-held container's growth is a finding (check `held-growth`).
    std::int64_t heldEntries = workloads::defaults::kHeldEntries;
    std::int64_t heldBytes = workloads::defaults::kHeldBytes;
};

// Throws UsageError when nothing can run (no such script, a Python of another version); a module
// that cannot be found is the worker's usage error (exit 2).
LEAKGATE_API Report runScan(const ScanOptions& options);

} // namespace leakgate::commands
