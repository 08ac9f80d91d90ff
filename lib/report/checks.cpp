#include "lib/report/checks.h"

#include <fmt/format.h>

#include <algorithm>

namespace leakgate::report {
namespace {

// The unit of the loops' per-call figures: a figure of 0.01 per call reads 10.
constexpr const char* kPerCall = "thousandths per call";
constexpr const char* kPerCallAmount =
    "the highest per-call (per-launch) figure of any case, in thousandths";
// Within the every-run rule's margin: 0.01 per call.
constexpr std::int64_t kPerCallBudget = 10;
constexpr const char* kSentinelAmount = "bytes of sentinel payload pinned";
constexpr const char* kPinnedAmount = "bytes the findings pin";
constexpr const char* kDeviceAmount = "device bytes held after the workload returned";

constexpr CheckDef kChecks[] = {
    // scan: one script, judged on its own (no reference, no baseline).
    {"frame-cycle", "scan", "frame-cycle", "bytes", kPinnedAmount, 0},
    {"cyclic-garbage", "scan", "cyclic-garbage", "bytes", "bytes the over-limit cycles pin", 0},
    {"retained-frame", "scan", "retained-frame", "bytes", kPinnedAmount, 0},
    {"held-growth", "scan", "held-growth", "bytes", "bytes the over-limit containers keep", 0},
    // Only where the script placed sentinels; device memory only where it used CUDA, and the
    // check is `skip` otherwise.
    {"sentinels", "scan", nullptr, "bytes", kSentinelAmount, 0, false},
    {"device-memory", "scan", nullptr, "bytes", "device bytes freed only by the collection", 0, false},

    {"decorate-sentinels", "decorate", nullptr, "bytes", kSentinelAmount, 0, true, true},
    {"decorate-frame-cycle", "decorate", "frame-cycle", "bytes", kPinnedAmount, 0, true, true},
    {"decorate-retained-frame", "decorate", "retained-frame", "bytes", kPinnedAmount, 0, true, true},
    {"decorate-device-memory", "decorate", nullptr, "bytes", kDeviceAmount, 0, true, true},

    {"import-sentinels", "import", nullptr, "bytes", kSentinelAmount, 0, true, true},
    {"import-frame-cycle", "import", "frame-cycle", "bytes", kPinnedAmount, 0, true, true},
    {"import-retained-frame", "import", "retained-frame", "bytes", kPinnedAmount, 0, true, true},
    {"import-device-memory", "import", nullptr, "bytes", kDeviceAmount, 0, true, true},

    {"decorations-cyclic-garbage", "decorations", "decorations-cyclic-garbage",
     "thousandths per decoration",
     "the highest per-decoration (per-instance) figure of any form, in thousandths", kPerCallBudget},
    // Its figure moves by up to 17 thousandths from one process to the next where nothing is kept
    // (lib/workloads/decorations.cpp): the budget is the check's own rule.
    {"decorations-retained", "decorations", "decorations-retained", "thousandths per decoration",
     "the highest per-decoration figure of any form, in thousandths", 50},

    {"launch-allocations", "launch", "launch-allocations", kPerCall, kPerCallAmount, kPerCallBudget},
    {"launch-net-blocks", "launch", "launch-net-blocks", kPerCall, kPerCallAmount, kPerCallBudget},
    {"launch-cyclic-garbage", "launch", "launch-cyclic-garbage", kPerCall, kPerCallAmount,
     kPerCallBudget},

    {"launch-real-net-blocks", "launch-real", "launch-real-net-blocks", kPerCall, kPerCallAmount,
     kPerCallBudget},
    {"launch-real-cyclic-garbage", "launch-real", "launch-real-cyclic-garbage", kPerCall, kPerCallAmount,
     kPerCallBudget},
    {"launch-real-retained", "launch-real", "launch-real-retained", kPerCall, kPerCallAmount,
     kPerCallBudget},

    {"values-encoding", "values", nullptr, "values", "packed values with wrong bytes", 0},
    {"values-bounded", "values", nullptr, "blocks",
     "blocks kept by the second half of the distinct-value stream (of the types whose growth the "
     "third segment confirmed)",
     0},

    // RSS growth per 1000 soak steps beyond the reference's: well above the jitter of the loop's
    // own long-lived buffers (up to 64 MiB turning over).
    {"soak-growth", "soak", nullptr, "bytes per 1000 steps", "RSS slope, bytes per 1000 steps",
     512 * 1024},

    {"device-echo", "device", nullptr, "values", "launched values that arrived wrong", 0},
    {"device-allocations", "device", nullptr, kPerCall, kPerCallAmount, kPerCallBudget},
    {"device-cyclic-garbage", "device", nullptr, kPerCall, kPerCallAmount, kPerCallBudget},
};

} // namespace

std::span<const CheckDef> checkDefs() {
    return kChecks;
}

const CheckDef* findCheck(std::string_view name) {
    for (const CheckDef& check : kChecks) {
        if (name == check.name) return &check;
    }
    return nullptr;
}

std::vector<std::string> checksOf(std::string_view workload, bool owedOnly) {
    std::vector<std::string> names;
    for (const CheckDef& check : kChecks) {
        if (workload == check.workload && (check.owed || !owedOnly)) names.emplace_back(check.name);
    }
    return names;
}

bool explains(std::string_view kind, std::string_view check) {
    if (const CheckDef* row = findCheck(check)) return row->explainedBy && kind == row->explainedBy;
    return kind == check;
}

std::string formatCheckTable(const std::vector<std::string>& workloads) {
    std::vector<const CheckDef*> rows;
    for (const CheckDef& check : kChecks) {
        if (workloads.empty() ||
            std::find(workloads.begin(), workloads.end(), check.workload) != workloads.end())
            rows.push_back(&check);
    }
    size_t name = 5, workload = 8, unit = 4;
    for (const CheckDef* row : rows) {
        name = std::max(name, std::string_view(row->name).size());
        workload = std::max(workload, std::string_view(row->workload).size());
        unit = std::max(unit, std::string_view(row->unit).size());
    }
    std::string out = fmt::format("{:<{}}  {:<{}}  {:<{}}  {:>14}  {}\n", "check", name, "workload",
                                  workload, "unit", unit, "default budget", "explained by");
    for (const CheckDef* row : rows) {
        out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:>14}  {}\n", row->name, name, row->workload,
                           workload, row->unit, unit, row->budget,
                           row->explainedBy ? row->explainedBy : "its reason");
    }
    return out;
}

} // namespace leakgate::report
