#include "lib/lint/cxx.h"

#include "lib/base/errors.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace leakgate {
namespace {

namespace fs = std::filesystem;

// A scratch directory per test, removed afterwards.
class LintCxx : public testing::Test {
  protected:
    void SetUp() override {
        if (!cxxLintAvailable()) GTEST_SKIP() << cxxLintUnavailableReason();
        dir_ = fs::temp_directory_path() /
               ("leakgate_lint_cxx_" +
                std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string write(const std::string& name, const std::string& text) {
        fs::path path = dir_ / name;
        std::ofstream(path) << text;
        return path.string();
    }

    CxxLintResult lint(const std::vector<std::string>& files) {
        CxxLintOptions options;
        options.files = files;
        return lintCxxFiles(options);
    }

    fs::path dir_;
};

const char* kStoredInAGlobal = R"(#include <Python.h>
static PyFrameObject *last_frame;
void remember(void) {
    last_frame = PyEval_GetFrame();
}
)";

TEST_F(LintCxx, AFrameStoredInAGlobalIsAFindingWithRuleNameAndPlace) {
    std::string file = write("stored.c", kStoredInAGlobal);
    CxxLintResult result = lint({file});
    ASSERT_EQ(result.findings.size(), 1u);
    const Finding& finding = result.findings.front();
    EXPECT_EQ(finding.kind, "lint:frame-stored-static");
    EXPECT_EQ(finding.locals, std::vector<std::string>{"last_frame"});
    EXPECT_EQ(finding.frames.front().function, "remember");
    EXPECT_EQ(finding.frames.front().file, file);
    EXPECT_EQ(finding.frames.front().line, 4);
    EXPECT_EQ(finding.column, 5);
    EXPECT_NE(finding.summary.find("borrowed frame"), std::string::npos);
    EXPECT_FALSE(finding.fix.empty());
    EXPECT_EQ(result.files, 1u);
    EXPECT_TRUE(result.unparsed.empty());
}

TEST_F(LintCxx, ANewReferenceLeakedOnAnEarlyReturnIsFoundAndAReleasedOneIsNot) {
    std::string leaked = write("leaked.c", R"(#include <Python.h>
int line_of_caller(PyFrameObject *frame) {
    PyFrameObject *back = PyFrame_GetBack(frame);
    if (back == NULL) return -1;
    if (PyFrame_GetLineNumber(back) < 0) return -1;
    Py_DECREF(back);
    return 0;
}
)");
    std::string released = write("released.c", R"(#include <Python.h>
int line_of_caller(PyFrameObject *frame) {
    PyFrameObject *back = PyFrame_GetBack(frame);
    if (back == NULL) return -1;
    int line = PyFrame_GetLineNumber(back);
    Py_DECREF(back);
    return line;
}
)");
    CxxLintResult result = lint({leaked, released});
    ASSERT_EQ(result.findings.size(), 1u);
    EXPECT_EQ(result.findings.front().kind, "lint:frame-ref-leaked");
    EXPECT_EQ(result.findings.front().frames.front().file, leaked);
    EXPECT_EQ(result.findings.front().frames.front().line, 3);
    EXPECT_NE(result.findings.front().summary.find("returns at line 5"), std::string::npos);
}

TEST_F(LintCxx, ATranslationUnitWithErrorsIsListedAsUnparsedAndTheOthersAreStillChecked) {
    std::string broken = write("broken.c", "int f( { return 0; }\n");
    std::string stored = write("stored.c", kStoredInAGlobal);
    CxxLintResult result = lint({broken, stored});
    ASSERT_EQ(result.unparsed.size(), 1u);
    EXPECT_EQ(result.unparsed[0]["file"], broken);
    EXPECT_NE(result.unparsed[0]["message"].get<std::string>().find("does not compile"),
              std::string::npos);
    EXPECT_EQ(result.findings.size(), 1u);
    EXPECT_EQ(result.files, 2u);
}

TEST_F(LintCxx, ACompileCommandsDatabaseGivesEachFileItsOwnFlags) {
    // GIVEN a file that compiles only with a define the database passes
    std::string file =
        write("needs_define.c",
              std::string("#ifndef NEEDED\n#error needs -DNEEDED\n#endif\n") + kStoredInAGlobal);
    write("compile_commands.json",
          nlohmann::json::array(
              {{{"directory", dir_.string()},
                {"file", "needs_define.c"},
                {"arguments",
                 {"cc", "-DNEEDED=1", "-I" + embeddedPythonIncludeDir(), "-c", "needs_define.c"}}}})
              .dump());
    // WHEN it is linted without the database, THEN it does not compile
    EXPECT_EQ(lint({file}).unparsed.size(), 1u);
    // WHEN it is linted with it, THEN it compiles and the finding is there
    CxxLintOptions options;
    options.files = {file};
    options.compileCommands = dir_.string();
    CxxLintResult result = lintCxxFiles(options);
    EXPECT_TRUE(result.unparsed.empty()) << result.unparsed.dump();
    EXPECT_EQ(result.findings.size(), 1u);
    EXPECT_EQ(result.compileCommands, (dir_ / "compile_commands.json").string());
}

TEST_F(LintCxx, ExplicitFlagsReachFilesWithoutACompileCommand) {
    std::string file =
        write("needs_define.c",
              std::string("#ifndef NEEDED\n#error needs -DNEEDED\n#endif\n") + kStoredInAGlobal);
    CxxLintOptions options;
    options.files = {file};
    options.flags = {"-DNEEDED=1"};
    CxxLintResult result = lintCxxFiles(options);
    EXPECT_TRUE(result.unparsed.empty()) << result.unparsed.dump();
    EXPECT_EQ(result.findings.size(), 1u);
}

TEST_F(LintCxx, ADirectoryWithoutACompileCommandsFileIsAUsageError) {
    CxxLintOptions options;
    options.files = {write("empty.c", "int x;\n")};
    options.compileCommands = dir_.string();
    EXPECT_THROW(lintCxxFiles(options), UsageError);
}

TEST_F(LintCxx, PybindCurrentframeStoredInAMemberIsFoundAndTheFunctionObjectIsNot) {
    std::string file = write("member.cpp", R"(#include <pybind11/pybind11.h>
namespace py = pybind11;
struct Tracker {
    py::object frame;
    py::object currentframe = py::module_::import("inspect").attr("currentframe");
    void capture() { frame = py::module_::import("inspect").attr("currentframe")(); }
};
)");
    CxxLintResult result = lint({file});
    EXPECT_TRUE(result.unparsed.empty()) << result.unparsed.dump();
    ASSERT_EQ(result.findings.size(), 1u);
    EXPECT_EQ(result.findings.front().kind, "lint:frame-stored-member");
    EXPECT_EQ(result.findings.front().frames.front().function, "Tracker::capture");
    EXPECT_EQ(result.findings.front().frames.front().line, 6);
    // Named as a DSL author writes it, not as `inspect.attr(...)`.
    EXPECT_NE(result.findings.front().summary.find(
                  "`py::module_::import(\"inspect\").attr(\"currentframe\")()` is a frame"),
              std::string::npos)
        << result.findings.front().summary;
}

TEST(LintCxxSources, CAndCxxExtensionsAreRecognisedAndPythonIsNot) {
    for (const char* name : {"a.c", "a.cc", "a.cpp", "a.cxx", "a.h", "a.hpp", "dir/a.hh", "a.hxx"})
        EXPECT_TRUE(isCxxSource(name)) << name;
    for (const char* name : {"a.py", "a.cu", "a.txt", "Makefile"})
        EXPECT_FALSE(isCxxSource(name)) << name;
}

} // namespace
} // namespace leakgate
