// The one logging sink. Nothing in lib/ writes to stdout; diagnostics go to stderr at the level
// that --verbose sets.
#pragma once

#include "leakgate/api.h"

#include <fmt/format.h>

#include <string_view>

namespace leakgate::log {

enum class Level { kQuiet = 0, kInfo = 1, kDebug = 2 };

LEAKGATE_API void setLevel(Level level);
LEAKGATE_API Level level();
LEAKGATE_API void write(Level level, std::string_view message);

template <typename... Args> void info(fmt::format_string<Args...> format, Args&&... args) {
    if (level() >= Level::kInfo) write(Level::kInfo, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args> void debug(fmt::format_string<Args...> format, Args&&... args) {
    if (level() >= Level::kDebug) write(Level::kDebug, fmt::format(format, std::forward<Args>(args)...));
}

} // namespace leakgate::log
