#include "leakgate/report.h"

#include "lib/report/units.h"
#include "lib/report/writers/json.h"
#include "lib/report/writers/text.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

namespace leakgate::report {
namespace {

Report reportWith(std::vector<Status> statuses, bool workloadError = false) {
    WorkloadResult result;
    result.workload = "scan";
    result.subject = "x.py";
    for (size_t i = 0; i < statuses.size(); ++i)
        result.checks.push_back({"check" + std::to_string(i), statuses[i], ""});
    if (workloadError) result.error = WorkloadError{"boom", 11, "tail"};
    Report report;
    report.command = "scan";
    report.results.push_back(result);
    return report;
}

TEST(Report, ExitCodesFollowMeasures) {
    EXPECT_EQ(reportWith({Status::kPass, Status::kSkip}).exitCode(), ExitCode::kClean);
    EXPECT_EQ(reportWith({Status::kPass, Status::kFail}).exitCode(), ExitCode::kFindings);
    EXPECT_EQ(reportWith({Status::kPass, Status::kError}).exitCode(), ExitCode::kErrored);
    EXPECT_EQ(reportWith({Status::kFail, Status::kError}).exitCode(), ExitCode::kFindings);
    EXPECT_EQ(reportWith({Status::kPass}, true).exitCode(), ExitCode::kErrored);
}

TEST(Report, AWorkloadResultSurvivesTheWorkerPipeEncoding) {
    WorkloadResult result;
    result.workload = "scan";
    result.subject = "a.py";
    result.error = WorkloadError{"killed", 11, "stderr"};
    result.checks.push_back({"frame-cycle", Status::kFail, "one"});
    Finding finding;
    finding.kind = "frame-cycle";
    finding.summary = "s";
    finding.frames = {{"f", "a.py", 3}};
    finding.locals = {"cur_frame"};
    finding.path = {{"local", "local `cur_frame`", "frame"}};
    finding.bytes = 42;
    result.findings.push_back(finding);

    WorkloadResult back = nlohmann::json(result).get<WorkloadResult>();
    EXPECT_EQ(back.error->signal, 11);
    EXPECT_EQ(back.checks[0].status, Status::kFail);
    EXPECT_EQ(back.findings[0].frames[0].line, 3);
    EXPECT_EQ(back.findings[0].locals[0], "cur_frame");
    EXPECT_EQ(back.findings[0].bytes, 42);
}

TEST(Report, TheJsonCarriesSchemaFlattenedChecksAndFindings) {
    Report report = reportWith({Status::kFail});
    Finding finding;
    finding.kind = "frame-cycle";
    report.results[0].findings.push_back(finding);
    nlohmann::json json = toJson(report);
    EXPECT_EQ(json["schema"], "leakgate/1");
    EXPECT_EQ(json["exit_code"], 1);
    EXPECT_EQ(json["checks"][0]["workload"], "scan");
    EXPECT_EQ(json["findings"][0]["kind"], "frame-cycle");
}

TEST(Report, HumanBytesUsesBinaryUnits) {
    EXPECT_EQ(humanBytes(512), "512 B");
    EXPECT_EQ(humanBytes(1 << 30), "1.0 GiB (1073741824 bytes)");
    EXPECT_EQ(humanBytes(-1071644672), "-1022.0 MiB (-1071644672 bytes)"); // a cuMemGetInfo difference
    EXPECT_EQ(humanBytes(-512), "-512 B");
}

// A bisect history: each release's statuses of one check "c" ('p' pass, 'f' fail, 'e' error,
// 's' skip, '-' no result, 'E' an errored release), with the culprit of each failure.
BisectReport history(const std::vector<std::tuple<std::string, char, std::string>>& releases) {
    BisectReport report;
    report.checks = {"c"};
    for (const auto& [version, status, culprit] : releases) {
        BisectRow row;
        row.version = version;
        if (status == 'E') row.error = "cannot download";
        const std::map<char, Status> statuses{
            {'p', Status::kPass}, {'f', Status::kFail}, {'e', Status::kError}, {'s', Status::kSkip}};
        if (statuses.count(status)) row.cells["c"] = {statuses.at(status), std::nullopt, culprit};
        report.rows.push_back(std::move(row));
    }
    computeTransitions(report);
    return report;
}

TEST(Bisect, EveryTransitionOfABadGoodBadHistoryIsListed) {
    BisectReport report = history({{"1.0", 'p', ""},
                                   {"1.1", 'f', "a"},
                                   {"1.2", 'p', ""},
                                   {"1.3", 'f', "a"},
                                   {"1.4", 'f', "b"},
                                   {"1.5", 'p', ""}});
    ASSERT_EQ(report.transitions.size(), 5u);
    EXPECT_EQ(report.transitions[0].from, "1.0");
    EXPECT_EQ(report.transitions[0].to, "1.1");
    EXPECT_STREQ(changeKind(report.transitions[0].changes.at(0)), "regressed");
    EXPECT_STREQ(changeKind(report.transitions[1].changes.at(0)), "fixed");
    EXPECT_STREQ(changeKind(report.transitions[3].changes.at(0)), "culprit"); // 1.3 -> 1.4: a -> b
    EXPECT_EQ(report.transitions[3].changes[0].before.culprit, "a");
    EXPECT_EQ(report.transitions[3].changes[0].after.culprit, "b");
    EXPECT_EQ(report.firstBad.at("c"), "1.1");
    EXPECT_EQ(report.firstGood.at("c"), "1.0");
}

TEST(Bisect, AReleaseWithoutAVerdictMakesNoTransitionAndOneRunsAcrossIt) {
    // pass, errored release, error, skip, no result, fail: one transition, 1.0 -> 1.5, across four.
    BisectReport report = history({{"1.0", 'p', ""},
                                   {"1.1", 'E', ""},
                                   {"1.2", 'e', ""},
                                   {"1.3", 's', ""},
                                   {"1.4", '-', ""},
                                   {"1.5", 'f', "a"}});
    ASSERT_EQ(report.transitions.size(), 1u);
    EXPECT_EQ(report.transitions[0].from, "1.0");
    EXPECT_EQ(report.transitions[0].to, "1.5");
    EXPECT_EQ(report.transitions[0].across, (std::vector<std::string>{"1.1", "1.2", "1.3", "1.4"}));
    // And an error between two passes is no transition at all.
    EXPECT_TRUE(history({{"1.0", 'p', ""}, {"1.1", 'e', ""}, {"1.2", 'p', ""}}).transitions.empty());
}

} // namespace
} // namespace leakgate::report
