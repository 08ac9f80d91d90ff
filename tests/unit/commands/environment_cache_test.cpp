// pythonEnvironment (lib/commands/environments.h): an interpreter is asked once, and asked again
// whenever what its answer depends on changed: here a real venv of the build's Python, whose
// interpreter is wrapped by a script that counts how often it runs.
#include "lib/commands/environments.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace leakgate::commands {
namespace {

namespace fs = std::filesystem;

class EnvironmentCache : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("leakgate-environment-cache-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        ::setenv("LEAKGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
        ::unsetenv("LEAKGATE_NO_ENVIRONMENT_CACHE");
        ::unsetenv("PYTHONPATH");
        const std::string made =
            python::buildPythonExecutable() + " -m venv --without-pip " + (dir_ / "venv").string();
        ASSERT_EQ(std::system(made.c_str()), 0) << made;
        for (const auto& entry : fs::directory_iterator(dir_ / "venv" / "lib"))
            sitePackages_ = entry.path() / "site-packages";
        ASSERT_TRUE(fs::is_directory(sitePackages_));
        // The venv's interpreter, counting its runs; exec keeps sys.executable the venv's.
        python_ = (dir_ / "venv" / "bin" / "counted").string();
        std::ofstream(python_) << "#!/bin/sh\necho run >> " << (dir_ / "runs").string() << "\nexec "
                               << (dir_ / "venv" / "bin" / "python").string() << " \"$@\"\n";
        fs::permissions(python_, fs::perms::owner_all);
    }
    void TearDown() override {
        ::unsetenv("LEAKGATE_CACHE_DIR");
        ::unsetenv("PYTHONPATH");
        fs::remove_all(dir_);
    }
    int runs() const {
        std::ifstream in(dir_ / "runs");
        return static_cast<int>(std::count(std::istreambuf_iterator<char>(in), {}, '\n'));
    }
    bool onPath(const python::Environment& env, const fs::path& dir) const {
        return std::find(env.path.begin(), env.path.end(), dir.string()) != env.path.end();
    }

    fs::path dir_, sitePackages_;
    std::string python_;
};

TEST_F(EnvironmentCache, AnUnchangedInterpreterIsAskedOnce) {
    const python::Environment first = pythonEnvironment(python_);
    EXPECT_EQ(runs(), 1);
    const python::Environment second = pythonEnvironment(python_);
    EXPECT_EQ(runs(), 1);
    EXPECT_EQ(second.path, first.path);
    EXPECT_EQ(second.prefix, (dir_ / "venv").string());
    ::setenv("LEAKGATE_NO_ENVIRONMENT_CACHE", "1", 1);
    pythonEnvironment(python_);
    EXPECT_EQ(runs(), 2);
    ::unsetenv("LEAKGATE_NO_ENVIRONMENT_CACHE");
}

TEST_F(EnvironmentCache, APthFileAddedOrEditedIsSeen) {
    const fs::path extra = dir_ / "extra", more = dir_ / "more";
    fs::create_directories(extra);
    fs::create_directories(more);
    EXPECT_FALSE(onPath(pythonEnvironment(python_), extra));
    std::ofstream(sitePackages_ / "extra.pth") << extra.string() << "\n";
    EXPECT_TRUE(onPath(pythonEnvironment(python_), extra));
    EXPECT_EQ(runs(), 2);
    std::ofstream(sitePackages_ / "extra.pth", std::ios::app) << more.string() << "\n";
    EXPECT_TRUE(onPath(pythonEnvironment(python_), more));
    EXPECT_EQ(runs(), 3);
    pythonEnvironment(python_);
    EXPECT_EQ(runs(), 3);
}

TEST_F(EnvironmentCache, PythonPathAndAReplacedInterpreterAreSeen) {
    pythonEnvironment(python_);
    ::setenv("PYTHONPATH", (dir_ / "extra").c_str(), 1);
    EXPECT_TRUE(onPath(pythonEnvironment(python_), dir_ / "extra"));
    EXPECT_EQ(runs(), 2);
    ::unsetenv("PYTHONPATH");
    pythonEnvironment(python_); // the first answer, still kept
    EXPECT_EQ(runs(), 2);
    std::ofstream(python_, std::ios::app) << "# replaced\n";
    pythonEnvironment(python_);
    EXPECT_EQ(runs(), 3);
}

TEST_F(EnvironmentCache, AnUnreadableCacheFileIsAskedAgainAndRewritten) {
    pythonEnvironment(python_);
    for (const auto& entry : fs::directory_iterator(dir_ / "cache" / "environments"))
        std::ofstream(entry.path()) << "{not json";
    EXPECT_FALSE(pythonEnvironment(python_).path.empty());
    EXPECT_EQ(runs(), 2);
    pythonEnvironment(python_);
    EXPECT_EQ(runs(), 2);
}

} // namespace
} // namespace leakgate::commands
