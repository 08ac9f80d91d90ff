// The HTML writer: one self-contained page for a person (a CI artifact, an attachment to a bug):
// the checks, each finding with its reference path drawn, the soak's RSS curves and the launch
// path's allocations per call. Inline CSS and SVG only: it opens offline and runs no script.
#pragma once

#include "leakgate/report.h"

#include <string>

namespace leakgate::report {

std::string formatHtml(const Report& report);
// A bisect: the matrix of release by check with each release's culprits, the first bad and first
// good releases, every transition, and each release's findings folded under it.
std::string formatBisectHtml(const BisectReport& report);

} // namespace leakgate::report
