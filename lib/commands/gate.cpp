#include "lib/commands/gate.h"

#include "leakgate/errors.h"
#include "lib/base/data_dir.h"
#include "lib/base/log.h"
#include "lib/base/task_pool.h"
#include "lib/commands/baseline.h"
#include "lib/commands/builtin_targets.h"
#include "lib/commands/environments.h"
#include "lib/commands/fix_sites.h"
#include "lib/commands/gate_judge.h"
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

namespace leakgate::commands {
namespace {

namespace fs = std::filesystem;

using workloads::TargetRef;

TargetRef resolveTarget(const std::string& target) {
    if (const BuiltinTarget* builtin = findBuiltinTarget(target)) {
        if (builtin->module) return {builtin->name, builtin->module, ""};
        return {builtin->name, "", (base::dataDir() / builtin->file).string()};
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

// The gate's workers: each is a process of its own and measures only itself (allocator counters,
// sentinels, its RSS slope), so which run beside it changes no figure. They are planned first
// (add), then run up to -j at a time (run); the results stay in the plan's order, so the report
// reads the same for any -j.
class GatePlan {
  public:
    GatePlan(const GateOptions& options, const python::Environment& env,
             const std::vector<std::string>& selected)
        : options_(options), env_(env), selected_(selected),
          // Both `import` and `decorate`: one worker per role measures the import, then the
          // decorations, and the target is imported once (the decorate workload imports it first
          // anyway). The import's run is filled by the decorate run's worker.
          importThenDecorate_(wanted(worker::findWorkload("import")) &&
                              wanted(worker::findWorkload("decorate"))) {}

    bool wanted(const worker::WorkloadEntry& entry) const {
        return std::any_of(entry.checks.begin(), entry.checks.end(),
                           [&](const std::string& check) { return isSelected(selected_, check); });
    }

    // One worker of `entry` on `subject` in `role` (`probe`: the probe workload's plug-in). A
    // workload that needs the target's scalar types or launch cases waits for the target's
    // decorate run, which learns whether it has them.
    void add(const worker::WorkloadEntry* entry, Role role, const workloads::TargetRef* subject,
             const std::string& probe) {
        runs_.push_back({entry, role, subject, probe, {}, false});
        const size_t index = runs_.size() - 1;
        std::optional<size_t> after;
        if (entry->scalarTypes || entry->launchCases) after = decorateTarget_;
        if (importThenDecorate_ && probe.empty() && entry->name == "import") {
            chainedImport_[role] = index;
            tasks_.push_back({[] {}, std::nullopt}); // run by the decorate task of its role
            return;
        }
        tasks_.push_back({[this, index] { runOne(index); }, after});
        if (entry->name == "decorate" && role == Role::kTarget) decorateTarget_ = index;
    }

    void run(int jobs) { base::runTasks(tasks_, jobs); }

    std::vector<GateRun>& runs() { return runs_; }
    std::optional<bool> targetHasScalarTypes() const { return targetHasScalarTypes_; }

  private:
    void runOne(size_t index) {
        GateRun& run = runs_[index];
        const std::string& workload = run.entry->name;
        const bool chained = importThenDecorate_ && run.probe.empty() && workload == "decorate";
        {
            std::lock_guard<std::mutex> held(learntLock_);
            if ((run.entry->scalarTypes && targetHasScalarTypes_ == false) ||
                (run.entry->launchCases && targetHasLaunchCases_ == false))
                return; // skipped without a worker, when assembled
        }
        if (!chained && run.probe.empty() && run.role == Role::kReference) {
            // No baseline is needed for checks the target skipped (no scalar types, say): seen
            // here when the target ran first (-j 1), else the result is dropped when assembled.
            std::lock_guard<std::mutex> held(learntLock_);
            const GateRun& targetRun = runs_[index - 1];
            if (targetRun.ran && allSkipped(targetRun.result, selected_)) return;
        }
        worker::WorkerRequest request = workerRequest(options_, env_, workload, *run.subject, run.role);
        if (!run.probe.empty()) request.spec.probe = fs::absolute(run.probe).string();
        if (::isatty(STDERR_FILENO)) {
            // Progress for a person watching: the soak alone takes its whole budget.
            base::log::info("{} on {}{}{}",
                            chained             ? std::string("import, decorate")
                            : run.probe.empty() ? workload
                                                : run.probe,
                            run.subject->name, run.role == Role::kReference ? " (reference)" : "",
                            workload == "soak" ? fmt::format(", about {:.0f} s", options_.soakSeconds)
                                               : "");
        }
        WorkloadResult result;
        if (chained) {
            request.spec.workload = "import";
            request.spec.then = {"decorate"};
            std::vector<WorkloadResult> both = worker::runChainInWorker(request);
            result = std::move(both[1]);
            GateRun& importRun = runs_.at(chainedImport_.at(run.role));
            std::lock_guard<std::mutex> held(learntLock_);
            importRun.result = std::move(both[0]);
            importRun.result.role = run.role;
            importRun.ran = true;
        } else {
            result = worker::runInWorker(request);
        }
        result.role = run.role;
        std::lock_guard<std::mutex> held(learntLock_);
        if (workload == "decorate" && run.role == Role::kTarget &&
            result.details.contains("scalar_types")) {
            targetHasScalarTypes_ = !result.details["scalar_types"].empty();
            if (result.details.contains("launch_devices"))
                targetHasLaunchCases_ = !result.details["launch_devices"].empty();
        }
        run.result = std::move(result);
        run.ran = true;
    }

    const GateOptions& options_;
    const python::Environment& env_;
    const std::vector<std::string>& selected_;
    const bool importThenDecorate_;
    std::vector<GateRun> runs_;
    std::vector<base::Task> tasks_;
    std::mutex learntLock_; // guards what the runs learn and write while others run
    // Learnt from the decorate workload, which imports the target first: whether it has scalar
    // types and launch cases. Without them the launch-path workloads would only start a worker to
    // skip; so those wait for it.
    std::optional<bool> targetHasScalarTypes_, targetHasLaunchCases_;
    std::optional<size_t> decorateTarget_;
    std::map<Role, size_t> chainedImport_; // by role, the import run its decorate run fills
};

// The lint's part in the gate: with --lint, the static audit of the target's files beside the
// dynamic checks, and where the two agree; with or without it, the statement to change for the
// target's dynamic findings (fix sites), where the lint has one.
void lintTheGate(Report& report, const GateOptions& options, const TargetRef& target,
                 const python::Environment& env) {
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

std::string gateCheckTable() {
    std::vector<std::string> workloads;
    for (const worker::WorkloadEntry* entry : worker::workloadsOf(worker::Command::kGate))
        workloads.push_back(entry->name);
    return report::formatCheckTable(workloads);
}

std::string defaultGateTarget() {
    return (base::dataDir() / "fixtures/targets/frame_cycle_461.py").string();
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
    // Every worker of the run, planned first and then run up to options.jobs at a time (GatePlan).
    GatePlan plan(options, env, selected);
    for (const worker::WorkloadEntry* entry : worker::workloadsOf(worker::Command::kGate)) {
        if (!plan.wanted(*entry)) continue;
        plan.add(entry, Role::kTarget, &target, "");
        if (!targetIsReference && entry->baseline) plan.add(entry, Role::kReference, &reference, "");
    }
    const worker::WorkloadEntry& probeEntry = worker::findWorkload("probe");
    for (const std::string& probe : options.probes) {
        plan.add(&probeEntry, Role::kTarget, &target, probe);
        if (!targetIsReference) plan.add(&probeEntry, Role::kReference, &reference, probe);
    }
    plan.run(options.jobs);

    GateJudgement judgement{selected, target.name, targetIsReference, plan.targetHasScalarTypes()};
    report.results = judgeGate(plan.runs(), judgement);
    lintTheGate(report, options, target, env);
    if (!baseline.is_null()) applyBaseline(report, baseline, budgets);
    return report;
}

} // namespace leakgate::commands
