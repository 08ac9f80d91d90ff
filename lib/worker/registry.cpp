#include "lib/worker/registry.h"

#include "leakgate/errors.h"
#include "lib/lint/python.h"
#include "lib/workloads/workload.h"

#include <fmt/format.h>

#include <algorithm>

namespace leakgate::worker {

const std::vector<WorkloadEntry>& workloadRegistry() {
    using namespace workloads;
    // Gate workloads name their checks <workload>-<check>.
    static const std::vector<WorkloadEntry> registry = {
        {"scan", Command::kScan, {"frame-cycle", "cyclic-garbage", "retained-frame", "held-growth"}, false, false, runScript},
        {"decorate",
         Command::kGate,
         {"decorate-sentinels", "decorate-frame-cycle", "decorate-retained-frame",
          "decorate-device-memory"},
         true,
         false,
         runDecorate},
        {"import",
         Command::kGate,
         {"import-sentinels", "import-frame-cycle", "import-retained-frame", "import-device-memory"},
         true,
         false,
         runImport},
        {"decorations",
         Command::kGate,
         {"decorations-cyclic-garbage", "decorations-retained"},
         true,
         false,
         runDecorations},
        {"launch",
         Command::kGate,
         {"launch-allocations", "launch-net-blocks", "launch-cyclic-garbage"},
         false,
         true,
         runLaunch},
        {"launch-real",
         Command::kGate,
         {"launch-real-net-blocks", "launch-real-cyclic-garbage", "launch-real-retained"},
         false,
         false,
         runRealLaunch,
         true},
        {"values", Command::kGate, {"values-encoding", "values-bounded"}, false, true, runValues},
        {"soak", Command::kGate, {"soak-growth"}, true, true, runSoak},
        {"device",
         Command::kGate,
         {"device-echo", "device-allocations", "device-cyclic-garbage"},
         false,
         true,
         runDevice},
        // The plug-in's checks, by the names it gives them (lib/workloads/probe.cpp).
        {"probe", Command::kProbe, {}, true, false, runProbe},
        // Its one check, `lint`, is decided by the parent over every worker of the run.
        {"lint", Command::kLint, {}, false, false, runPythonLint},
    };
    return registry;
}

const WorkloadEntry& findWorkload(std::string_view name) {
    for (const auto& entry : workloadRegistry()) {
        if (entry.name == name) return entry;
    }
    throw UsageError(fmt::format("unknown workload `{}`", name));
}

std::vector<const WorkloadEntry*> workloadsOf(Command command) {
    std::vector<const WorkloadEntry*> entries;
    for (const auto& entry : workloadRegistry()) {
        if (entry.command == command) entries.push_back(&entry);
    }
    return entries;
}

void addUndecidedChecks(WorkloadResult& result, const WorkloadEntry& entry,
                        const std::vector<std::string>* wanted) {
    for (const auto& name : entry.checks) {
        if (wanted && std::find(wanted->begin(), wanted->end(), name) == wanted->end()) continue;
        bool decided = std::any_of(result.checks.begin(), result.checks.end(),
                                   [&](const CheckResult& check) { return check.name == name; });
        if (!decided)
            result.checks.push_back(
                {name, Status::kError, result.error ? result.error->message : "not run"});
    }
}

} // namespace leakgate::worker
