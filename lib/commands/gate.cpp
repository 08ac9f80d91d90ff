#include "lib/commands/gate.h"

#include "lib/commands/baseline.h"
#include "lib/base/data_dir.h"
#include "lib/base/errors.h"
#include "lib/commands/gate_lint.h"
#include "lib/workloads/launch_protocol.h"
#include "lib/commands/lint.h"
#include "lib/base/log.h"
#include "lib/python/environment.h"
#include "lib/report/writers/text.h"
#include "lib/worker/client.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <unistd.h>

namespace leakgate {
namespace {

namespace fs = std::filesystem;

// Targets that leakgate ships, by name: an importable module, or a target file under the data
// directory.
struct BuiltinTarget {
    const char* name;
    const char* module;
    const char* file;
};
constexpr BuiltinTarget kBuiltinTargets[] = {
    {"reference", "leakgate_reference", nullptr},
    {"cute", nullptr, "lib/data/targets/cute.py"}, // nvidia-cutlass-dsl: run with --python in its venv
};

// The gate's workloads and the checks each decides (named <workload>-<check>). `baseline`: the
// reference runs in its own worker and the target is compared with it here; otherwise the
// workload compares inside its worker (launch) or against absolute truth (values).
// `scalarTypes`: the workload is on the launch path, which needs the target's `scalar_types`.
struct GateWorkload {
    std::string name;
    std::vector<std::string> checks;
    bool baseline;
    bool scalarTypes;
};
const std::vector<GateWorkload> kWorkloads = {
    {"decorate", {"sentinels", "frame-cycle", "retained-frame", "device-memory"}, true, false},
    {"import", {"sentinels", "frame-cycle", "retained-frame", "device-memory"}, true, false},
    {"launch", {"allocations", "net-blocks", "cyclic-garbage"}, false, true},
    {"values", {"encoding", "bounded"}, false, true},
    {"soak", {"growth"}, true, true},
    {"device", {"echo", "allocations", "cyclic-garbage"}, false, true},
};

// RSS growth per 1000 soak steps beyond the reference's that is a finding: well above the
// jitter of the loop's own long-lived buffers (up to 64 MiB turning over).
constexpr std::int64_t kSoakSlopeBudget = 512 * 1024;

nlohmann::json resolveTarget(const std::string& target) {
    for (const auto& builtin : kBuiltinTargets) {
        if (target != builtin.name) continue;
        if (builtin.module) return {{"name", builtin.name}, {"module", builtin.module}};
        return {{"name", builtin.name}, {"path", (dataDir() / builtin.file).string()}};
    }
    if (fs::is_regular_file(target)) {
        return {{"name", fs::path(target).stem().string()}, {"path", fs::absolute(target).string()}};
    }
    std::vector<std::string> names;
    for (const auto& builtin : kBuiltinTargets)
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
            for (const auto& workload : kWorkloads)
                workloads.push_back(workload.name);
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
            check.reason =
                fmt::format("retains no more than the reference ({} vs {} bytes): {}",
                            check.amount.value_or(0), baseline->amount.value_or(0), check.reason);
        }
    }
}

} // namespace

const std::vector<std::string>& gateChecks() {
    static const std::vector<std::string> checks = [] {
        std::vector<std::string> names;
        for (const auto& workload : kWorkloads) {
            for (const auto& check : workload.checks)
                names.push_back(workload.name + "-" + check);
        }
        return names;
    }();
    return checks;
}

std::string defaultGateTarget() {
    return (dataDir() / "fixtures/targets/frame_cycle_461.py").string();
}

