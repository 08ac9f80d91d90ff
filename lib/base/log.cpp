#include "lib/base/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace leakgate::base::log {
namespace {

Level initialLevel() {
    // Workers inherit the parent's level through the environment.
    const char* env = std::getenv("LEAKGATE_LOG_LEVEL");
    if (env && *env >= '0' && *env <= '2') return static_cast<Level>(*env - '0');
    return Level::kInfo;
}

std::atomic<Level> g_level{initialLevel()};
std::string g_programName = "leakgate";

} // namespace

void setLevel(Level level) {
    g_level = level;
}
Level level() {
    return g_level;
}

void write(Level level, std::string_view message) {
    const std::string prefix = g_programName + (level == Level::kDebug ? "[debug]: " : ": ");
    std::fprintf(stderr, "%s%.*s\n", prefix.c_str(), static_cast<int>(message.size()), message.data());
}

void setProgramName(std::string_view name) {
    if (!name.empty()) g_programName = name;
}
const std::string& programName() {
    return g_programName;
}

} // namespace leakgate::base::log
