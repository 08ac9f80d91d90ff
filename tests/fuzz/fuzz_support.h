// What the fuzz harnesses share: a report decoded from leakgate's own JSON (schema leakgate/1, the
// README's "JSON" section), with the library's WorkloadResult codec for its results, and the one
// way a harness says an invariant broke.
#pragma once

#include "leakgate/report.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace leakgate::fuzz {

// A broken invariant is a crash for libFuzzer: it keeps the input and stops.
[[noreturn]] inline void fail(std::string_view what) {
    std::fprintf(stderr, "fuzz invariant broken: %.*s\n", static_cast<int>(what.size()), what.data());
    std::abort();
}

// The JSON text of the input, or nothing when it is not JSON (nlohmann's parser is not under test
// here; what leakgate makes of the JSON is).
inline std::optional<nlohmann::json> parseJson(const std::uint8_t* data, size_t size) {
    nlohmann::json parsed =
        nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) return std::nullopt;
    return parsed;
}

// The Report that a `leakgate scan|gate|lint --json` document describes; nothing when its
// command, python or results do not decode. Throws nothing.
inline std::optional<Report> decodeReport(const nlohmann::json& in) {
    try {
        Report report;
        in.at("command").get_to(report.command);
        const nlohmann::json& python = in.at("python");
        python.at("version").get_to(report.pythonVersion);
        if (python.contains("executable")) python.at("executable").get_to(report.pythonExecutable);
        in.at("results").get_to(report.results);
        return report;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

// The BisectReport that a `leakgate bisect --json` document describes (each version's `report` a
// gate document); nothing when it does not decode. Throws nothing.
inline std::optional<BisectReport> decodeBisectReport(const nlohmann::json& in) {
    try {
        BisectReport bisect;
        in.at("package").get_to(bisect.package);
        in.at("target").get_to(bisect.target);
        in.at("python").at("version").get_to(bisect.pythonVersion);
        in.at("checks").get_to(bisect.checks);
        for (const nlohmann::json& version : in.at("versions")) {
            BisectRow row;
            version.at("version").get_to(row.version);
            if (!version.at("error").is_null()) row.error = version.at("error").get<std::string>();
            for (const auto& [check, status] : version.at("checks").items())
                row.cells[check].status = statusFromString(status.get<std::string>());
            if (version.contains("cells")) {
                for (const auto& [check, cell] : version.at("cells").items()) {
                    if (cell.contains("amount") && !cell.at("amount").is_null())
                        row.cells[check].amount = cell.at("amount").get<std::int64_t>();
                    if (cell.contains("culprit") && !cell.at("culprit").is_null())
                        row.cells[check].culprit = cell.at("culprit").get<std::string>();
                }
            }
            if (!version.at("report").is_null()) {
                row.report = decodeReport(version.at("report"));
                if (!row.report) return std::nullopt;
            }
            bisect.rows.push_back(std::move(row));
        }
        if (in.contains("extras")) in.at("extras").get_to(bisect.extras);
        computeTransitions(bisect);
        return bisect;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

} // namespace leakgate::fuzz
