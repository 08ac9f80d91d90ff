// `leakgate merge`: the JSON reports of bisect shards (--shard I/N on N CI jobs) joined into one
// bisect report, its releases in PEP 440 order and its transitions recomputed across the shards.
#pragma once

#include "leakgate/api.h"
#include "leakgate/report.h"

#include <string>
#include <vector>

namespace leakgate::commands {

// Throws UsageError for a file that is not a bisect JSON report, for reports of different
// packages, extras, targets or Pythons, and for a release that two of them gated.
LEAKGATE_API BisectReport mergeBisectReports(const std::vector<std::string>& files);

} // namespace leakgate::commands
