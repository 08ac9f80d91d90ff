// Where a dynamic finding is fixed, from the lint of the same sources: a frame cycle closed by a
// local is fixed at the line that binds it (the culprit's frame line is where it returned); a
// frame retained through an attribute is fixed at the statement that stores it (the decorator),
// not in the function whose frame it is. `scan` and `gate` run the lint for this (lintFixSites);
// `gate --lint` has it already.
#pragma once

#include "leakgate/report.h"
#include "lib/commands/lint.h"

#include <string>
#include <vector>

namespace leakgate::commands {

// The Python files the lint must read to place `results`' findings (their frames' files, and
// `script` when given); empty when no finding is of a kind a fix site is found for.
std::vector<std::string> fixSiteFiles(const std::vector<WorkloadResult*>& results,
                                      const std::string& script);

// Gives the frame-cycle and retained-frame findings of `result` their fix site, from `lint`'s
// findings: `fixSite`, the line in the fix text, and for a store "; stored by `f` (file:line)"
// in the summary. A finding with no matching lint finding is left as it is.
void placeFixSites(WorkloadResult& result, const std::vector<Finding>& lint);

// Lints the files `results`' findings need (fixSiteFiles) with `lint`'s interpreter and timeout,
// unreported, and places their fix sites. Best effort: a lint that cannot run changes nothing.
void lintFixSites(const std::vector<WorkloadResult*>& results, const std::string& script,
                  LintOptions lint);

} // namespace leakgate::commands
