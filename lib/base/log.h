// The one logging sink. Nothing in lib/ writes to stdout; diagnostics go to stderr at the level
// that --verbose sets.
#pragma once

#include "leakgate/api.h"

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace leakgate::base::log {

enum class Level { kQuiet = 0, kInfo = 1, kDebug = 2 };

LEAKGATE_API void setLevel(Level level);
LEAKGATE_API Level level();
LEAKGATE_API void write(Level level, std::string_view message);

// The name the user ran leakgate by ("leakgate", or the Python package's "leakgate-dsl"): the
// prefix of diagnostics and the name in help and reports. Set once, before any thread starts.
LEAKGATE_API void setProgramName(std::string_view name);
LEAKGATE_API const std::string& programName();

template <typename... Args> void info(fmt::format_string<Args...> format, Args&&... args) {
    if (level() >= Level::kInfo) write(Level::kInfo, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args> void debug(fmt::format_string<Args...> format, Args&&... args) {
    if (level() >= Level::kDebug) write(Level::kDebug, fmt::format(format, std::forward<Args>(args)...));
}

} // namespace leakgate::base::log
