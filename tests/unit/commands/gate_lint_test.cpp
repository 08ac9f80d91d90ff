#include "lib/commands/gate_lint.h"

#include <gtest/gtest.h>

namespace leakgate::commands {
namespace {

Finding lintFinding(const std::string& function, const std::string& file, int line) {
    Finding finding;
    finding.kind = "lint:own-frame-local";
    finding.summary = "local `cur_frame` holds this function's own frame";
    finding.frames.push_back({function, file, line});
    return finding;
}

Finding frameCycle(const std::string& function, const std::string& file, int line) {
    Finding finding;
    finding.kind = "frame-cycle";
    finding.frames.push_back({function, file, line});
    return finding;
}

Report gateReport(Finding dynamic, Finding lint) {
    Report report;
    report.command = "gate";
    WorkloadResult decorate;
    decorate.workload = "decorate";
    decorate.findings.push_back(std::move(dynamic));
    WorkloadResult linted;
    linted.workload = "lint";
    linted.checks.push_back({"lint", Status::kFail, "1 finding in 1 of 1 file checked"});
    linted.findings.push_back(std::move(lint));
    report.results.push_back(std::move(decorate));
    report.results.push_back(std::move(linted));
    return report;
}

TEST(GateLint, ALintFindingInTheFunctionOfADynamicFrameCycleIsMarkedConfirmed) {
    // GIVEN a frame cycle whose culprit frame is BaseDSL.jit at its return line, and a lint
    // finding at the line that binds the frame in the same function
    Report report = gateReport(frameCycle("BaseDSL.jit", "/pkg/dsl.py", 899),
                               lintFinding("BaseDSL.jit", "/pkg/dsl.py", 896));
    // WHEN they are compared
    EXPECT_EQ(markConfirmedLintFindings(report), 1u);
    // THEN the lint finding says so, with the dynamic check and line
    const WorkloadResult& lint = report.results[1];
    EXPECT_NE(lint.findings[0].summary.find("confirmed dynamically: decorate-frame-cycle"),
              std::string::npos);
    ASSERT_EQ(lint.details["confirmed"].size(), 1u);
    EXPECT_EQ(lint.details["confirmed"][0]["dynamic_line"], 899);
    EXPECT_EQ(lint.details["confirmed"][0]["line"], 896);
    EXPECT_NE(lint.checks[0].reason.find("1 confirmed dynamically"), std::string::npos);
}

TEST(GateLint, AnotherFunctionOrAnotherFileIsNotAConfirmation) {
    Report otherFunction = gateReport(frameCycle("BaseDSL.kernel", "/pkg/dsl.py", 950),
                                      lintFinding("BaseDSL.jit", "/pkg/dsl.py", 896));
    Report otherFile = gateReport(frameCycle("BaseDSL.jit", "/other/dsl.py", 899),
                                  lintFinding("BaseDSL.jit", "/pkg/dsl.py", 896));
    EXPECT_EQ(markConfirmedLintFindings(otherFunction), 0u);
    EXPECT_EQ(markConfirmedLintFindings(otherFile), 0u);
    EXPECT_FALSE(otherFunction.results[1].details.contains("confirmed"));
}

TEST(GateLint, AFileTargetIsLintedAsItsFile) {
    python::Environment env;
    EXPECT_EQ(gateLintPaths({"model", "", "/targets/model.py"}, env),
              std::vector<std::string>{"/targets/model.py"});
    // `cute` without nvidia_cutlass_dsl on the environment's path: nothing to lint.
    EXPECT_TRUE(gateLintPaths({"cute", "", "/data/lib/targets/cute.py"}, env).empty());
}

} // namespace
} // namespace leakgate::commands
