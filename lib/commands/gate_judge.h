// The gate's judgement: from what its workers returned to the results it reports. Nothing runs
// here: the gate plans its workers and runs them (gate.cpp), then hands every run to judgeGate,
// and the unit tests hand it results as workers would (tests/unit/commands/gate_judge_test.cpp).
#pragma once

#include "leakgate/report.h"
#include "lib/worker/registry.h"
#include "lib/workloads/spec.h"

#include <optional>
#include <string>
#include <vector>

namespace leakgate::commands {

// One planned worker of a gate run, and what it returned.
struct GateRun {
    const worker::WorkloadEntry* entry;
    Role role;
    const workloads::TargetRef* subject;
    std::string probe; // the probe workload's plug-in; empty for a built-in workload
    WorkloadResult result;
    bool ran = false; // false: not started (its checks need what the target does not have)
};

// What the judgement needs beside the runs.
struct GateJudgement {
    std::vector<std::string> selected; // the checks asked for
    std::string targetName;
    bool targetIsReference = false; // gate --target reference: no baseline to compare with
    // Learnt from the decorate workload: false when the target has no scalar types (a workload
    // that needs them was not started; else, one that needs launch cases was not).
    std::optional<bool> targetHasScalarTypes;
};

// The results in the plan's order: each built-in workload's target, judged against its reference
// where the workload has one (the reference's result follows it), then each probe plug-in's.
// `runs` are in the plan's order: a workload's target run, then its reference's, if any.
std::vector<WorkloadResult> judgeGate(std::vector<GateRun>& runs, const GateJudgement& judgement);

bool isSelected(const std::vector<std::string>& selected, const std::string& check);
// Whether every selected check of the result skipped (and there was one): then the reference
// of the same workload is no baseline for anything.
bool allSkipped(const WorkloadResult& result, const std::vector<std::string>& selected);
// The soak's status comes from both slopes: growth is a finding only beyond the reference's, by
// more than the soak check's budget (lib/report/checks.h).
void decideSoak(WorkloadResult& target, const WorkloadResult* reference);
// A target's failure stands only where it retains more than the reference in the same run:
// what the reference retains too is the interpreter's doing, not the target's.
void compareWithReference(WorkloadResult& target, const WorkloadResult* reference);
// A probe plug-in's checks may not take a name another check of the run has (`taken`, which
// gets this result's names): each such check becomes an `error` saying so.
void claimProbeCheckNames(WorkloadResult& result, std::vector<std::string>& taken,
                          const std::string& probe);

} // namespace leakgate::commands
