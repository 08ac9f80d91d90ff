// Output files are written whole or not at all: a temporary file in the same directory,
// fsync'd, then renamed over the destination. "-" means stdout.
#pragma once

#include <string>
#include <string_view>

namespace leakgate {

void writeOutputFile(const std::string& path, std::string_view content);

} // namespace leakgate
