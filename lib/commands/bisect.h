// `leakgate bisect`: the gate on every release of a DSL package, each in its own environment, as
// a table of version by check with the first bad and first good version per check.
#pragma once

#include "leakgate/api.h"

#include "lib/commands/gate.h"
#include "leakgate/report.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace leakgate {

struct BisectOptions {
    std::string package; // empty: the built-in target's PyPI package (lib/commands/builtin_targets.cpp)
    std::vector<std::string> versions; // explicit list, in the order given
    std::string from, to;              // or every release from `from` to `to` (inclusive)
    GateOptions gate; // target (default cute), checks and budgets; python is set per version
    std::chrono::seconds installTimeout{1800};
};

LEAKGATE_API BisectReport runBisect(const BisectOptions& options);

} // namespace leakgate
