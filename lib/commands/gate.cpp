#include "lib/commands/gate.h"

#include "leakgate/errors.h"
#include "lib/base/data_dir.h"
#include "lib/base/log.h"
#include "lib/base/task_pool.h"
#include "lib/commands/baseline.h"
#include "lib/commands/builtin_targets.h"
#include "lib/commands/environments.h"
#include "lib/commands/fix_sites.h"
#include "lib/commands/gate_lint.h"
#include "lib/commands/lint.h"
#include "lib/python/environment.h"
#include "lib/report/checks.h"
#include "lib/report/units.h"
#include "lib/worker/client.h"
#include "lib/worker/registry.h"
#include "lib/workloads/launch_protocol.h"
#include "lib/workloads/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <unistd.h>

namespace leakgate {
namespace {

namespace fs = std::filesystem;

using workloads::TargetRef;

TargetRef resolveTarget(const std::string& target) {
    if (const BuiltinTarget* builtin = findBuiltinTarget(target)) {
        if (builtin->module) return {builtin->name, builtin->module, ""};
        return {builtin->name, "", (dataDir() / builtin->file).string()};
    }
    if (fs::is_regular_file(target))
        return {fs::path(target).stem().string(), "", fs::absolute(target).string()};
    std::vector<std::string> names;
    for (const BuiltinTarget& builtin : builtinTargets())
        names.push_back(builtin.name);
    throw UsageError(fmt::format("unknown target `{}`: not a file, and not a built-in target ({})",
                                 target, fmt::join(names, ", ")));
}

// The selected check names; accepts workload names as shorthand for their checks.
std::vector<std::string> selectChecks(const std::vector<std::string>& requested) {
    if (requested.empty()) return gateChecks();
    std::vector<std::string> selected;
    for (const auto& name : requested) {
        bool known = false;
        for (const auto& check : gateChecks()) {
            if (check == name || check.starts_with(name + "-")) {
                known = true;
                if (std::find(selected.begin(), selected.end(), check) == selected.end())
                    selected.push_back(check);
            }
        }
        if (!known) {
            std::vector<std::string> workloads;
            for (const auto* workload : worker::workloadsOf(worker::Command::kGate))
                workloads.push_back(workload->name);
            throw UsageError(
                fmt::format("unknown check `{}`; the gate's checks are {} (or a workload: {})", name,
                            fmt::join(gateChecks(), ", "), fmt::join(workloads, ", ")));
        }
    }
    return selected;
}

bool isSelected(const std::vector<std::string>& selected, const std::string& check) {
    return std::find(selected.begin(), selected.end(), check) != selected.end();
}

// Whether every selected check of the result skipped (and there was one): then the reference
// of the same workload is no baseline for anything.
bool allSkipped(const WorkloadResult& result, const std::vector<std::string>& selected) {
    bool any = false;
    for (const CheckResult& check : result.checks) {
        if (!isSelected(selected, check.name)) continue;
        if (check.status != Status::kSkip) return false;
        any = true;
    }
    return any;
}

// The soak's status comes from both slopes: growth is a finding only beyond the reference's.
void decideSoak(WorkloadResult& target, const WorkloadResult* reference) {
    const std::int64_t slopeBudget = findCheck("soak-growth")->budget;
    for (auto& check : target.checks) {
        if (check.name != "soak-growth" || check.status != Status::kPass || !check.amount) continue;
        std::int64_t baseline = 0;
        std::string against = "no reference";
        if (reference) {
            for (const auto& other : reference->checks) {
                if (other.name == check.name && other.amount) {
                    baseline = *other.amount;
                    against = fmt::format("the reference: {} per 1000 steps", humanBytes(baseline));
                }
            }
        }
        bool grows = *check.amount - baseline > slopeBudget;
        check.status = grows ? Status::kFail : Status::kPass;
        // The slope the target may have, for the HTML report's budget line.
        if (target.details.contains("soak") && target.details["soak"].is_object())
            target.details["soak"]["budget_slope_bytes_per_1000_steps"] = baseline + slopeBudget;
        check.reason = fmt::format("{} ({}; budget {} per 1000 steps beyond it)", check.reason, against,
                                   humanBytes(slopeBudget));
    }
}

// A target's failure stands only where it retains more than the reference in the same run:
// what the reference retains too is the interpreter's doing, not the target's.
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
            const CheckDef* row = findCheck(check.name);
            check.reason = fmt::format("retains no more than the reference ({} vs {} {}): {}",
                                       check.amount.value_or(0), baseline->amount.value_or(0),
                                       row ? row->unit : "in the check's unit", check.reason);
        }
    }
}

