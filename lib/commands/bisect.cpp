#include "lib/commands/bisect.h"

#include "leakgate/errors.h"
#include "lib/base/log.h"
#include "lib/base/task_pool.h"
#include "lib/commands/builtin_targets.h"
#include "lib/commands/cache.h"
#include "lib/commands/environments.h"
#include "lib/commands/versions.h"
#include "lib/python/environment.h"
#include "lib/report/checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace leakgate::commands {

namespace {

// The package whose releases are gated: --package, else the built-in target's own.
std::string packageOf(const BisectOptions& options, const std::string& target) {
    if (!options.package.empty()) return options.package;
    const BuiltinTarget* builtin = findBuiltinTarget(target);
    if (builtin && builtin->pypiPackage) return builtin->pypiPackage;
    throw UsageError(fmt::format("bisect --target {}: not a built-in DSL target, so --package is needed "
                                 "(the PyPI package whose releases to gate)",
                                 target));
}

// The releases to gate, oldest first: an explicit --versions list as given (ordered), a
// specifier set (--versions ">=4.6,<4.8", or --from/--to) matched against the index's releases.
VersionSelection releasesToGate(const BisectOptions& options) {
    const auto specifierParts =
        std::count_if(options.versions.begin(), options.versions.end(), isSpecifier);
    if (!options.versions.empty() && specifierParts == 0) {
        VersionSelection selection = selectVersions(options.versions, std::nullopt, /*pre=*/true);
        if (!selection.invalid.empty()) {
            throw UsageError(fmt::format("--versions: `{}` is not a PEP 440 version",
                                         fmt::join(selection.invalid, "`, `")));
        }
        return selection;
    }
    std::string specifier;
    if (!options.versions.empty()) {
        if (specifierParts != static_cast<std::ptrdiff_t>(options.versions.size())) {
            throw UsageError(fmt::format("--versions {}: either a list of versions or one specifier set "
                                         "(>=4.6,<4.8), not both",
                                         fmt::join(options.versions, ",")));
        }
        if (!options.from.empty() || !options.to.empty())
            throw UsageError("--versions with a specifier set, or --from/--to: one of them");
        specifier = fmt::format("{}", fmt::join(options.versions, ","));
    } else if (!options.from.empty() && !options.to.empty()) {
        specifier = fmt::format(">={},<={}", options.from, options.to);
    } else {
        throw UsageError("bisect needs --versions A,B,... or a specifier set (--versions '>=4.6,<4.8') "
                         "or --from A --to B");
    }
    VersionSelection selection =
        selectVersions(listReleases(options.package, options.pre), specifier, options.pre);
    if (selection.selected.empty()) {
        throw UsageError(fmt::format("no release of {} matches {}{}", options.package, specifier,
                                     options.pre ? "" : " (pre-releases need --pre)"));
    }
    return selection;
}

// A holder's route as far as its container (`sys.modules['taichi.lang.impl'].pytaichi.kernels`:
// no key, no position, no field of the entry, which differ with whichever object came out newest).
// A route that starts at a named object keeps the name (`function `_log_traced_frames``, not
// `function`).
std::string containerOf(const std::string& route) {
    size_t from = 0;
    if (route.starts_with("sys.modules['")) {
        from = route.find("']") + 2;
    } else if (size_t space = route.find(' ');
               space != std::string::npos && route.compare(space, 2, " `") == 0) {
        from = route.find('`', space + 2) + 1; // module `m`, function `f`: through the name
    }
    return route.substr(0, route.find_first_of("[ ", from));
}

// How a finding names its culprit, stable from release to release (no line numbers, no counts).
std::string culpritNamed(const Finding& finding) {
    if (!finding.frames.empty()) {
        const FrameInfo& frame = finding.frames.front();
        const std::string file = std::filesystem::path(frame.file).filename().string();
        // A frame of leakgate's own workload (the units module, leakgate_kernels.py) is what is
        // kept, not where the fix goes: the edge that keeps it is ("._decorator_frame keeps a frame").
        if (file.starts_with("leakgate_") && !finding.path.empty())
            return fmt::format("{} keeps a frame", finding.path.back().label);
        return fmt::format("{} ({})", frame.function, file);
    }
    if (!finding.allocationSites.empty())
        return std::filesystem::path(finding.allocationSites.front().file).filename().string();
    if (!finding.cycleShapes.empty()) return "cycle of " + finding.cycleShapes.front().types;
    // What stays per decoration or launch: its holder is the culprit, as far as the container;
    // without one, the commonest types kept, in name order. Not the form: equal forms (`kernel`,
    // `jit`) trade the lead.
    if (!finding.keptHolders.empty()) return "held by " + containerOf(finding.keptHolders.front().route);
    if (!finding.keptTypes.empty()) {
        std::vector<std::string> types;
        for (const KeptType& kept : finding.keptTypes) {
            if (types.size() == 3) break;
            types.push_back(fmt::format("`{}`", kept.type));
        }
        std::sort(types.begin(), types.end());
        return fmt::format("keeps {}", fmt::join(types, ", "));
    }
    // The summary without its figures ("1.00 `function` per decoration"), so that two releases
    // failing the same way do not read as a change of culprit.
    std::string named;
    const std::string& summary = finding.summary;
    for (size_t i = 0; i < summary.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(summary[i]))) {
            named += summary[i];
            continue;
        }
        named += 'N';
        while (i + 1 < summary.size() && (std::isdigit(static_cast<unsigned char>(summary[i + 1])) ||
                                          summary[i + 1] == '.' || summary[i + 1] == ','))
            ++i;
    }
    return named;
}

} // namespace

