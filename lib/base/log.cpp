#include "lib/base/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace leakgate::log {
namespace {

Level initialLevel() {
    // Workers inherit the parent's level through the environment.
    const char* env = std::getenv("LEAKGATE_LOG_LEVEL");
    if (env && *env >= '0' && *env <= '2') return static_cast<Level>(*env - '0');
    return Level::kInfo;
}

std::atomic<Level> g_level{initialLevel()};

} // namespace

void setLevel(Level level) {
    g_level = level;
}
Level level() {
    return g_level;
}

void write(Level level, std::string_view message) {
    const char* prefix = level == Level::kDebug ? "leakgate[debug]: " : "leakgate: ";
    std::fprintf(stderr, "%s%.*s\n", prefix, static_cast<int>(message.size()), message.data());
}

} // namespace leakgate::log
