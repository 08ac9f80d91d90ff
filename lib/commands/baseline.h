// Baselines and budgets: a gate run judged against an earlier one, typically the last good
// release. With a baseline, a check that has a figure on both sides (its `amount`: bytes pinned,
// thousandths of an allocation per call, RSS slope...) fails when the figure grew beyond the
// check's budget, and passes otherwise.
#pragma once

#include "leakgate/report.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace leakgate::commands {

struct Budgets {
    std::map<std::string, std::int64_t> allowedGrowth; // check -> growth allowed, in its own unit
    std::int64_t forCheck(const std::string& check) const;
};

// The defaults: no growth, except the noise the measurements have (launch: 0.01 per call; soak:
// 512 KiB per 1000 steps).
Budgets defaultBudgets();

// A budgets file: `check = amount` lines, `#` comments, check names as the gate reports them.
// Overrides the defaults. Throws UsageError for a line it cannot read or, unless `anyCheck` (the
// gate runs probe plug-ins, whose checks are known only once they ran), an unknown check.
Budgets loadBudgets(const std::string& path, bool anyCheck = false);
// The same, from a budgets file's text; `name` is what the errors call it (its path).
Budgets parseBudgets(const std::string& text, const std::string& name, bool anyCheck = false);

// The JSON of an earlier `leakgate gate --json`. Throws UsageError when it is not one.
nlohmann::json loadBaseline(const std::string& path);
// The same, from the file's text; `name` is what the errors call it (its path).
nlohmann::json parseBaseline(const std::string& text, const std::string& name);

// The sentinel sizes of this run (`--sentinel-mib`, `--device-sentinel-mib`, in bytes): the pinned
// bytes of the `*-sentinels`, `*-frame-cycle`, `*-retained-frame` and `*-device-memory` checks
// count sentinel payloads, so they compare only between runs whose sentinels had the same size.
// Throws UsageError when the baseline's recorded sentinels (its results' `sentinels`) had another
// size, or when it has figures for those checks but records no sentinel to tell the size by.
void checkBaselineSentinels(const nlohmann::json& baseline, const std::string& name,
                            std::int64_t hostBytes, std::int64_t deviceBytes);

void applyBaseline(Report& report, const nlohmann::json& baseline, const Budgets& budgets);

} // namespace leakgate::commands
