// The text writer: the report as a person reads it on a terminal.
#pragma once

#include "lib/report/model.h"

#include <string>

namespace leakgate {

struct TextOptions {
    bool color = false;
};

std::string formatText(const Report& report, const TextOptions& options);

// The bisect table: version by check, the first bad and first good version, and what each
// failing check said.
std::string formatBisectText(const BisectReport& report, const TextOptions& options);

} // namespace leakgate
