#include "lib/lint/cxx.h"

#include "leakgate/errors.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace leakgate::lint {
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

// `if (x == 0) return 0; else if (x == 1) return 1; ...`, `branches` of them, then a last `else`
// that stores a frame in a static: found only if the walk reached the end of the chain.
std::string elseIfChain(int branches) {
    std::string text = "#include <Python.h>\nstatic PyFrameObject *last_frame;\n"
                       "int classify(int x) {\n    if (x == 0) return 0;\n";
    for (int i = 1; i < branches; ++i)
        text += "    else if (x == " + std::to_string(i) + ") return " + std::to_string(i) + ";\n";
    text += "    else last_frame = PyEval_GetFrame();\n    return -1;\n}\n";
    return text;
}

TEST_F(LintCxx, AnElseIfChainOfTenThousandBranchesIsParsedAndAnalysedToItsEnd) {
    std::string file = write("else_if_chain.c", elseIfChain(10'000));
    CxxLintResult result = lint({file});
    EXPECT_TRUE(result.unparsed.empty()) << result.unparsed.dump();
    ASSERT_EQ(result.findings.size(), 1u);
    EXPECT_EQ(result.findings.front().kind, "lint:frame-stored-static");
    EXPECT_EQ(result.findings.front().frames.front().line, 4 + 10'000);
}

TEST_F(LintCxx, AThirtyThousandTermSumInAFunctionIsAnalysedInTime) {
    // GIVEN a sum nested 30,000 levels deep, before a frame stored in a static
    std::string sum = "1";
    for (int i = 1; i < 30'000; ++i)
        sum += "+1";
    std::string file = write("long_sum.c", "#include <Python.h>\nstatic PyFrameObject *last_frame;\n"
                                           "int total(void) {\n    int x = " +
                                               sum +
                                               ";\n    last_frame = PyEval_GetFrame();\n"
                                               "    return x;\n}\n");
    // WHEN it is linted with a timeout a quadratic walk of the sum would not meet
    CxxLintOptions options;
    options.files = {file};
    options.timeout = std::chrono::seconds(120);
    CxxLintResult result = lintCxxFiles(options);
    // THEN the statement after it was reached
    EXPECT_TRUE(result.unparsed.empty()) << result.unparsed.dump();
    ASSERT_EQ(result.findings.size(), 1u);
    EXPECT_EQ(result.findings.front().frames.front().line, 5);
}

TEST_F(LintCxx, TwentyThousandCaseLabelsOnOneStatementAreWalkedWithoutDeepRecursion) {
    // GIVEN stacked case labels (each nests the next in the AST, though clang parses them in a
    // loop) on a stack far too small for a walk that recursed once per label
    std::string text = "#include <Python.h>\nstatic PyFrameObject *last_frame;\n"
                       "void pick(int c) {\n    switch (c) {\n";
    for (int i = 0; i < 20'000; ++i)
        text += "    case " + std::to_string(i) + ":\n";
    text += "        last_frame = PyEval_GetFrame();\n    }\n}\n";
    CxxLintOptions options;
    options.files = {write("cases.c", text)};
    options.stackBytes = size_t{2} << 20;
    CxxLintResult result = lintCxxFiles(options);
    // THEN the statement under the labels was reached
    EXPECT_TRUE(result.unparsed.empty()) << result.unparsed.dump();
    ASSERT_EQ(result.findings.size(), 1u);
    EXPECT_EQ(result.findings.front().frames.front().line, 5 + 20'000);
}

TEST_F(LintCxx, ATranslationUnitThatCrashesLibclangIsAnErrorForThatFileAndTheOthersAreStillChecked) {
    // GIVEN a stack on which libclang's recursive-descent parser genuinely overflows on a
    // 10,000-branch chain, and a second, ordinary file
    std::string deep = write("else_if_chain.c", elseIfChain(10'000));
    std::string stored = write("stored.c", kStoredInAGlobal);
    CxxLintOptions options;
    options.files = {deep, stored};
    options.stackBytes = size_t{1} << 20;
    // WHEN both are linted in one call
    CxxLintResult result = lintCxxFiles(options);
    // THEN the crash is that file's error, and the other file is still analysed
    ASSERT_EQ(result.unparsed.size(), 1u) << result.unparsed.dump();
    EXPECT_EQ(result.unparsed[0]["file"], deep);
    EXPECT_EQ(result.unparsed[0]["signal"], "SIGSEGV");
    EXPECT_NE(result.unparsed[0]["message"].get<std::string>().find(
                  "libclang crashed (SIGSEGV) parsing this file"),
              std::string::npos)
        << result.unparsed.dump();
    ASSERT_EQ(result.findings.size(), 1u);
    EXPECT_EQ(result.findings.front().frames.front().file, stored);
    EXPECT_EQ(result.files, 2u);
}

TEST_F(LintCxx, ATranslationUnitThatOutlastsItsTimeoutIsAnErrorForThatFile) {
    CxxLintOptions options;
    options.files = {write("stored.c", kStoredInAGlobal)};
    options.timeout = std::chrono::milliseconds(1); // Python.h alone takes longer to parse
    CxxLintResult result = lintCxxFiles(options);
    ASSERT_EQ(result.unparsed.size(), 1u);
    EXPECT_EQ(result.unparsed[0]["timed_out"], true);
    EXPECT_NE(result.unparsed[0]["message"].get<std::string>().find("timed out after 0.001 s"),
              std::string::npos)
        << result.unparsed.dump();
    EXPECT_TRUE(result.findings.empty());
    EXPECT_EQ(result.files, 1u);
}

TEST_F(LintCxx, PythonHIsParsedOncePerOpeningAndEveryFileReadsAsWithoutIt) {
    // GIVEN files that open with Python.h in the usual ways, files that open otherwise, and files
    // whose opening or body does not compile
    const std::string body =
        "static PyFrameObject *last;\nvoid keep(void) { last = PyEval_GetFrame(); }\n";
    std::vector<std::string> files = {
        write("clean_define.c", "#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n" + body),
        write("commented.c", "/* A module.\n   #include <stdio.h> is only text here. */\n"
                             "// a comment\n#  define PY_SSIZE_T_CLEAN\n\n#include \"Python.h\"\n" +
                                 body),
        write("bare.c", "#include <Python.h>\n" + body),
        write("bare_too.c", "\n\n#include <Python.h>\n\n" + body),
        write("stdio_first.c", "#include <stdio.h>\n#include <Python.h>\n" + body),
        write("conditional.c", "#ifdef X\n#define Y 1\n#endif\n#include <Python.h>\n" + body),
        write("cython.c",
              "/* Generated by Cython */\n#ifndef PY_SSIZE_T_CLEAN\n#define PY_SSIZE_T_CLEAN\n"
              "#endif /* PY_SSIZE_T_CLEAN */\n#include \"Python.h\"\n" +
                  body),
        write("cython_too.c", "#ifndef PY_SSIZE_T_CLEAN\n#define PY_SSIZE_T_CLEAN\n#endif\n"
                              "#include \"Python.h\"\n" +
                                  body),
        write("other_guard.c", "#ifndef A\n#define B 1\n#endif\n#include <Python.h>\n" + body),
        write("bad_define.c", "#define BROKEN(\n#include <Python.h>\n" + body),
        write("bad_body.c", "#include <Python.h>\nint f( { return 0; }\n"),
        write("module.cpp", "#include <Python.h>\n#include <string>\n"
                            "static PyFrameObject *held;\nvoid hold() { held = PyEval_GetFrame(); }\n"),
    };
    const fs::path scratch = dir_ / "tmp";
    fs::create_directories(scratch);
    const char* before = std::getenv("TMPDIR");
    const std::string saved = before ? before : "";
    ::setenv("TMPDIR", scratch.c_str(), 1);
    auto lintWith = [&](bool precompile) {
        CxxLintOptions options;
        options.files = files;
        options.precompileOpenings = precompile;
        return lintCxxFiles(options);
    };
    // WHEN they are linted with the openings precompiled and without
    CxxLintResult with = lintWith(true);
    CxxLintResult without = lintWith(false);
    if (before)
        ::setenv("TMPDIR", saved.c_str(), 1);
    else
        ::unsetenv("TMPDIR");
    // THEN five openings were precompiled (in C with the define and <Python.h> or "Python.h",
    // <Python.h> alone, Cython's guarded define, and in C++; the broken define's did not build, and
    // the other conditionals are not taken), and none without
    EXPECT_EQ(with.precompiledOpenings, 5u);
    EXPECT_EQ(without.precompiledOpenings, 0u);
    // AND the findings and the files not parsed are the same, finding for finding
    ASSERT_EQ(with.findings.size(), without.findings.size());
    EXPECT_EQ(with.findings.size(), 10u);
    for (size_t i = 0; i < with.findings.size(); ++i)
        EXPECT_EQ(nlohmann::json(with.findings[i]), nlohmann::json(without.findings[i])) << i;
    EXPECT_EQ(with.unparsed, without.unparsed);
    ASSERT_EQ(with.unparsed.size(), 2u) << with.unparsed.dump();
    // AND the precompiled headers went with the run
    EXPECT_TRUE(fs::is_empty(scratch));
}

TEST(LintCxxSources, CAndCxxExtensionsAreRecognisedAndPythonIsNot) {
    for (const char* name : {"a.c", "a.cc", "a.cpp", "a.cxx", "a.h", "a.hpp", "dir/a.hh", "a.hxx"})
        EXPECT_TRUE(isCxxSource(name)) << name;
    for (const char* name : {"a.py", "a.cu", "a.txt", "Makefile"})
        EXPECT_FALSE(isCxxSource(name)) << name;
}

} // namespace
} // namespace leakgate::lint
