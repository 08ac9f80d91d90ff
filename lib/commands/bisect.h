// `leakgate bisect`: the gate on every release of a DSL package, each in its own environment, as
// a matrix of release by check (PEP 440 order) and every transition between consecutive releases.
#pragma once

#include "leakgate/api.h"

#include "leakgate/report.h"
#include "lib/commands/gate.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace leakgate::commands {

struct BisectOptions {
    std::string package; // empty: the built-in target's PyPI package (lib/commands/builtin_targets.cpp)
    std::vector<std::string> extras;   // --extra: installed as package[extra,...]
    std::vector<std::string> with;     // --with: requirements installed beside every release
    std::vector<std::string> versions; // an explicit list, or the parts of one specifier set
    std::string from, to;              // or every release from `from` to `to` (inclusive)
    bool pre = false;                  // pre- and dev-releases count as releases
    std::string pythonVersion;         // --python X.Y: must be the embedded one (empty: it is)
    int jobs = 1;                      // releases installed and gated at the same time
    int shard = 1, shards = 1;         // --shard I/N: the I-th of every N releases (1-based)
    GateOptions gate; // target (default cute), checks and budgets; python is set per version
    std::chrono::seconds installTimeout{1800};
    std::string installer = "auto"; // --installer: auto (uv when found, else pip), uv or pip
};

LEAKGATE_API BisectReport runBisect(const BisectOptions& options);

// What a failing check blames in the matrix, stable from release to release (no line numbers, no
// counts; "" unless it failed): a sentinels check whose sentinels are kept for good, what its
// reason says holds them; else the finding that explains the check, else (a check with no finding
// of its own: the sentinels that a frame cycle kept) the first finding of its workload.
std::string culpritOf(const WorkloadResult& result, const CheckResult& check);

// The gate's order of its checks (a plug-in's after them, as found).
void orderChecksAsTheGate(std::vector<std::string>& checks);

} // namespace leakgate::commands