std::string culpritOf(const WorkloadResult& result, const CheckResult& check) {
    if (check.status != Status::kFail) return "";
    // Sentinels kept for good have their holder in the check's own reason (torch 2.1 to 2.3's
    // `_PYNVML_ERR`): that is what keeps them, not a frame cycle beside it.
    if (check.name.ends_with("-sentinels")) {
        auto holders = result.details.find("never_freed_held_by");
        if (holders != result.details.end() && holders->is_array() && !holders->empty() &&
            holders->front().contains("route") && holders->front()["route"].is_string())
            return "held by " + containerOf(holders->front()["route"].get<std::string>());
    }
    if (result.findings.empty()) return "";
    for (const Finding& finding : result.findings)
        if (report::explains(finding.kind, check.name)) return culpritNamed(finding);
    return culpritNamed(result.findings.front());
}

void orderChecksAsTheGate(std::vector<std::string>& checks) {
    std::stable_sort(checks.begin(), checks.end(), [](const std::string& a, const std::string& b) {
        auto rank = [](const std::string& name) {
            return std::find(gateChecks().begin(), gateChecks().end(), name) - gateChecks().begin();
        };
        return rank(a) < rank(b);
    });
}

BisectReport runBisect(const BisectOptions& requested) {
    BisectOptions options = requested;
    const std::string target = options.gate.target.empty() ? "cute" : options.gate.target;
    options.package = packageOf(options, target);
    if (!options.pythonVersion.empty() && options.pythonVersion != python::embeddedPythonVersion()) {
        throw UsageError(fmt::format(
            "bisect --python {0}: this build embeds Python {1}, and one build gates one Python; build "
            "one "
            "for {0} (scripts/build.sh $(pyenv root)/versions/{0}.N/bin/python3 build-{0}) and run "
            "build-{0}/leakgate bisect",
            options.pythonVersion, python::embeddedPythonVersion()));
    }
    for (const std::string& requirement : options.with) {
        // Given to pip or uv as a requirement: never as one of their options.
        if (requirement.empty() || requirement.front() == '-' ||
            requirement.find_first_not_of(" \t") == std::string::npos)
            throw UsageError(
                fmt::format("bisect --with {:?}: give a requirement (numpy<2.5, setuptools), "
                            "not an option or nothing",
                            requirement));
    }
    const Installer installer = chooseInstaller(options.installer);
    const VersionSelection releases = releasesToGate(options);

    BisectReport report;
    report.package = options.package;
    report.extras = options.extras;
    report.with = options.with;
    report.target = target;
    report.pythonVersion = python::embeddedPythonVersion();
    report.versionOrder = releases.implementation;
    std::vector<std::string> versions;
    for (size_t i = 0; i < releases.selected.size(); ++i) // --shard I/N: every N-th, from the I-th
        if (static_cast<int>(i % options.shards) == options.shard - 1)
            versions.push_back(releases.selected[i]);
    report.rows.resize(versions.size());
    if (versions.empty())
        base::log::info("bisect: shard {}/{} holds none of the {} releases", options.shard,
                        options.shards, releases.selected.size());

    // Each release in its own venv and its own gate workers: independent processes, so -j N runs
    // N of them at once (the measurements are per process). A usage error stops every job.
    std::vector<base::Task> tasks;
    for (size_t i = 0; i < versions.size(); ++i) {
        tasks.push_back({[&, i] {
            BisectRow& row = report.rows[i];
            row.version = versions[i];
            base::log::info("bisect: {}=={}", options.package, row.version);
            try {
                GateOptions gate = options.gate;
                gate.target = report.target;
                gate.python = ensureReleaseEnvironment(
                    {options.package, options.extras, row.version, options.with}, options.installTimeout,
                    installer);
                row.report = runGate(gate);
                for (const auto& result : row.report->results) {
                    if (result.role != Role::kTarget) continue;
                    for (const auto& check : result.checks)
                        row.cells[check.name] = {check.status, check.amount, culpritOf(result, check)};
                }
            } catch (const UsageError&) {
                throw; // the command line is wrong for every version alike: runTasks stops them all
            } catch (const std::exception& error) { // a release that could not be gated
                row.error = error.what();
            }
        }});
    }
    base::runTasks(tasks, options.jobs);
    for (const auto& row : report.rows)
        for (const auto& [check, cell] : row.cells)
            if (std::find(report.checks.begin(), report.checks.end(), check) == report.checks.end())
                report.checks.push_back(check);
    orderChecksAsTheGate(report.checks);
    if (options.shards > 1) report.shard = fmt::format("{}/{}", options.shard, options.shards);
    computeTransitions(report);
    base::log::info("{}", cacheSummaryLine(readCache()));
    return report;
}

} // namespace leakgate::commands
