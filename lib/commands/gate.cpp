#include "lib/commands/gate.h"

#include "lib/commands/baseline.h"
#include "lib/commands/builtin_targets.h"
#include "lib/base/data_dir.h"
#include "leakgate/errors.h"
#include "lib/commands/fix_sites.h"
#include "lib/commands/gate_lint.h"
#include "lib/workloads/launch_protocol.h"
#include "lib/commands/lint.h"
#include "lib/base/log.h"
#include "lib/python/environment.h"
#include "lib/report/units.h"
#include "lib/worker/client.h"
#include "lib/worker/registry.h"
#include "lib/workloads/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <unistd.h>

namespace leakgate {
namespace {

namespace fs = std::filesystem;

// RSS growth per 1000 soak steps beyond the reference's that is a finding: well above the
// jitter of the loop's own long-lived buffers (up to 64 MiB turning over).
constexpr std::int64_t kSoakSlopeBudget = 512 * 1024;

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

// The soak's status comes from both slopes: growth is a finding only beyond the reference's.
void decideSoak(WorkloadResult& target, const WorkloadResult* reference) {
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
        bool grows = *check.amount - baseline > kSoakSlopeBudget;
        check.status = grows ? Status::kFail : Status::kPass;
        // The slope the target may have, for the HTML report's budget line.
        if (target.details.contains("soak") && target.details["soak"].is_object())
            target.details["soak"]["budget_slope_bytes_per_1000_steps"] = baseline + kSoakSlopeBudget;
        check.reason = fmt::format("{} ({}; budget {} per 1000 steps beyond it)", check.reason, against,
                                   humanBytes(kSoakSlopeBudget));
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
            const char* unit = check.name.starts_with("decorations-") ? " thousandths per decoration"
                                                                      : " bytes";
            check.reason = fmt::format("retains no more than the reference ({} vs {}{}): {}",
                                       check.amount.value_or(0), baseline->amount.value_or(0), unit,
                                       check.reason);
        }
    }
}

