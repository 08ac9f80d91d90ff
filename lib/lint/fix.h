// `leakgate lint --fix`: the text edits of the lint's machine-applicable fixes (FixEdit, made by
// lib/lint/python_rules/fixes.py) applied to a file's text, and the unified diff of what changes.
// Nothing here touches the disk: lib/commands/lint.cpp checks a fixed copy and writes the file.
#pragma once

#include "leakgate/report.h"

#include <string>
#include <vector>

namespace leakgate::lint {

// `source` with `edits` made (each once: equal edits are one; in any order). Throws Error when an
// edit falls outside the text or two edits overlap.
std::string applyFixEdits(const std::string& source, const std::vector<FixEdit>& edits);

// The unified diff (3 lines of context) that turns `before` into `after`, under the names
// `a/<label>` and `b/<label>`; empty when they are equal.
std::string unifiedDiff(const std::string& before, const std::string& after, const std::string& label);

} // namespace leakgate::lint
