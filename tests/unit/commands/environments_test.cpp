#include "lib/commands/environments.h"
#include "lib/commands/versions.h"

#include "leakgate/errors.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace leakgate::commands {
namespace {

using Versions = std::vector<std::string>;

// PEP 440's own order (its "Summary of permitted suffixes and relative ordering"), shuffled.
TEST(Versions, OrderIsPep440) {
    const Versions shuffled{"1.0.post1",      "1.0",   "1.0.dev0",  "1.1",        "1.0a1",
                            "1.0rc1",         "1.0b2", "1.0+local", "1.0a1.dev1", "0.9",
                            "1.0.post1.dev0", "1!0.1", "1.10",      "1.9"};
    const VersionSelection selection = selectVersions(shuffled, std::nullopt, /*pre=*/true);
    EXPECT_EQ(selection.selected,
              (Versions{"0.9", "1.0.dev0", "1.0a1.dev1", "1.0a1", "1.0b2", "1.0rc1", "1.0", "1.0+local",
                        "1.0.post1.dev0", "1.0.post1", "1.1", "1.9", "1.10", "1!0.1"}));
    EXPECT_TRUE(selection.implementation.starts_with("packaging ")) << selection.implementation;
}

TEST(Versions, ASpecifierSetTakesPreReleasesOnlyWithPre) {
    const Versions listed{"4.8.0", "4.8.0.dev0", "4.7.1", "4.6.3", "4.8.1", "4.9.0rc1"};
    EXPECT_EQ(selectVersions(listed, ">=4.7,<4.9", false).selected,
              (Versions{"4.7.1", "4.8.0", "4.8.1"}));
    EXPECT_EQ(selectVersions(listed, ">=4.7,<4.9", true).selected,
              (Versions{"4.7.1", "4.8.0.dev0", "4.8.0", "4.8.1"}));
    EXPECT_EQ(selectVersions(listed, "~=4.8.0", false).selected, (Versions{"4.8.0", "4.8.1"}));
}

TEST(Versions, WhatIsNoVersionIsNamedAndABadSpecifierIsAUsageError) {
    EXPECT_EQ(selectVersions({"4.6.1", "banana"}, std::nullopt, true).invalid, (Versions{"banana"}));
    EXPECT_THROW(selectVersions({"4.6.1"}, ">=4.6,<<4.8", false), UsageError);
    EXPECT_TRUE(isSpecifier(">=4.6"));
    EXPECT_TRUE(isSpecifier("~=4.6"));
    EXPECT_FALSE(isSpecifier("4.6.1"));
}

TEST(Environments, TheRequirementCarriesTheExtras) {
    EXPECT_EQ(requirementOf({"nvidia-cutlass-dsl", {}, "4.6.1"}), "nvidia-cutlass-dsl==4.6.1");
    EXPECT_EQ(requirementOf({"nvidia-cutlass-dsl", {"cu13", "x"}, "4.6.1"}),
              "nvidia-cutlass-dsl[cu13,x]==4.6.1");
}

TEST(Environments, TheCacheDirectoryHonoursLeakgateCacheDir) {
    ::setenv("LEAKGATE_CACHE_DIR", "/tmp/leakgate-cache-test", 1);
    EXPECT_EQ(cacheDir(), "/tmp/leakgate-cache-test");
    ::unsetenv("LEAKGATE_CACHE_DIR");
    EXPECT_TRUE(cacheDir().string().ends_with("leakgate"));
}

} // namespace
} // namespace leakgate::commands
