#include "lib/commands/gate_judge.h"

#include "lib/commands/gate.h"
#include "lib/report/checks.h"
#include "lib/report/units.h"
#include "lib/worker/registry.h"
#include "lib/workloads/launch_protocol.h"
#include "lib/workloads/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace leakgate::commands {

bool isSelected(const std::vector<std::string>& selected, const std::string& check) {
    return std::find(selected.begin(), selected.end(), check) != selected.end();
}

bool allSkipped(const WorkloadResult& result, const std::vector<std::string>& selected) {
    bool any = false;
    for (const CheckResult& check : result.checks) {
        if (!isSelected(selected, check.name)) continue;
        if (check.status != Status::kSkip) return false;
        any = true;
    }
    return any;
}

void decideSoak(WorkloadResult& target, const WorkloadResult* reference) {
    const std::int64_t slopeBudget = report::findCheck("soak-growth")->budget;
    for (auto& check : target.checks) {
        if (check.name != "soak-growth" || check.status != Status::kPass || !check.amount) continue;
        std::int64_t baseline = 0;
        std::string against = "no reference";
        if (reference) {
            for (const auto& other : reference->checks) {
                if (other.name == check.name && other.amount) {
                    baseline = *other.amount;
                    against =
                        fmt::format("the reference: {} per 1000 steps", report::humanBytes(baseline));
                }
            }
        }
        bool grows = *check.amount - baseline > slopeBudget;
        check.status = grows ? Status::kFail : Status::kPass;
        // The slope the target may have, for the HTML report's budget line.
        if (target.details.contains("soak") && target.details["soak"].is_object())
            target.details["soak"]["budget_slope_bytes_per_1000_steps"] = baseline + slopeBudget;
        check.reason = fmt::format("{} ({}; budget {} per 1000 steps beyond it)", check.reason, against,
                                   report::humanBytes(slopeBudget));
    }
}

void compareWithReference(WorkloadResult& target, const WorkloadResult* reference) {
    for (auto& check : target.checks) {
        if (check.name == "soak-growth") continue; // decided by decideSoak
        if (check.status != Status::kFail) continue;
        if (!reference || !reference->ok()) {
            check.reason += " (no reference baseline: the reference run errored)";
            continue;
        }
        auto baseline = std::find_if(reference->checks.begin(), reference->checks.end(),
                                     [&](const CheckResult& other) { return other.name == check.name; });
        if (baseline == reference->checks.end() || baseline->status != Status::kFail) continue;
        if (check.amount.value_or(0) <= baseline->amount.value_or(0)) {
            check.status = Status::kPass;
            const report::CheckDef* row = report::findCheck(check.name);
            check.reason = fmt::format("retains no more than the reference ({} vs {} {}): {}",
                                       check.amount.value_or(0), baseline->amount.value_or(0),
                                       row ? row->unit : "in the check's unit", check.reason);
        }
    }
}

void claimProbeCheckNames(WorkloadResult& result, std::vector<std::string>& taken,
                          const std::string& probe) {
    for (auto& check : result.checks) {
        bool builtin =
            std::find(gateChecks().begin(), gateChecks().end(), check.name) != gateChecks().end();
        bool earlier = std::find(taken.begin(), taken.end(), check.name) != taken.end();
        if (builtin || earlier) {
            check.status = Status::kError;
            check.amount.reset();
            check.reason = fmt::format(
                "the probe plug-in {} names a check `{}`, which {}; rename it", probe, check.name,
                builtin ? "is one of the gate's own" : "an earlier --probe decides");
        }
    }
    for (const auto& check : result.checks) {
        if (std::find(taken.begin(), taken.end(), check.name) == taken.end())
            taken.push_back(check.name);
    }
}

