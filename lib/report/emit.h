// Where a command's report goes, for every command: the text report on stdout (on stderr when a
// machine format takes stdout, so the two never mix), then each file asked for, each written
// whole or not at all. The only place in lib/ that writes to stdout.
#pragma once

#include "leakgate/api.h"

#include "leakgate/report.h"

#include <string>
#include <vector>

namespace leakgate::report {

// Colour in the text report: kAuto is a terminal with NO_COLOR empty or unset (no-color.org).
enum class Color { kAuto, kAlways, kNever };

struct Outputs {
    std::string json; // a path, "-" for stdout, or empty for none
    std::string junit;
    std::string sarif;
    std::string html;
    bool quiet = false; // no text report
    Color color = Color::kAuto;
};

// Before anything runs, a UsageError for: two machine formats on stdout (one unreadable stream),
// two outputs on one file (one would be lost), or an output that is one of the run's `inputs`
// (the script, a target, a baseline: writing the report would destroy it).
LEAKGATE_API void checkOutputs(const Outputs& outputs, const std::vector<std::string>& inputs = {});

// Writes the report; a file that cannot be written is said on stderr and costs neither the
// results nor the other files. Returns the exit code: the report's, or kErrored when a file
// failed. A bisect (and a merge) writes every format too, from the matrix of its releases.
LEAKGATE_API int emit(const Report& report, const Outputs& outputs);
LEAKGATE_API int emit(const BisectReport& report, const Outputs& outputs);

} // namespace leakgate::report