// One worker's request: the gate's settings, for `workload` on `subject` in `role`.
worker::WorkerRequest workerRequest(const GateOptions& options, const python::Environment& env,
                                    const std::string& workload, const TargetRef& subject, Role role) {
    worker::WorkerRequest request;
    workloads::WorkerSpec& spec = request.spec;
    spec.workload = workload;
    spec.subject = subject.name;
    spec.target = subject;
    spec.role = role;
    static_cast<workloads::WorkloadSettings&>(spec) = options;
    spec.environment = env;
    spec.argv = {"leakgate-gate"};
    request.timeout = options.timeout;
    request.forwardOutput = options.forwardOutput;
    return request;
}

// A probe plug-in's checks may not take a name another check of the run has: each such check
// becomes an `error` saying so (its figures would be judged as the other check's).
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

} // namespace

const std::vector<std::string>& gateChecks() {
    static const std::vector<std::string> checks = [] {
        std::vector<std::string> names;
        for (const auto* workload : worker::workloadsOf(worker::Command::kGate))
            names.insert(names.end(), workload->checks.begin(), workload->checks.end());
        return names;
    }();
    return checks;
}

std::string defaultGateTarget() {
    return (dataDir() / "fixtures/targets/frame_cycle_461.py").string();
}

Report runGate(const GateOptions& options) {
    const std::string targetName = options.target.empty() ? defaultGateTarget() : options.target;
    const TargetRef target = resolveTarget(targetName);
    const TargetRef reference = resolveTarget("reference");
    // `probe` in --checks: the plug-ins' workload, which runs whenever --probe is given; alone, it
    // leaves out every built-in check.
    std::vector<std::string> requested = options.checks;
    const bool onlyProbes =
        !requested.empty() && std::all_of(requested.begin(), requested.end(),
                                          [](const std::string& name) { return name == "probe"; });
    std::erase(requested, std::string("probe"));
    if (onlyProbes && options.probes.empty())
        throw UsageError("--checks probe: the probe plug-ins' checks, but no --probe was given");
    std::vector<std::string> selected =
        onlyProbes ? std::vector<std::string>{} : selectChecks(requested);
    for (const std::string& probe : options.probes) {
        if (!fs::is_regular_file(probe))
            throw UsageError(fmt::format("--probe {}: not a file (a Python probe, FILE.py, or a C++ "
                                         "plug-in, a shared library)",
                                         probe));
    }
    // Read before anything runs: a bad baseline or budgets file is a usage error.
    nlohmann::json baseline =
        options.baseline.empty() ? nlohmann::json() : loadBaseline(options.baseline);
    if (!baseline.is_null())
        checkBaselineSentinels(baseline, options.baseline, options.sentinelBytes,
                               options.deviceSentinelBytes);
    // A plug-in's checks are known only once it ran: with --probe, a budget may name any check.
    Budgets budgets = options.budgets.empty() ? defaultBudgets()
                                              : loadBudgets(options.budgets, !options.probes.empty());
    python::Environment env =
        pythonEnvironment(options.python.value_or(python::buildPythonExecutable()));
    const bool targetIsReference = target.module == reference.module;

    Report report;
    report.command = "gate";
    report.pythonVersion = env.version;
    report.pythonExecutable = env.executable;
    // Every worker of the run, planned first and then run up to options.jobs at a time: each is a
    // process of its own and measures only itself (allocator counters, sentinels, its RSS slope),
    // so which run beside it changes no figure. Results are assembled in the plan's order, so the
    // report reads the same for any -j.
    struct Run {
        const worker::WorkloadEntry* entry;
        Role role;
        const TargetRef* subject;
        std::string probe; // the probe workload's plug-in
        WorkloadResult result;
        bool ran = false;
    };
    std::vector<Run> runs;
    std::vector<Task> tasks;
    std::mutex learntLock;
    // Learnt from the decorate workload, which imports the target first: whether it has scalar
    // types and launch cases. Without them the launch-path workloads would only start a worker to
    // skip; so those wait for it.
    std::optional<bool> targetHasScalarTypes, targetHasLaunchCases;
    std::optional<size_t> decorateTarget;
    auto wanted = [&](const worker::WorkloadEntry& entry) {
        return std::any_of(entry.checks.begin(), entry.checks.end(),
                           [&](const std::string& check) { return isSelected(selected, check); });
    };
    // Both `import` and `decorate`: one worker per role measures the import, then the
    // decorations, and the target is imported once (the decorate workload imports it first
    // anyway). The import's run is filled by the decorate run's worker; by role, its index.
    const bool importThenDecorate =
        wanted(worker::findWorkload("import")) && wanted(worker::findWorkload("decorate"));
    std::map<Role, size_t> chainedImport;
    auto plan = [&](const worker::WorkloadEntry* entry, Role role, const std::string& probe) {
        const TargetRef* subject = role == Role::kTarget ? &target : &reference;
        runs.push_back({entry, role, subject, probe, {}, false});
        const size_t index = runs.size() - 1;
        std::optional<size_t> after;
        if (entry->scalarTypes || entry->launchCases) after = decorateTarget;
        if (importThenDecorate && probe.empty() && entry->name == "import") {
            chainedImport[role] = index;
            tasks.push_back({[] {}, std::nullopt}); // run by the decorate task of its role
            return;
        }
        tasks.push_back(
            {[&, index] {
                 Run& run = runs[index];
                 const std::string& workload = run.entry->name;
                 const bool chained = importThenDecorate && run.probe.empty() && workload == "decorate";
                 {
                     std::lock_guard<std::mutex> held(learntLock);
                     if ((run.entry->scalarTypes && targetHasScalarTypes == false) ||
                         (run.entry->launchCases && targetHasLaunchCases == false))
                         return; // skipped without a worker, when assembled
                 }
                 if (!chained && run.probe.empty() && run.role == Role::kReference) {
                     // No baseline is needed for checks the target skipped (no scalar
                     // types, say): seen here when the target ran first (-j 1), else
                     // the result is dropped when assembled.
                     std::lock_guard<std::mutex> held(learntLock);
                     const Run& targetRun = runs[index - 1];
                     if (targetRun.ran && allSkipped(targetRun.result, selected)) return;
                 }
                 worker::WorkerRequest request =
                     workerRequest(options, env, workload, *run.subject, run.role);
                 if (!run.probe.empty()) request.spec.probe = fs::absolute(run.probe).string();
                 if (::isatty(STDERR_FILENO)) {
                     // Progress for a person watching: the soak alone takes its whole budget.
                     log::info("{} on {}{}{}",
                               chained             ? std::string("import, decorate")
                               : run.probe.empty() ? workload
                                                   : run.probe,
                               run.subject->name, run.role == Role::kReference ? " (reference)" : "",
                               workload == "soak" ? fmt::format(", about {:.0f} s", options.soakSeconds)
                                                  : "");
                 }
                 WorkloadResult result;
                 if (chained) {
                     request.spec.workload = "import";
                     request.spec.then = {"decorate"};
                     std::vector<WorkloadResult> both = worker::runChainInWorker(request);
                     result = std::move(both[1]);
                     Run& importRun = runs.at(chainedImport.at(run.role));
                     std::lock_guard<std::mutex> held(learntLock);
                     importRun.result = std::move(both[0]);
                     importRun.result.role = run.role;
                     importRun.ran = true;
                 } else {
                     result = worker::runInWorker(request);
                 }
                 result.role = run.role;
                 std::lock_guard<std::mutex> held(learntLock);
                 if (workload == "decorate" && run.role == Role::kTarget &&
                     result.details.contains("scalar_types")) {
                     targetHasScalarTypes = !result.details["scalar_types"].empty();
                     if (result.details.contains("launch_devices"))
                         targetHasLaunchCases = !result.details["launch_devices"].empty();
                 }
                 run.result = std::move(result);
                 run.ran = true;
             },
             after});
        if (entry->name == "decorate" && role == Role::kTarget) decorateTarget = index;
    };
    for (const worker::WorkloadEntry* entry : worker::workloadsOf(worker::Command::kGate)) {
        if (!wanted(*entry)) continue;
        plan(entry, Role::kTarget, "");
        if (!targetIsReference && entry->baseline) plan(entry, Role::kReference, "");
    }
    const worker::WorkloadEntry& probeEntry = worker::findWorkload("probe");
    for (const std::string& probe : options.probes) {
        plan(&probeEntry, Role::kTarget, probe);
        if (!targetIsReference) plan(&probeEntry, Role::kReference, probe);
    }
    runTasks(tasks, options.jobs);

    // The built-in workloads, each target with its reference, in the registry's order.
    size_t next = 0;
    for (; next < runs.size() && runs[next].probe.empty();) {
        Run& targetRun = runs[next++];
        Run* referenceRun = next < runs.size() && runs[next].entry == targetRun.entry &&
                                    runs[next].probe.empty() && runs[next].role == Role::kReference
                                ? &runs[next++]
                                : nullptr;
        const worker::WorkloadEntry* entry = targetRun.entry;
        if (!targetRun.ran) {
            const char* skipReason = entry->scalarTypes && targetHasScalarTypes == false
                                         ? kNoScalarTypesReason
                                         : kNoLaunchCasesReason;
            WorkloadResult skipped;
            skipped.workload = entry->name;
            skipped.subject = target.name;
            skipped.role = Role::kTarget;
            for (const auto& check : entry->checks) {
                if (isSelected(selected, check))
                    skipped.checks.push_back({check, Status::kSkip, skipReason});
            }
            report.results.push_back(std::move(skipped));
            continue;
        }
        std::map<Role, WorkloadResult> byRole;
        for (Run* run : {&targetRun, referenceRun}) {
            if (!run || !run->ran) continue;
            WorkloadResult& result = run->result;
            // Keep the selected checks (the worker client gave each undecided one an `error`).
            std::erase_if(result.checks,
                          [&](const CheckResult& check) { return !isSelected(selected, check.name); });
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
        if (allSkipped(byRole.at(Role::kTarget), selected)) byRole.erase(Role::kReference);
        auto referenceResult = byRole.find(Role::kReference);
        decideSoak(byRole.at(Role::kTarget),
                   referenceResult == byRole.end() ? nullptr : &referenceResult->second);
        if (!targetIsReference && entry->baseline) {
            compareWithReference(byRole.at(Role::kTarget),
                                 referenceResult == byRole.end() ? nullptr : &referenceResult->second);
        }
        report.results.push_back(std::move(byRole.at(Role::kTarget)));
        if (referenceResult != byRole.end())
            report.results.push_back(std::move(referenceResult->second));
    }
    // The probe plug-ins, each judged like a built-in workload with a baseline.
    std::vector<std::string> probeChecks;
    while (next < runs.size()) {
        Run& targetRun = runs[next++];
        Run* referenceRun = targetIsReference ? nullptr : &runs[next++];
        const std::string& probe = targetRun.probe;
        for (Run* run : {&targetRun, referenceRun}) {
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
        } else if (!targetIsReference) {
            compareWithReference(probeTarget, nullptr);
        }
        report.results.push_back(std::move(probeTarget));
        if (referenceRun) report.results.push_back(std::move(referenceRun->result));
    }
    if (options.lint) {
        // The static audit beside the dynamic checks, and where the two agree.
        LintOptions lint;
        lint.paths = gateLintPaths(target, env);
        lint.python = options.python;
        lint.timeout = options.timeout;
        lint.forwardOutput = options.forwardOutput;
        report.results.push_back(lint.paths.empty() ? gateLintSkipped(target, env)
                                                    : std::move(runLint(lint).results.front()));
        markConfirmedLintFindings(report);
        // The target's dynamic findings get the statement to change, where the lint has it.
        const std::vector<Finding> statements = report.results.back().findings;
        for (WorkloadResult& result : report.results) {
            if (result.role == Role::kTarget && result.workload != "lint")
                placeFixSites(result, statements);
        }
    } else {
        // Without --lint, the statement to change all the same (as scan finds it): the lint of the
        // target's findings' files only, not reported. Best effort: a lint that cannot run changes
        // nothing.
        std::vector<WorkloadResult*> targets;
        for (WorkloadResult& result : report.results) {
            if (result.role == Role::kTarget) targets.push_back(&result);
        }
        LintOptions lint;
        lint.python = options.python;
        lint.timeout = options.timeout;
        lintFixSites(targets, "", std::move(lint));
    }
    if (!baseline.is_null()) applyBaseline(report, baseline, budgets);
    return report;
}

} // namespace leakgate
