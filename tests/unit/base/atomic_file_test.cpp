#include "lib/base/atomic_file.h"

#include "leakgate/errors.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace leakgate::base {
namespace {

namespace fs = std::filesystem;

TEST(AtomicFile, WritesTheWholeContentAndLeavesNoTemporary) {
    fs::path dir = fs::temp_directory_path() / "leakgate_atomic_test";
    fs::remove_all(dir);
    fs::create_directories(dir);
    writeOutputFile((dir / "out.json").string(), "{\"a\": 1}\n");
    std::ifstream in(dir / "out.json");
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), "{\"a\": 1}\n");
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
    fs::remove_all(dir);
}

TEST(AtomicFile, AnUnwritableDestinationThrowsAndWritesNothing) {
    EXPECT_THROW(writeOutputFile("/nonexistent-dir/out.json", "x"), EnvironmentError);
    EXPECT_FALSE(fs::exists("/nonexistent-dir/out.json"));
}

} // namespace
} // namespace leakgate::base
