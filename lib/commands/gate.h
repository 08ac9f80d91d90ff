// `leakgate gate`: the release gate. Runs the workloads (decorate, import, launch, values, soak)
// on a target, and where a baseline is needed on leakgate's reference runtime, each in its own
// worker; a check fails when the target retains what the reference does not.
#pragma once

#include "leakgate/api.h"

#include "leakgate/report.h"
#include "lib/workloads/spec.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace leakgate::commands {

// The workloads' settings are the workers' own type (lib/workloads/spec.h), with its defaults.
struct GateOptions : workloads::WorkloadSettings {
    std::string target;                // a built-in name or a path; empty: the bundled default
    std::vector<std::string> checks;   // check or workload names; empty: all
    std::optional<std::string> python; // --python
    std::chrono::seconds timeout{300}; // per worker
    std::string baseline;              // JSON of an earlier gate run to judge figures against
    std::string budgets;               // budgets file for the baseline comparison
    bool forwardOutput = true;
    // --probe: plug-ins (Python files, C++ shared libraries), each run in workers of its own on the
    // target and the reference; their checks are theirs (lib/workloads/probe.cpp).
    std::vector<std::string> probes;
    // Workers run at the same time (-j): the target's and the reference's, and those of different
    // workloads. Each measures only its own process, so the verdicts do not depend on it.
    int jobs = 1;
    bool lint =
        false; // --lint: also the static audit of the target's sources (lib/commands/gate_lint.h)
};

// Every check the gate knows, in report order.
const std::vector<std::string>& gateChecks();

// The gate's checks as a table for a person (gate --list-checks): workload, unit, default budget,
// the finding that explains each.
LEAKGATE_API std::string gateCheckTable();

// The bundled default target: the model of nvidia-cutlass-dsl 4.6.1's decorators.
std::string defaultGateTarget();

// Throws UsageError for an unknown target or check (nothing ran).
LEAKGATE_API Report runGate(const GateOptions& options);

} // namespace leakgate::commands
