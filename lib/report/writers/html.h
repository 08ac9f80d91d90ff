// The HTML writer: one self-contained page for a person (a CI artifact, an attachment to a bug):
// the checks, each finding with its reference path drawn, the soak's RSS curves and the launch
// path's allocations per call. Inline CSS and SVG only: it opens offline and runs no script.
#pragma once

#include "leakgate/report.h"

#include <string>

namespace leakgate {

std::string formatHtml(const Report& report);

} // namespace leakgate
