#include "lib/commands/bisect.h"

#include "lib/commands/builtin_targets.h"
#include "lib/commands/environments.h"
#include "leakgate/errors.h"
#include "lib/base/log.h"
#include "lib/python/environment.h"

#include <fmt/format.h>

#include <algorithm>

namespace leakgate {

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

} // namespace

BisectReport runBisect(const BisectOptions& requested) {
    BisectOptions options = requested;
    const std::string target = options.gate.target.empty() ? "cute" : options.gate.target;
    options.package = packageOf(options, target);
    std::vector<std::string> versions = options.versions;
    if (versions.empty()) {
        if (options.from.empty() || options.to.empty()) {
            throw UsageError("bisect needs --versions A,B,... or --from A --to B");
        }
        for (const auto& version : listReleases(options.package)) {
            if (compareVersions(version, options.from) >= 0 &&
                compareVersions(version, options.to) <= 0) {
                versions.push_back(version);
            }
        }
        if (versions.empty()) {
            throw UsageError(fmt::format("no release of {} from {} to {}", options.package, options.from,
                                         options.to));
        }
    }

    BisectReport report;
    report.package = options.package;
    report.target = target;
    report.pythonVersion = python::embeddedPythonVersion();
    for (const auto& version : versions) { // one after another: the machine's cores and memory
        BisectRow row;
        row.version = version;
        log::info("bisect: {}=={}", options.package, version);
        try {
            GateOptions gate = options.gate;
            gate.target = report.target;
            gate.python = ensureReleaseEnvironment(options.package, version, options.installTimeout);
            row.report = runGate(gate);
            for (const auto& result : row.report->results) {
                if (result.role != "target") continue;
                for (const auto& check : result.checks) {
                    row.statuses[check.name] = check.status;
                    if (std::find(report.checks.begin(), report.checks.end(), check.name) ==
                        report.checks.end()) {
                        report.checks.push_back(check.name);
                    }
                }
            }
        } catch (const UsageError&) {
            throw; // the command line is wrong for every version alike
        } catch (const Error& error) {
            row.error = error.what();
        }
        report.rows.push_back(std::move(row));
    }
    // Order the table's checks as the gate does.
    std::stable_sort(
        report.checks.begin(), report.checks.end(), [](const std::string& a, const std::string& b) {
            auto rank = [](const std::string& name) {
                return std::find(gateChecks().begin(), gateChecks().end(), name) - gateChecks().begin();
            };
            return rank(a) < rank(b);
        });
    std::vector<const BisectRow*> ordered;
    for (const auto& row : report.rows)
        ordered.push_back(&row);
    std::stable_sort(ordered.begin(), ordered.end(), [](const BisectRow* a, const BisectRow* b) {
        return compareVersions(a->version, b->version) < 0;
    });
    for (const auto& check : report.checks) {
        for (const BisectRow* row : ordered) {
            auto found = row->statuses.find(check);
            if (found == row->statuses.end()) continue;
            if (found->second == Status::kFail && !report.firstBad.count(check))
                report.firstBad[check] = row->version;
            if (found->second == Status::kPass && !report.firstGood.count(check))
                report.firstGood[check] = row->version;
        }
    }
    return report;
}

} // namespace leakgate
