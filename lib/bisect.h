// `leakgate bisect`: the gate on every release of a DSL package, each in its own environment, as
// a table of version by check with the first bad and first good version per check.
#pragma once

#include "lib/gate.h"
#include "lib/report.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace leakgate {

struct BisectOptions {
    std::string package = "nvidia-cutlass-dsl";
    std::vector<std::string> versions; // explicit list, in the order given
    std::string from, to;              // or every release from `from` to `to` (inclusive)
    GateOptions gate; // target (default cute), checks and budgets; python is set per version
    std::chrono::seconds installTimeout{1800};
};

struct BisectRow {
    std::string version;
    std::optional<std::string> error; // the environment could not be made: an `error` row
    std::optional<Report> report;     // the gate's report in that environment
    std::map<std::string, Status> statuses;
};

struct BisectReport {
    std::string package;
    std::string target;
    std::string pythonVersion;
    std::vector<std::string> checks;
    std::vector<BisectRow> rows;
    std::map<std::string, std::string> firstBad;  // check -> earliest version where it fails
    std::map<std::string, std::string> firstGood; // check -> earliest version where it passes

    ExitCode exitCode() const;
};

BisectReport runBisect(const BisectOptions& options);

} // namespace leakgate
