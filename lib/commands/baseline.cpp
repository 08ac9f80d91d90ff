#include "lib/commands/baseline.h"

#include "lib/base/errors.h"
#include "lib/commands/gate.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace leakgate {
namespace {

std::string trim(const std::string& text) {
    auto first = text.find_first_not_of(" \t\r");
    auto last = text.find_last_not_of(" \t\r");
    return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

} // namespace

std::int64_t Budgets::forCheck(const std::string& check) const {
    auto found = allowedGrowth.find(check);
    return found == allowedGrowth.end() ? 0 : found->second;
}

Budgets defaultBudgets() {
    Budgets budgets;
    for (const char* check : {"launch-allocations", "launch-net-blocks", "launch-cyclic-garbage",
                              "device-allocations", "device-cyclic-garbage"}) {
        budgets.allowedGrowth[check] = 10; // thousandths per call
    }
    budgets.allowedGrowth["soak-growth"] = 512 * 1024; // bytes per 1000 steps
    return budgets;
}

Budgets loadBudgets(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw UsageError(fmt::format("cannot read the budgets file {}", path));
    Budgets budgets = defaultBudgets();
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        line = trim(line.substr(0, line.find('#')));
        if (line.empty()) continue;
        auto equals = line.find('=');
        std::string check = trim(line.substr(0, equals));
        if (equals == std::string::npos || check.empty()) {
            throw UsageError(fmt::format("{}:{}: expected `check = amount`", path, number));
        }
        if (std::find(gateChecks().begin(), gateChecks().end(), check) == gateChecks().end()) {
            throw UsageError(fmt::format("{}:{}: unknown check `{}`", path, number, check));
        }
        try {
            budgets.allowedGrowth[check] = std::stoll(trim(line.substr(equals + 1)));
        } catch (const std::exception&) {
            throw UsageError(fmt::format("{}:{}: the amount must be an integer", path, number));
        }
    }
    return budgets;
}

nlohmann::json loadBaseline(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw UsageError(fmt::format("cannot read the baseline {}", path));
    nlohmann::json baseline;
    try {
        baseline = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& error) {
        throw UsageError(fmt::format("the baseline {} is not JSON: {}", path, error.what()));
    }
    if (baseline.value("schema", "") != kSchema || baseline.value("command", "") != "gate" ||
        !baseline.contains("checks")) {
        throw UsageError(
            fmt::format("the baseline {} is not the JSON of a `leakgate gate` run ({})", path, kSchema));
    }
    return baseline;
}

void applyBaseline(Report& report, const nlohmann::json& baseline, const Budgets& budgets) {
    for (auto& result : report.results) {
        if (result.role != "target") continue;
        for (auto& check : result.checks) {
            if (!check.amount || check.status == Status::kError || check.status == Status::kSkip)
                continue;
            auto earlier = std::find_if(
                baseline["checks"].begin(), baseline["checks"].end(), [&](const nlohmann::json& other) {
                    return other.value("name", "") == check.name && other.contains("amount") &&
                           other["amount"].is_number_integer();
                });
            if (earlier == baseline["checks"].end()) {
                check.reason += " (no figure in the baseline)";
                continue;
            }
            const std::int64_t before = (*earlier)["amount"].get<std::int64_t>();
            const std::int64_t budget = budgets.forCheck(check.name);
            const bool grew = *check.amount - before > budget;
            check.status = grew ? Status::kFail : Status::kPass;
            check.reason = fmt::format("{} the baseline's {} to {} (budget +{}); {}",
                                       grew ? "grew beyond its budget from" : "within budget of", before,
                                       *check.amount, budget, check.reason);
        }
    }
}

} // namespace leakgate
