// The text writer: the report as a person reads it on a terminal.
#pragma once

#include "leakgate/report.h"

#include <optional>
#include <string>

namespace leakgate::report {

struct TextOptions {
    bool color = false;
    // The code the process exits with, when it is not the report's own (a report file that could
    // not be written makes it kErrored); the text says the code the process returns.
    std::optional<int> exitCode;
};

std::string formatText(const Report& report, const TextOptions& options);

// `text` without terminal escape sequences (CSI, OSC and two-byte ones): the code under test may
// colour what it writes and raises, and a report not meant to be coloured shows none of it.
std::string withoutEscapes(const std::string& text);

// The bisect table: version by check, the first bad and first good version, and what each
// failing check said.
std::string formatBisectText(const BisectReport& report, const TextOptions& options);

} // namespace leakgate::report
