// Every workload a worker can run, in one table: its name, the checks it decides, how the gate
// runs it and the function that runs it. The gate and the scan read their workloads and check
// names here, the worker dispatches here, and the parent fills in the checks a dead worker never
// decided from here. Adding a workload: one row in registry.cpp and the file that runs it.
#pragma once

#include "leakgate/report.h"
#include "lib/workloads/spec.h"

#include <string>
#include <string_view>
#include <vector>

namespace leakgate::worker {

// kProbe: the gate's plug-in workload, one worker per `--probe`; its checks are the plug-in's own.
enum class Command { kScan, kGate, kLint, kProbe };

struct WorkloadEntry {
    std::string name;
    Command command;                 // the command whose workers run it
    std::vector<std::string> checks; // the names it decides, as reports spell them
    bool baseline = false;           // gate: the reference runs too, and the target is judged against it
    bool scalarTypes = false;        // gate: on the launch path, so it needs the target's `scalar_types`
    WorkloadResult (*run)(const workloads::WorkerSpec& spec) = nullptr;
    bool launchCases = false; // gate: the real launch, so it needs the target's `launch_cases`
};

// In report order.
const std::vector<WorkloadEntry>& workloadRegistry();
// Throws UsageError for a name no row has.
const WorkloadEntry& findWorkload(std::string_view name);
// The rows of one command, in report order.
std::vector<const WorkloadEntry*> workloadsOf(Command command);

// Appends an `error` for each of the workload's checks that `result` does not decide (a worker
// that died, or stopped early, still owes each check a status), unless `wanted` leaves it out.
void addUndecidedChecks(WorkloadResult& result, const WorkloadEntry& entry,
                        const std::vector<std::string>* wanted = nullptr);

} // namespace leakgate::worker
