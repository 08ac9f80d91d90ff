// The figures of the HTML report's page (lib/report/writers/html.h), inline SVG drawn from the
// results' `details` as the workers wrote them: the soak's RSS over steps (target and reference on
// one plot, each with its fitted slope, and the target's budget), and the launch path's figures
// per call and per scalar type (a bar chart per figure and per target). The page (html.cpp) puts
// each under its heading.
#pragma once

#include "leakgate/report.h"

#include <string>

namespace leakgate::report::html {

// The soak's plot, as a <figure>: every result of the report that soaked, on the same axes (a
// gate soaks one target beside its reference). Empty when no result holds soak samples.
std::string soakFigure(const Report& report);

// The launch path's charts, a <figure> per figure (allocator calls, net blocks, cyclic garbage per
// call) and per target result, the reference's figures in each bar group. Empty when no target
// result holds launch cases.
std::string launchFigures(const Report& report);

} // namespace leakgate::report::html
