// The baseline reader (lib/commands/baseline.h, parseBaseline: what loadBaseline reads from a
// --baseline file) and the comparison it feeds (applyBaseline). A text is either a baseline or a
// UsageError; an accepted baseline must then be usable against any report: the baseline's own
// results (when they decode) and a target result that has each of its checks at the extremes of
// an int64, so that the comparison's arithmetic is exercised at its edges.
#include "leakgate/errors.h"
#include "lib/commands/baseline.h"
#include "lib/commands/gate.h"
#include "tests/fuzz/fuzz_support.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace {

using namespace leakgate;

Report judgedReport(const nlohmann::json& baseline) {
    Report report;
    if (auto own = fuzz::decodeReport(baseline)) report = std::move(*own);
    report.command = "gate";
    WorkloadResult extremes;
    extremes.workload = "fuzz";
    for (const nlohmann::json& check : baseline["checks"]) {
        const std::string name = check["name"].get<std::string>();
        for (std::int64_t amount : {std::numeric_limits<std::int64_t>::min(), std::int64_t{-1},
                                    std::int64_t{0}, std::numeric_limits<std::int64_t>::max()})
            extremes.checks.push_back({name, Status::kPass, "measured", amount});
        extremes.checks.push_back({name, Status::kFail, "no figure", std::nullopt});
    }
    report.results.push_back(std::move(extremes));
    return report;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    nlohmann::json baseline;
    try {
        baseline = commands::parseBaseline(text, "fuzz.json");
    } catch (const UsageError&) {
        return 0;
    }
    // The sentinel sizes it was made with: the default ones, and none (a baseline that records
    // other sizes, or counts sentinels it does not record, is a usage error, nothing else).
    const std::pair<std::int64_t, std::int64_t> sizes[] = {{8 << 20, 256ll << 20}, {0, 0}};
    for (const auto& [host, device] : sizes) {
        try {
            commands::checkBaselineSentinels(baseline, "fuzz.json", host, device);
        } catch (const UsageError&) {
        }
    }
    commands::Budgets generous;
    for (const std::string& check : commands::gateChecks())
        generous.allowedGrowth[check] = std::numeric_limits<std::int64_t>::max();
    for (const commands::Budgets& budgets : {commands::defaultBudgets(), generous}) {
        Report report = judgedReport(baseline);
        commands::applyBaseline(report, baseline, budgets);
    }
    return 0;
}
