#include "lib/base/dynamic_library.h"

#include <gtest/gtest.h>

namespace leakgate::base {
namespace {

TEST(DynamicLibrary, ALoadedLibraryGivesItsSymbols) {
    DynamicLibrary library("libm.so.6");
    ASSERT_TRUE(library.loaded()) << library.error();
    EXPECT_NE(library.symbol("cos"), nullptr);
    EXPECT_EQ(library.symbol("no_such_symbol_in_libm"), nullptr);
}

TEST(DynamicLibrary, AMissingLibraryIsAnErrorWithDlerrorsText) {
    DynamicLibrary library("/nonexistent/libnothing.so");
    EXPECT_FALSE(library.loaded());
    EXPECT_NE(library.error().find("/nonexistent/libnothing.so"), std::string::npos) << library.error();
    EXPECT_EQ(library.symbol("anything"), nullptr);
}

} // namespace
} // namespace leakgate::base
