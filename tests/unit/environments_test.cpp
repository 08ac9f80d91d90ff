#include "lib/commands/environments.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace leakgate {
namespace {

TEST(Environments, VersionsCompareNumericallyPartByPart) {
    EXPECT_LT(compareVersions("4.4.2", "4.6.1"), 0);
    EXPECT_GT(compareVersions("4.10.0", "4.9.2"), 0);
    EXPECT_EQ(compareVersions("4.6.1", "4.6.1"), 0);
    EXPECT_LT(compareVersions("4.6", "4.6.1"), 0);
    EXPECT_LT(compareVersions("4.6.0.dev0", "4.6.0.rc1"), 0); // text parts compare as text
}

TEST(Environments, TheCacheDirectoryHonoursLeakgateCacheDir) {
    ::setenv("LEAKGATE_CACHE_DIR", "/tmp/leakgate-cache-test", 1);
    EXPECT_EQ(cacheDir(), "/tmp/leakgate-cache-test");
    ::unsetenv("LEAKGATE_CACHE_DIR");
    EXPECT_TRUE(cacheDir().string().ends_with("leakgate"));
}

} // namespace
} // namespace leakgate
