#include "lib/commands/merge.h"

#include "leakgate/errors.h"
#include "lib/commands/bisect.h"
#include "lib/commands/versions.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>

namespace leakgate::commands {

namespace {

BisectReport readBisectReport(const std::string& file) {
    std::ifstream in(file);
    if (!in) throw UsageError(fmt::format("merge: cannot read {}", file));
    const nlohmann::json document = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (document.is_discarded()) throw UsageError(fmt::format("merge: {} is not JSON", file));
    if (document.value("command", "") != "bisect")
        throw UsageError(fmt::format("merge: {} is not a `leakgate bisect --json` report", file));
    std::optional<BisectReport> report = bisectReportFromJson(document);
    if (!report)
        throw UsageError(
            fmt::format("merge: {} is a bisect report that does not decode (schema {})", file, kSchema));
    return std::move(*report);
}

std::string identity(const BisectReport& report) {
    return fmt::format("package {}{}{}, target {}, Python {}", report.package,
                       report.extras.empty() ? "" : fmt::format("[{}]", fmt::join(report.extras, ",")),
                       report.with.empty() ? "" : fmt::format(" with {}", fmt::join(report.with, ", ")),
                       report.target, report.pythonVersion);
}

} // namespace

BisectReport mergeBisectReports(const std::vector<std::string>& files) {
    if (files.empty()) throw UsageError("merge: give the bisect JSON reports to join");
    BisectReport merged;
    std::map<std::string, std::string> gatedIn; // version -> the file that gated it
    std::map<std::string, BisectRow> rows;
    for (size_t i = 0; i < files.size(); ++i) {
        BisectReport part = readBisectReport(files[i]);
        if (i == 0) {
            merged.package = part.package;
            merged.extras = part.extras;
            merged.with = part.with;
            merged.target = part.target;
            merged.pythonVersion = part.pythonVersion;
        } else if (identity(part) != identity(merged)) {
            throw UsageError(fmt::format("merge: {} is of {}, {} of {}", files[i], identity(part),
                                         files[0], identity(merged)));
        }
        for (const auto& check : part.checks)
            if (std::find(merged.checks.begin(), merged.checks.end(), check) == merged.checks.end())
                merged.checks.push_back(check);
        for (auto& row : part.rows) {
            auto [earlier, fresh] = gatedIn.emplace(row.version, files[i]);
            if (!fresh)
                throw UsageError(fmt::format("merge: {} gated {} as well as {}", files[i], row.version,
                                             earlier->second));
            rows.emplace(row.version, std::move(row));
        }
    }
    std::vector<std::string> versions;
    for (const auto& [version, row] : rows)
        versions.push_back(version);
    const VersionSelection order = selectVersions(versions, std::nullopt, /*pre=*/true);
    for (const auto& version : order.selected)
        merged.rows.push_back(std::move(rows.at(version)));
    merged.versionOrder = order.implementation;
    orderChecksAsTheGate(merged.checks);
    computeTransitions(merged);
    return merged;
}

} // namespace leakgate::commands
