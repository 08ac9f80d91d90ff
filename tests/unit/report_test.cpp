#include "leakgate/report.h"

#include "lib/report/writers/json.h"
#include "lib/report/units.h"
#include "lib/report/writers/text.h"

#include <gtest/gtest.h>

namespace leakgate {
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
}

} // namespace
} // namespace leakgate
