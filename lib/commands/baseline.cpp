#include "lib/commands/baseline.h"

#include "leakgate/errors.h"
#include "lib/commands/gate.h"
#include "lib/report/checks.h"
#include "lib/report/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

namespace leakgate::commands {
namespace {

std::string trim(const std::string& text) {
    auto first = text.find_first_not_of(" \t\r");
    auto last = text.find_last_not_of(" \t\r");
    return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

// A whole decimal integer, nothing else: "1.9e9", "0x10" and "12abc" are not amounts.
std::optional<std::int64_t> parseAmount(const std::string& text) {
    std::int64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
    return value;
}

// What a baseline holds for one check: its figure, when it has one that an int64 holds.
std::optional<std::int64_t> baselineAmount(const nlohmann::json& check) {
    auto amount = check.find("amount");
    if (amount == check.end() || !amount->is_number_integer()) return std::nullopt;
    if (amount->is_number_unsigned() &&
        amount->get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return std::nullopt;
    return amount->get<std::int64_t>();
}

// Configuration files are read only when they are regular files of a sane size: a FIFO or a
// device (`/dev/zero`) would be read without end, before any timeout applies.
constexpr std::uintmax_t kMaxConfigurationBytes = 64u << 20;

void checkReadable(const std::string& path, const char* what) {
    namespace fs = std::filesystem;
    std::error_code error;
    if (!fs::is_regular_file(path, error))
        throw UsageError(fmt::format("the {} {} is not a regular file", what, path));
    if (fs::file_size(path, error) > kMaxConfigurationBytes)
        throw UsageError(
            fmt::format("the {} {} is larger than {} MiB", what, path, kMaxConfigurationBytes >> 20));
}

} // namespace

std::int64_t Budgets::forCheck(const std::string& check) const {
    auto found = allowedGrowth.find(check);
    return found == allowedGrowth.end() ? 0 : found->second;
}

Budgets defaultBudgets() {
    Budgets budgets;
    for (const report::CheckDef& check : report::checkDefs()) {
        if (check.budget != 0) budgets.allowedGrowth[check.name] = check.budget;
    }
    return budgets;
}

Budgets loadBudgets(const std::string& path, bool anyCheck) {
    checkReadable(path, "budgets file");
    std::ifstream in(path);
    if (!in) throw UsageError(fmt::format("cannot read the budgets file {}", path));
    std::ostringstream text;
    text << in.rdbuf();
    return parseBudgets(text.str(), path, anyCheck);
}

Budgets parseBudgets(const std::string& text, const std::string& name, bool anyCheck) {
    std::istringstream in(text);
    Budgets budgets = defaultBudgets();
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        line = trim(line.substr(0, line.find('#')));
        if (line.empty()) continue;
        auto equals = line.find('=');
        std::string check = trim(line.substr(0, equals));
        if (equals == std::string::npos || check.empty()) {
            throw UsageError(fmt::format("{}:{}: expected `check = amount`", name, number));
        }
        if (!anyCheck &&
            std::find(gateChecks().begin(), gateChecks().end(), check) == gateChecks().end()) {
            throw UsageError(fmt::format("{}:{}: unknown check `{}`", name, number, check));
        }
        std::optional<std::int64_t> amount = parseAmount(trim(line.substr(equals + 1)));
        if (!amount || *amount < 0) {
            throw UsageError(fmt::format("{}:{}: the amount must be a whole number, 0 or more, in the "
                                         "check's own unit",
                                         name, number));
        }
        budgets.allowedGrowth[check] = *amount;
    }
    return budgets;
}

nlohmann::json loadBaseline(const std::string& path) {
    checkReadable(path, "baseline");
    std::ifstream in(path);
    if (!in) throw UsageError(fmt::format("cannot read the baseline {}", path));
    std::ostringstream text;
    text << in.rdbuf();
    return parseBaseline(text.str(), path);
}

nlohmann::json parseBaseline(const std::string& text, const std::string& name) {
    nlohmann::json baseline;
    try {
        baseline = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& error) {
        throw UsageError(fmt::format("the baseline {} is not JSON: {}", name, error.what()));
    }
    // Looked at only as strings of an object: json::value() throws its own type_error for `[]`,
    // `0` or a `"schema": 1`, which is not the UsageError (exit 2) this promises.
    auto stringIs = [&](const char* key, const char* expected) {
        auto found = baseline.find(key);
        return found != baseline.end() && found->is_string() && *found == expected;
    };
    if (!baseline.is_object() || !stringIs("schema", kSchema) || !stringIs("command", "gate") ||
        !baseline.contains("checks")) {
        throw UsageError(
            fmt::format("the baseline {} is not the JSON of a `leakgate gate` run ({})", name, kSchema));
    }
    // Every entry checked here, before any worker runs: a bad one is the file's fault.
    const nlohmann::json& checks = baseline["checks"];
    if (!checks.is_array())
        throw UsageError(fmt::format("the baseline {}: `checks` is not a list", name));
    for (size_t i = 0; i < checks.size(); ++i) {
        const nlohmann::json& check = checks[i];
        if (!check.is_object() || !check.contains("name") || !check["name"].is_string())
            throw UsageError(
                fmt::format("the baseline {}: checks[{}] is not a check with a name", name, i));
        if (check.contains("amount") && !check["amount"].is_null() && !baselineAmount(check))
            throw UsageError(
                fmt::format("the baseline {}: checks[{}] (`{}`) has an amount that is not a "
                            "whole number between -2^63 and 2^63-1",
                            name, i, check["name"].get<std::string>()));
    }
    return baseline;
}

void checkBaselineSentinels(const nlohmann::json& baseline, const std::string& name,
                            std::int64_t hostBytes, std::int64_t deviceBytes) {
    // The sizes the baseline's sentinels had, by payload: host, and device (a torch tensor beside
    // each device sentinel has its size).
    std::optional<std::int64_t> baselineHost, baselineDevice;
    auto results = baseline.find("results");
    if (results != baseline.end() && results->is_array()) {
        for (const nlohmann::json& result : *results) {
            if (!result.is_object() || !result.contains("sentinels") || !result["sentinels"].is_array())
                continue;
            for (const nlohmann::json& sentinel : result["sentinels"]) {
                if (!sentinel.is_object() || !sentinel.contains("kind") ||
                    !sentinel["kind"].is_string() || !sentinel.contains("bytes") ||
                    !sentinel["bytes"].is_number_integer())
                    continue;
                const std::string kind = sentinel["kind"];
                const auto bytes = sentinel["bytes"].get<std::int64_t>();
                std::optional<std::int64_t>& size = kind == "host" ? baselineHost : baselineDevice;
                if (size && *size != bytes) {
                    throw UsageError(
                        fmt::format("the baseline {}: its {} sentinels have two sizes ({} and {} "
                                    "bytes): not a run of `leakgate gate`",
                                    name, kind == "host" ? "host" : "device", *size, bytes));
                }
                size = bytes;
            }
        }
    }
    if (baselineHost && *baselineHost != hostBytes) {
        throw UsageError(fmt::format(
            "the baseline {} was made with host sentinels of {}, this run's are {}: the pinned bytes of "
            "the sentinels, frame-cycle and retained-frame checks do not compare (run with "
            "--sentinel-mib "
            "{}, or make the baseline again)",
            name, report::humanBytes(*baselineHost), report::humanBytes(hostBytes),
            *baselineHost >> 20));
    }
    if (baselineDevice && *baselineDevice != deviceBytes) {
        throw UsageError(fmt::format(
            "the baseline {} was made with device sentinels of {}, this run's are {}: the pinned bytes "
            "do "
            "not compare (run with --device-sentinel-mib {}, or make the baseline again)",
            name, report::humanBytes(*baselineDevice), report::humanBytes(deviceBytes),
            *baselineDevice >> 20));
    }
    auto checks = baseline.find("checks");
    if (baselineHost || checks == baseline.end() || !checks->is_array()) return;
    // No sentinel recorded: then no figure that counts sentinel bytes may be compared either.
    for (const nlohmann::json& check : *checks) {
        if (!check.is_object() || !check.contains("name") || !check["name"].is_string()) continue;
        const std::string checkName = check["name"];
        // A plug-in's sentinel check has no row: lib/workloads/probe.cpp names it <check>-sentinels.
        const report::CheckDef* row = report::findCheck(checkName);
        const bool countsSentinels = row ? row->countsSentinels : checkName.ends_with("-sentinels");
        if (countsSentinels && baselineAmount(check)) {
            throw UsageError(
                fmt::format("the baseline {} has a figure for `{}` but records no sentinel: the size "
                            "its pinned bytes were counted with is unknown",
                            name, checkName));
        }
    }
}

void applyBaseline(Report& report, const nlohmann::json& baseline, const Budgets& budgets) {
    for (auto& result : report.results) {
        if (result.role != Role::kTarget) continue;
        for (auto& check : result.checks) {
            if (!check.amount || check.status == Status::kError || check.status == Status::kSkip)
                continue;
            auto earlier = std::find_if(
                baseline["checks"].begin(), baseline["checks"].end(), [&](const nlohmann::json& other) {
                    return other.is_object() && other.value("name", "") == check.name &&
                           baselineAmount(other);
                });
            if (earlier == baseline["checks"].end()) {
                // Nothing to compare with: the check keeps its own verdict.
                check.reason += " (no figure in the baseline)";
                continue;
            }
            const std::int64_t before = *baselineAmount(*earlier);
            const std::int64_t budget = budgets.forCheck(check.name);
            // In 128 bits: no figure of either side can overflow the difference.
            const bool grew = static_cast<__int128>(*check.amount) - before > budget;
            check.status = grew ? Status::kFail : Status::kPass;
            check.reason = fmt::format("{} the baseline's {} to {} (budget +{}); {}",
                                       grew ? "grew beyond its budget from" : "within budget of", before,
                                       *check.amount, budget, check.reason);
        }
    }
}

} // namespace leakgate::commands
