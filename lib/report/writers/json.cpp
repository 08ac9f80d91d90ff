#include "lib/report/writers/json.h"

namespace leakgate::report {

using nlohmann::json;

json toJson(const Report& report) {
    // `checks` and `findings` are flattened across workloads (each tagged with its workload) so
    // that CI scripts need not walk `results`; `results` keeps the per-workload view.
    json checks = json::array();
    json findings = json::array();
    for (const auto& result : report.results) {
        if (result.role != Role::kTarget) continue; // the baseline stays in `results`
        for (const auto& check : result.checks) {
            json entry = check;
            entry["workload"] = result.workload;
            checks.push_back(std::move(entry));
        }
        for (const auto& finding : result.findings) {
            json entry = finding;
            entry["workload"] = result.workload;
            findings.push_back(std::move(entry));
        }
    }
    return json{{"schema", kSchema},
                {"tool", {{"name", "leakgate"}, {"version", LEAKGATE_VERSION}}},
                {"command", report.command},
                {"python", {{"version", report.pythonVersion}, {"executable", report.pythonExecutable}}},
                {"exit_code", static_cast<int>(report.exitCode())},
                {"results", report.results},
                {"checks", std::move(checks)},
                {"findings", std::move(findings)}};
}

std::string formatJson(const Report& report) {
    return toJson(report).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

namespace {

json cellJson(const BisectCell& cell) {
    return {{"status", toString(cell.status)},
            {"amount", cell.amount ? json(*cell.amount) : json(nullptr)},
            {"culprit", cell.culprit.empty() ? json(nullptr) : json(cell.culprit)}};
}

} // namespace

std::string formatBisectJson(const BisectReport& report) {
    json versions = json::array();
    for (const auto& row : report.rows) {
        json statuses = json::object(), cells = json::object();
        for (const auto& [check, cell] : row.cells) {
            statuses[check] = toString(cell.status);
            cells[check] = cellJson(cell);
        }
        versions.push_back(
            {{"version", row.version},
             // A release whose gate errored anywhere was not measured whole.
             {"status", row.error || (row.report && row.report->hasErrors()) ? "error" : "ok"},
             {"error", row.error ? json(*row.error) : json(nullptr)},
             {"checks", statuses},
             {"cells", cells},
             {"report", row.report ? toJson(*row.report) : json(nullptr)}});
    }
    json transitions = json::array();
    for (const auto& transition : report.transitions) {
        json changes = json::array();
        for (const auto& change : transition.changes) {
            changes.push_back({{"check", change.check},
                               {"kind", changeKind(change)},
                               {"before", cellJson(change.before)},
                               {"after", cellJson(change.after)}});
        }
        transitions.push_back({{"from", transition.from},
                               {"to", transition.to},
                               {"across", transition.across},
                               {"changes", changes}});
    }
    return json{{"schema", kSchema},
                {"tool", {{"name", "leakgate"}, {"version", LEAKGATE_VERSION}}},
                {"command", "bisect"},
                {"package", report.package},
                {"extras", report.extras},
                {"with", report.with},
                {"target", report.target},
                {"python", {{"version", report.pythonVersion}}},
                {"version_order", report.versionOrder},
                {"shard", report.shard.empty() ? json(nullptr) : json(report.shard)},
                {"exit_code", static_cast<int>(report.exitCode())},
                {"checks", report.checks},
                {"versions", versions},
                {"transitions", transitions},
                {"first_bad", report.firstBad},
                {"first_good", report.firstGood}}
               .dump(2, ' ', false, json::error_handler_t::replace) +
           "\n";
}

} // namespace leakgate::report
