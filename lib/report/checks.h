// Every check leakgate's own workloads decide, in one table: its name, the workload that decides
// it, the finding kind that explains its failure, the unit of its figure and the growth a
// baseline allows by default. The worker registry, the gate, baselines, bisect and the writers
// read it here instead of guessing from a name's prefix. A probe plug-in's checks are its own and
// have no row. Adding a check: one row in checks.cpp, and the workload that decides it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace leakgate::report {

struct CheckDef {
    const char* name;     // as reports spell it
    const char* workload; // the workload whose result decides it (lib/worker/registry.h)
    // The finding kind whose findings explain a failure of it (its culprit, its JUnit body), or
    // null where none does: the reason names what keeps it (sentinels), or a figure says all.
    const char* explainedBy;
    const char* unit;    // of its `amount`, as reasons print it after the figure
    const char* amount;  // what its `amount` is, for a person (docs/guide/gate.md)
    std::int64_t budget; // the growth over a baseline allowed by default, in `unit`
    // Whether every result of its workload decides it, so that a worker that died owes it an
    // `error`; false for what a workload reports only where it applies (a scan's sentinels).
    bool owed = true;
    // Whether its figure counts sentinel payloads, so that it compares only with a baseline made
    // with sentinels of the same size.
    bool countsSentinels = false;
};

// In report order: the scan's, then the gate's by workload.
std::span<const CheckDef> checkDefs();
// Null for a name no row has (a plug-in's check, or one a newer worker reported).
const CheckDef* findCheck(std::string_view name);
// The checks `workload` decides, in report order; `owedOnly`: only those every result decides.
std::vector<std::string> checksOf(std::string_view workload, bool owedOnly = false);
// Whether a finding of `kind` explains the check named `check`: its row says so, or, for a check
// with no row, the check is the kind.
bool explains(std::string_view kind, std::string_view check);
// The table for a person (`leakgate gate --list-checks`): each check of `workloads` (all when
// empty) with its workload, the finding that explains it, its figure's unit and default budget.
std::string formatCheckTable(const std::vector<std::string>& workloads = {});

} // namespace leakgate::report
