#include "lib/worker/registry.h"

#include "leakgate/errors.h"
#include "lib/lint/python.h"
#include "lib/report/checks.h"
#include "lib/workloads/workload.h"

#include <fmt/format.h>

#include <algorithm>

namespace leakgate::worker {

const std::vector<WorkloadEntry>& workloadRegistry() {
    using namespace workloads;
    // Each row's checks are the table's (lib/report/checks.h): those every result of it decides.
    auto row = [](const char* name, Command command, bool baseline, bool scalarTypes,
                  WorkloadResult (*run)(const WorkerSpec&), bool launchCases = false) {
        return WorkloadEntry{name,       command,     report::checksOf(name, /*owedOnly=*/true),
                             baseline,   scalarTypes, run,
                             launchCases};
    };
    static const std::vector<WorkloadEntry> registry = {
        row("scan", Command::kScan, false, false, runScript),
        row("decorate", Command::kGate, true, false, runDecorate),
        row("import", Command::kGate, true, false, runImport),
        row("decorations", Command::kGate, true, false, runDecorations),
        row("launch", Command::kGate, false, true, runLaunch),
        row("launch-real", Command::kGate, false, false, runRealLaunch, true),
        row("values", Command::kGate, false, true, runValues),
        row("soak", Command::kGate, true, true, runSoak),
        row("device", Command::kGate, false, true, runDevice),
        // The plug-in's checks, by the names it gives them (lib/workloads/probe.cpp).
        row("probe", Command::kProbe, true, false, runProbe),
        // Its one check, `lint`, is decided by the parent over every worker of the run.
        row("lint", Command::kLint, false, false, lint::runPythonLint),
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
