// What the bisect matrix blames for a failing check (culpritOf): stable from release to release,
// and the holder a sentinels check names when its sentinels are kept for good.
#include "lib/commands/bisect.h"

#include <gtest/gtest.h>

namespace leakgate::commands {
namespace {

Finding frameCycle(const std::string& function, const std::string& file) {
    Finding finding;
    finding.kind = "frame-cycle";
    finding.summary = "local `currentframe` of `" + function + "` holds its own frame";
    finding.frames.push_back({function, "/venv/lib/python3.11/site-packages/torch/fx/" + file, 1299});
    return finding;
}

// The sentinel probe's holders, as its result's details carry them.
void heldBy(WorkloadResult& result, const std::string& route) {
    result.details["never_freed_held_by"] =
        nlohmann::json::array({{{"route", route}, {"sentinels", 1}, {"bytes", 8388608}}});
}

TEST(BisectCulprit, NeverFreedSentinelsBlameTheirHolderNotTheFrameCycleBesideThem) {
    WorkloadResult result;
    result.findings.push_back(frameCycle("wrap", "_symbolic_trace.py"));
    CheckResult sentinels{"import-sentinels", Status::kFail, "1 of 1 sentinels outlived their frames",
                          8388608};
    heldBy(result,
           "sys.modules['torch.cuda']._PYNVML_ERR -> __traceback__ -> tb_frame -> f_back (x17) -> local "
           "`sentinel`");
    EXPECT_EQ(culpritOf(result, sentinels), "held by sys.modules['torch.cuda']._PYNVML_ERR");
    heldBy(result,
           "`ModuleNotFoundError` exception (held from outside the Python heap) -> __traceback__ -> "
           "tb_frame");
    EXPECT_EQ(culpritOf(result, sentinels), "held by `ModuleNotFoundError`");
    // Kept by the cycle only: the frame cycle is their culprit, as before.
    result.details = nlohmann::json::object();
    EXPECT_EQ(culpritOf(result, sentinels), "wrap (_symbolic_trace.py)");
    sentinels.status = Status::kPass;
    EXPECT_EQ(culpritOf(result, sentinels), "");
}

TEST(BisectCulprit, AHolderIsNamedAsFarAsItsContainerWithTheNameOfAnObjectItStartsAt) {
    WorkloadResult result;
    Finding retained;
    retained.kind = "decorations-retained";
    retained.summary = "`compile` leaves 10.13 blocks per decoration";
    CheckResult check{"decorations-retained", Status::kFail, "2 of 2 forms", 10};
    auto culprit = [&](const std::string& route) {
        retained.keptHolders = {{"function", route}, {"list", "x"}};
        result.findings = {retained};
        return culpritOf(result, check);
    };
    EXPECT_EQ(culprit("function `_log_traced_frames` (held from outside the Python heap) -> "
                      "__globals__['always_optimize_code_objects'].refs[i].__callback__"),
              "held by function `_log_traced_frames`");
    EXPECT_EQ(culprit("sys.modules['taichi.lang.impl'].pytaichi.kernels[i]"),
              "held by sys.modules['taichi.lang.impl'].pytaichi.kernels");
    EXPECT_EQ(culprit("module `leakgate_target`._kernel_cache[<tuple>]"),
              "held by module `leakgate_target`._kernel_cache");
    EXPECT_EQ(culprit("sys.modules['torch._dynamo.convert_frame'].always_optimize_code_objects.refs[i]"),
              "held by sys.modules['torch._dynamo.convert_frame'].always_optimize_code_objects.refs");
}

TEST(BisectCulprit, WithoutAHolderTheCommonestKeptTypesInNameOrderThenTheSummaryWithoutFigures) {
    WorkloadResult result;
    Finding retained;
    retained.kind = "launch-real-retained";
    retained.summary = "2 of 4 cases keep 1.25 blocks per launch, 3,000 launches";
    retained.keptTypes = {{"tuple", 3.0}, {"Kernel", 2.0}, {"dict", 1.0}, {"cell", 0.5}};
    result.findings = {retained};
    CheckResult check{"launch-real-retained", Status::kFail, "", 1250};
    EXPECT_EQ(culpritOf(result, check), "keeps `Kernel`, `dict`, `tuple`");
    result.findings.front().keptTypes.clear();
    EXPECT_EQ(culpritOf(result, check), "N of N cases keep N blocks per launch, N launches");
}

} // namespace
} // namespace leakgate::commands
