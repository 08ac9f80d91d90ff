// `leakgate gate`: the release gate. Runs the decorate and import workloads on a target and on
// leakgate's reference runtime, each in its own worker, and fails a check when the target
// retains what the reference does not.
#pragma once

#include "lib/report.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace leakgate {

struct GateOptions {
    std::string target;                     // a built-in name or a path; empty: the bundled default
    std::vector<std::string> checks;        // check or workload names; empty: all
    std::optional<std::string> python;      // --python
    std::chrono::seconds timeout{300};      // per worker
    std::int64_t sentinelBytes = 8 << 20;   // host payload of each sentinel
    bool forwardOutput = true;
};

// Every check the gate knows, in report order.
const std::vector<std::string>& gateChecks();

// The bundled default target: the model of nvidia-cutlass-dsl 4.6.1's decorators.
std::string defaultGateTarget();

// Throws UsageError for an unknown target or check (nothing ran).
Report runGate(const GateOptions& options);

}  // namespace leakgate