// One worker's request: the gate's settings, for `workload` on `subject` in `role`.
worker::WorkerRequest workerRequest(const GateOptions& options, const python::Environment& env,
                                    const std::string& workload, const TargetRef& subject,
                                    const std::string& role) {
    worker::WorkerRequest request;
    workloads::WorkerSpec& spec = request.spec;
    spec.workload = workload;
    spec.subject = subject.name;
    spec.target = subject;
    spec.role = role;
    spec.sentinelBytes = options.sentinelBytes;
    spec.deviceSentinelBytes = options.deviceSentinelBytes;
    spec.soakSteps = options.soakSteps;
    spec.soakSeconds = options.soakSeconds;
    spec.distinctValues = options.distinctValues;
    spec.launchCalls = options.launchCalls;
    spec.launchRuns = options.launchRuns;
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
        bool builtin = std::find(gateChecks().begin(), gateChecks().end(), check.name) != gateChecks().end();
        bool earlier = std::find(taken.begin(), taken.end(), check.name) != taken.end();
        if (builtin || earlier) {
            check.status = Status::kError;
            check.amount.reset();
            check.reason = fmt::format("the probe plug-in {} names a check `{}`, which {}; rename it",
                                       probe, check.name,
                                       builtin ? "is one of the gate's own" : "an earlier --probe decides");
        }
    }
    for (const auto& check : result.checks) {
        if (std::find(taken.begin(), taken.end(), check.name) == taken.end()) taken.push_back(check.name);
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
    const bool onlyProbes = !requested.empty() && std::all_of(requested.begin(), requested.end(),
                                                              [](const std::string& name) { return name == "probe"; });
    std::erase(requested, std::string("probe"));
    if (onlyProbes && options.probes.empty())
        throw UsageError("--checks probe: the probe plug-ins' checks, but no --probe was given");
    std::vector<std::string> selected = onlyProbes ? std::vector<std::string>{} : selectChecks(requested);
    for (const std::string& probe : options.probes) {
        if (!fs::is_regular_file(probe))
            throw UsageError(fmt::format("--probe {}: not a file (a Python probe, FILE.py, or a C++ "
                                         "plug-in, a shared library)",
                                         probe));
    }
    // Read before anything runs: a bad baseline or budgets file is a usage error.
    nlohmann::json baseline =
        options.baseline.empty() ? nlohmann::json() : loadBaseline(options.baseline);
    // A plug-in's checks are known only once it ran: with --probe, a budget may name any check.
    Budgets budgets = options.budgets.empty() ? defaultBudgets()
                                              : loadBudgets(options.budgets, !options.probes.empty());
    python::Environment env =
        python::queryEnvironment(options.python.value_or(python::buildPythonExecutable()));
    const bool targetIsReference = target.module == reference.module;

    Report report;
    report.command = "gate";
    report.pythonVersion = env.version;
    report.pythonExecutable = env.executable;
    // Learnt from the decorate workload, which imports the target first: whether it has scalar
    // types and launch cases. Without them the launch-path workloads would only start a worker to
    // skip.
    std::optional<bool> targetHasScalarTypes, targetHasLaunchCases;
    for (const worker::WorkloadEntry* entry : worker::workloadsOf(worker::Command::kGate)) {
        const std::string& workload = entry->name;
        bool wanted = std::any_of(entry->checks.begin(), entry->checks.end(),
                                  [&](const std::string& check) { return isSelected(selected, check); });
        if (!wanted) continue;
        const char* skipReason = entry->scalarTypes && targetHasScalarTypes == false ? kNoScalarTypesReason
                                 : entry->launchCases && targetHasLaunchCases == false
                                     ? kNoLaunchCasesReason
                                     : nullptr;
        if (skipReason) {
            WorkloadResult skipped;
            skipped.workload = workload;
            skipped.subject = target.name;
            skipped.role = "target";
            for (const auto& check : entry->checks) {
                if (isSelected(selected, check)) skipped.checks.push_back({check, Status::kSkip, skipReason});
            }
            report.results.push_back(std::move(skipped));
            continue;
        }
        std::map<std::string, WorkloadResult> byRole;
        for (const char* role : {"target", "reference"}) {
            if (std::string(role) == "reference" && (targetIsReference || !entry->baseline)) continue;
            if (std::string(role) == "reference") {
                // No baseline is needed for checks the target skipped (no scalar types, say).
                const auto& checks = byRole.at("target").checks;
                bool allSkipped =
                    std::all_of(checks.begin(), checks.end(),
                                [](const CheckResult& check) { return check.status == Status::kSkip; });
                if (allSkipped && !checks.empty()) continue;
            }
            const TargetRef& subject = std::string(role) == "target" ? target : reference;
            worker::WorkerRequest request = workerRequest(options, env, workload, subject, role);
            if (::isatty(STDERR_FILENO)) {
                // Progress for a person watching: the soak alone takes its whole budget.
                log::info("{} on {}{}{}", workload, subject.name,
                          std::string(role) == "reference" ? " (reference)" : "",
                          workload == "soak" ? fmt::format(", about {:.0f} s", options.soakSeconds)
                                             : "");
            }
            WorkloadResult result = worker::runInWorker(request);
            result.role = role;
            if (workload == "decorate" && std::string(role) == "target" &&
                result.details.contains("scalar_types")) {
                targetHasScalarTypes = !result.details["scalar_types"].empty();
                if (result.details.contains("launch_devices"))
                    targetHasLaunchCases = !result.details["launch_devices"].empty();
            }
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
            byRole.emplace(role, std::move(result));
        }
        auto referenceResult = byRole.find("reference");
        decideSoak(byRole.at("target"),
                   referenceResult == byRole.end() ? nullptr : &referenceResult->second);
        if (!targetIsReference && entry->baseline) {
            compareWithReference(byRole.at("target"),
                                 referenceResult == byRole.end() ? nullptr : &referenceResult->second);
        }
        report.results.push_back(std::move(byRole.at("target")));
        if (referenceResult != byRole.end())
            report.results.push_back(std::move(referenceResult->second));
    }
    // The probe plug-ins, each judged like a built-in workload with a baseline.
    std::vector<std::string> probeChecks;
    for (const std::string& probe : options.probes) {
        std::map<std::string, WorkloadResult> byRole;
        for (const char* role : {"target", "reference"}) {
            if (std::string(role) == "reference" && targetIsReference) continue;
            worker::WorkerRequest request = workerRequest(options, env, "probe",
                                                          std::string(role) == "target" ? target : reference, role);
            request.spec.probe = fs::absolute(probe).string();
            WorkloadResult result = worker::runInWorker(request);
            result.role = role;
            if (result.checks.empty()) {
                // The worker died before it could say which checks the plug-in has.
                result.checks.push_back({workloads::probeFallbackCheck(probe), Status::kError,
                                         result.error ? result.error->message : "not run", std::nullopt});
            }
            byRole.emplace(role, std::move(result));
        }
        WorkloadResult& probeTarget = byRole.at("target");
        auto probeReference = byRole.find("reference");
        std::vector<std::string> takenBefore = probeChecks;
        claimProbeCheckNames(probeTarget, probeChecks, probe);
        if (probeReference != byRole.end()) {
            claimProbeCheckNames(probeReference->second, takenBefore, probe);
            compareWithReference(probeTarget, &probeReference->second);
        } else if (!targetIsReference) {
            compareWithReference(probeTarget, nullptr);
        }
        report.results.push_back(std::move(probeTarget));
        if (probeReference != byRole.end()) report.results.push_back(std::move(probeReference->second));
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
            if (result.role == "target" && result.workload != "lint") placeFixSites(result, statements);
        }
    } else {
        // Without --lint, the statement to change all the same (as scan finds it): the lint of the
        // target's findings' files only, not reported. Best effort: a lint that cannot run changes
        // nothing.
        std::vector<WorkloadResult*> targets;
        for (WorkloadResult& result : report.results) {
            if (result.role == "target") targets.push_back(&result);
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