Report runGate(const GateOptions& options) {
    const std::string targetName = options.target.empty() ? defaultGateTarget() : options.target;
    nlohmann::json target = resolveTarget(targetName);
    nlohmann::json reference = resolveTarget("reference");
    std::vector<std::string> selected = selectChecks(options.checks);
    // Read before anything runs: a bad baseline or budgets file is a usage error.
    nlohmann::json baseline =
        options.baseline.empty() ? nlohmann::json() : loadBaseline(options.baseline);
    Budgets budgets = options.budgets.empty() ? defaultBudgets() : loadBudgets(options.budgets);
    python::Environment env =
        python::queryEnvironment(options.python.value_or(python::buildPythonExecutable()));
    const bool targetIsReference =
        target.value("module", "") == reference.at("module").get<std::string>();

    Report report;
    report.command = "gate";
    report.pythonVersion = env.version;
    report.pythonExecutable = env.executable;
    // Learnt from the decorate workload, which imports the target first: whether it has scalar
    // types. Without them the launch-path workloads would only start a worker to skip.
    std::optional<bool> targetHasScalarTypes;
    for (const auto& [workload, workloadChecks, baseline, needsScalarTypes] : kWorkloads) {
        bool wanted = std::any_of(selected.begin(), selected.end(), [&](const std::string& check) {
            return check.starts_with(workload + "-");
        });
        if (!wanted) continue;
        if (needsScalarTypes && targetHasScalarTypes == false) {
            WorkloadResult skipped;
            skipped.workload = workload;
            skipped.subject = target.at("name").get<std::string>();
            skipped.role = "target";
            for (const auto& check : workloadChecks) {
                if (isSelected(selected, workload + "-" + check))
                    skipped.checks.push_back(
                        {workload + "-" + check, Status::kSkip, kNoScalarTypesReason});
            }
            report.results.push_back(std::move(skipped));
            continue;
        }
        std::map<std::string, WorkloadResult> byRole;
        for (const char* role : {"target", "reference"}) {
            if (std::string(role) == "reference" && (targetIsReference || !baseline)) continue;
            if (std::string(role) == "reference") {
                // No baseline is needed for checks the target skipped (no scalar types, say).
                const auto& checks = byRole.at("target").checks;
                bool allSkipped =
                    std::all_of(checks.begin(), checks.end(),
                                [](const CheckResult& check) { return check.status == Status::kSkip; });
                if (allSkipped && !checks.empty()) continue;
            }
            const nlohmann::json& subject = std::string(role) == "target" ? target : reference;
            worker::WorkerRequest request;
            request.spec = {{"workload", workload},
                            {"subject", subject.at("name")},
                            {"target", subject},
                            {"role", role},
                            {"sentinel_bytes", options.sentinelBytes},
                            {"device_sentinel_bytes", options.deviceSentinelBytes},
                            {"soak_steps", options.soakSteps},
                            {"soak_seconds", options.soakSeconds},
                            {"distinct_values", options.distinctValues},
                            {"calls", options.launchCalls},
                            {"runs", options.launchRuns},
                            {"environment", env},
                            {"argv", {"leakgate-gate"}}};
            request.timeout = options.timeout;
            request.forwardOutput = options.forwardOutput;
            if (::isatty(STDERR_FILENO)) {
                // Progress for a person watching: the soak alone takes its whole budget.
                log::info("{} on {}{}{}", workload, subject.at("name").get<std::string>(),
                          std::string(role) == "reference" ? " (reference)" : "",
                          workload == "soak" ? fmt::format(", about {:.0f} s", options.soakSeconds)
                                             : "");
            }
            WorkloadResult result = worker::runInWorker(request);
            result.role = role;
            if (workload == "decorate" && std::string(role) == "target" &&
                result.details.contains("scalar_types")) {
                targetHasScalarTypes = !result.details["scalar_types"].empty();
            }
            // Keep the selected checks; a worker that died owes each of them an `error`.
            std::erase_if(result.checks,
                          [&](const CheckResult& check) { return !isSelected(selected, check.name); });
            for (const auto& check : workloadChecks) {
                std::string name = workload + "-" + check;
                bool decided = std::any_of(result.checks.begin(), result.checks.end(),
                                           [&](const CheckResult& c) { return c.name == name; });
                if (!decided && isSelected(selected, name)) {
                    result.checks.push_back(
                        {name, Status::kError, result.error ? result.error->message : "not run"});
                }
            }
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
        if (!targetIsReference && baseline) {
            compareWithReference(byRole.at("target"),
                                 referenceResult == byRole.end() ? nullptr : &referenceResult->second);
        }
        report.results.push_back(std::move(byRole.at("target")));
        if (referenceResult != byRole.end())
            report.results.push_back(std::move(referenceResult->second));
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
    }
    if (!baseline.is_null()) applyBaseline(report, baseline, budgets);
    return report;
}

} // namespace leakgate