std::vector<WorkloadResult> judgeGate(std::vector<GateRun>& runs, const GateJudgement& judgement) {
    std::vector<WorkloadResult> results;
    // The built-in workloads, each target with its reference, in the registry's order.
    size_t next = 0;
    for (; next < runs.size() && runs[next].probe.empty();) {
        GateRun& targetRun = runs[next++];
        GateRun* referenceRun = next < runs.size() && runs[next].entry == targetRun.entry &&
                                        runs[next].probe.empty() && runs[next].role == Role::kReference
                                    ? &runs[next++]
                                    : nullptr;
        const worker::WorkloadEntry* entry = targetRun.entry;
        if (!targetRun.ran) {
            const char* skipReason = entry->scalarTypes && judgement.targetHasScalarTypes == false
                                         ? workloads::kNoScalarTypesReason
                                         : workloads::kNoLaunchCasesReason;
            WorkloadResult skipped;
            skipped.workload = entry->name;
            skipped.subject = judgement.targetName;
            skipped.role = Role::kTarget;
            for (const auto& check : entry->checks) {
                if (isSelected(judgement.selected, check))
                    skipped.checks.push_back({check, Status::kSkip, skipReason});
            }
            results.push_back(std::move(skipped));
            continue;
        }
        std::map<Role, WorkloadResult> byRole;
        for (GateRun* run : {&targetRun, referenceRun}) {
            if (!run || !run->ran) continue;
            WorkloadResult& result = run->result;
            // Keep the selected checks (the worker client gave each undecided one an `error`).
            std::erase_if(result.checks, [&](const CheckResult& check) {
                return !isSelected(judgement.selected, check.name);
            });
            std::stable_sort(result.checks.begin(), result.checks.end(),
                             [](const CheckResult& a, const CheckResult& b) {
                                 auto rank = [](const std::string& name) {
                                     return std::find(gateChecks().begin(), gateChecks().end(), name) -
                                            gateChecks().begin();
                                 };
                                 return rank(a.name) < rank(b.name);
                             });
            byRole.emplace(run->role, std::move(result));
        }
        // A reference that ran beside a target that skipped all its checks is no baseline.
        if (allSkipped(byRole.at(Role::kTarget), judgement.selected)) byRole.erase(Role::kReference);
        auto referenceResult = byRole.find(Role::kReference);
        decideSoak(byRole.at(Role::kTarget),
                   referenceResult == byRole.end() ? nullptr : &referenceResult->second);
        if (!judgement.targetIsReference && entry->baseline) {
            compareWithReference(byRole.at(Role::kTarget),
                                 referenceResult == byRole.end() ? nullptr : &referenceResult->second);
        }
        results.push_back(std::move(byRole.at(Role::kTarget)));
        if (referenceResult != byRole.end()) results.push_back(std::move(referenceResult->second));
    }
    // The probe plug-ins, each judged like a built-in workload with a baseline.
    std::vector<std::string> probeChecks;
    while (next < runs.size()) {
        GateRun& targetRun = runs[next++];
        GateRun* referenceRun = judgement.targetIsReference ? nullptr : &runs[next++];
        const std::string& probe = targetRun.probe;
        for (GateRun* run : {&targetRun, referenceRun}) {
            if (run && run->result.checks.empty()) {
                // The worker died before it could say which checks the plug-in has.
                run->result.checks.push_back({workloads::probeFallbackCheck(probe), Status::kError,
                                              run->result.error ? run->result.error->message : "not run",
                                              std::nullopt});
            }
        }
        WorkloadResult& probeTarget = targetRun.result;
        std::vector<std::string> takenBefore = probeChecks;
        claimProbeCheckNames(probeTarget, probeChecks, probe);
        if (referenceRun) {
            claimProbeCheckNames(referenceRun->result, takenBefore, probe);
            compareWithReference(probeTarget, &referenceRun->result);
        } else if (!judgement.targetIsReference) {
            compareWithReference(probeTarget, nullptr);
        }
        results.push_back(std::move(probeTarget));
        if (referenceRun) results.push_back(std::move(referenceRun->result));
    }
    return results;
}

} // namespace leakgate::commands
