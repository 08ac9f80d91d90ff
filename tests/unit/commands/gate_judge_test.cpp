// The gate's judgement (lib/commands/gate_judge.h), given results as its workers would return them:
// a failure the reference shares is not the target's, the soak's slope is judged beyond the
// reference's, a workload that could not start is a skip with its reason, and a plug-in cannot
// take a built-in check's name.
#include "lib/commands/gate_judge.h"

#include "lib/worker/registry.h"
#include "lib/workloads/launch_protocol.h"

#include <gtest/gtest.h>

namespace leakgate::commands {
namespace {

WorkloadResult resultOf(const std::string& workload, Role role, std::vector<CheckResult> checks) {
    WorkloadResult result;
    result.workload = workload;
    result.subject = role == Role::kTarget ? "model" : "reference";
    result.role = role;
    result.checks = std::move(checks);
    return result;
}

GateRun ran(const std::string& workload, Role role, std::vector<CheckResult> checks) {
    return {&worker::findWorkload(workload),
            role,
            nullptr,
            "",
            resultOf(workload, role, std::move(checks)),
            true};
}

TEST(GateJudge, AFailureTheReferenceSharesIsNotTheTargets) {
    WorkloadResult target = resultOf("decorate", Role::kTarget,
                                     {{"decorate-frame-cycle", Status::kFail, "a frame cycle", 4096},
                                      {"decorate-retained-frame", Status::kFail, "a frame kept", 8192}});
    WorkloadResult reference =
        resultOf("decorate", Role::kReference,
                 {{"decorate-frame-cycle", Status::kFail, "a frame cycle", 4096},
                  {"decorate-retained-frame", Status::kFail, "a frame kept", 100}});
    compareWithReference(target, &reference);
    EXPECT_EQ(target.checks[0].status, Status::kPass);
    EXPECT_EQ(target.checks[0].reason,
              "retains no more than the reference (4096 vs 4096 bytes): a frame cycle");
    EXPECT_EQ(target.checks[1].status, Status::kFail); // more than the reference: the target's
}

TEST(GateJudge, WithoutAReferenceResultAFailureStandsAndSaysWhy) {
    WorkloadResult target = resultOf("decorate", Role::kTarget,
                                     {{"decorate-frame-cycle", Status::kFail, "a frame cycle", 4096}});
    WorkloadResult reference = resultOf("decorate", Role::kReference, {});
    reference.error = WorkloadError{"the reference crashed", 11, ""};
    compareWithReference(target, &reference);
    EXPECT_EQ(target.checks[0].status, Status::kFail);
    EXPECT_NE(target.checks[0].reason.find("no reference baseline"), std::string::npos);
}

TEST(GateJudge, TheSoakFailsOnlyBeyondTheReferencesSlopeAndItsBudget) {
    const std::int64_t budget = 512 * 1024;
    for (auto [slope, fails] : {std::pair{1000 + budget, false}, std::pair{1001 + budget, true}}) {
        WorkloadResult target =
            resultOf("soak", Role::kTarget, {{"soak-growth", Status::kPass, "RSS grows", slope}});
        WorkloadResult reference =
            resultOf("soak", Role::kReference, {{"soak-growth", Status::kPass, "RSS grows", 1000}});
        decideSoak(target, &reference);
        EXPECT_EQ(target.checks[0].status, fails ? Status::kFail : Status::kPass) << slope;
        EXPECT_NE(target.checks[0].reason.find("budget 512.0 KiB"), std::string::npos)
            << target.checks[0].reason;
    }
}

TEST(GateJudge, AWorkloadThatCouldNotStartSkipsItsSelectedChecksWithTheReason) {
    std::vector<GateRun> runs = {
        {&worker::findWorkload("launch"), Role::kTarget, nullptr, "", {}, false}};
    GateJudgement judgement{{"launch-allocations", "launch-cyclic-garbage"}, "model", false, false};
    std::vector<WorkloadResult> results = judgeGate(runs, judgement);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].subject, "model");
    ASSERT_EQ(results[0].checks.size(), 2u); // only the selected ones
    for (const CheckResult& check : results[0].checks) {
        EXPECT_EQ(check.status, Status::kSkip);
        EXPECT_EQ(check.reason, workloads::kNoScalarTypesReason);
    }
}

TEST(GateJudge, TheReferenceOfATargetThatSkippedEverythingIsDroppedAndChecksKeepTheGatesOrder) {
    std::vector<GateRun> runs = {
        ran("decorate", Role::kTarget,
            {{"decorate-retained-frame", Status::kSkip, "no decorator"},
             {"decorate-sentinels", Status::kSkip, "no decorator"},
             {"decorate-device-memory", Status::kSkip, "no CUDA"}}),
        ran("decorate", Role::kReference, {{"decorate-sentinels", Status::kPass, "freed"}}),
    };
    GateJudgement judgement{
        {"decorate-sentinels", "decorate-retained-frame"}, "model", false, std::nullopt};
    std::vector<WorkloadResult> results = judgeGate(runs, judgement);
    ASSERT_EQ(results.size(), 1u);
    ASSERT_EQ(results[0].checks.size(), 2u);
    EXPECT_EQ(results[0].checks[0].name, "decorate-sentinels");
    EXPECT_EQ(results[0].checks[1].name, "decorate-retained-frame");
}

TEST(GateJudge, APluginCannotTakeABuiltinOrAnEarlierPluginsCheckName) {
    std::vector<std::string> taken = {"mine"};
    WorkloadResult result = resultOf("probe", Role::kTarget,
                                     {{"decorate-sentinels", Status::kPass, "", 0},
                                      {"mine", Status::kFail, "", 1},
                                      {"fresh", Status::kPass, "", 0}});
    claimProbeCheckNames(result, taken, "probe.py");
    EXPECT_EQ(result.checks[0].status, Status::kError);
    EXPECT_NE(result.checks[0].reason.find("is one of the gate's own"), std::string::npos);
    EXPECT_EQ(result.checks[1].status, Status::kError);
    EXPECT_NE(result.checks[1].reason.find("an earlier --probe decides"), std::string::npos);
    EXPECT_EQ(result.checks[2].status, Status::kPass);
    EXPECT_NE(std::find(taken.begin(), taken.end(), "fresh"), taken.end());
}

} // namespace
} // namespace leakgate::commands
