// What the bisect matrix blames for a failing check (culpritOf): stable from release to release,
// and the holder a sentinels check names when its sentinels are kept for good.
#include "lib/commands/bisect.h"

#include <gtest/gtest.h>

namespace leakgate {
namespace {

Finding frameCycle(const std::string& function, const std::string& file) {
    Finding finding;
    finding.kind = "frame-cycle";
    finding.summary = "local `currentframe` of `" + function + "` holds its own frame";
    finding.frames.push_back({function, "/venv/lib/python3.11/site-packages/torch/fx/" + file, 1299});
    return finding;
}

TEST(BisectCulprit, NeverFreedSentinelsBlameTheirHolderNotTheFrameCycleBesideThem) {
    WorkloadResult result;
    result.findings.push_back(frameCycle("wrap", "_symbolic_trace.py"));
    CheckResult sentinels{"import-sentinels", Status::kFail,
                          "1 of 1 sentinels outlived their frames (1 never-freed): 8.0 MiB (8388608 bytes) pinned "
                          "until the process ends; the never-freed held by sys.modules['torch.cuda']._PYNVML_ERR -> "
                          "__traceback__ -> tb_frame -> f_back (x17) -> local `sentinel` (1 sentinel)",
                          8388608};
    EXPECT_EQ(culpritOf(result, sentinels), "held by sys.modules['torch.cuda']._PYNVML_ERR");
    sentinels.reason = "1 of 1 sentinels outlived their frames (1 never-freed): 8.0 MiB (8388608 bytes) pinned until "
                       "the process ends; the never-freed held by `ModuleNotFoundError` exception (held from outside "
                       "the Python heap) -> __traceback__ -> tb_frame (1 sentinel)";
    EXPECT_EQ(culpritOf(result, sentinels), "held by `ModuleNotFoundError`");
    // Kept by the cycle only: the frame cycle is their culprit, as before.
    sentinels.reason = "3 of 3 sentinels outlived their frames (3 freed-by-gc-only): 2.0 GiB pinned until gc.collect()";
    EXPECT_EQ(culpritOf(result, sentinels), "wrap (_symbolic_trace.py)");
    sentinels.status = Status::kPass;
    EXPECT_EQ(culpritOf(result, sentinels), "");
}

TEST(BisectCulprit, AHolderIsNamedAsFarAsItsContainerWithTheNameOfAnObjectItStartsAt) {
    WorkloadResult result;
    Finding retained;
    retained.kind = "decorations-retained";
    CheckResult check{"decorations-retained", Status::kFail, "2 of 2 forms", 10};
    auto culprit = [&](const std::string& route) {
        retained.summary = "`compile` leaves 10.13 blocks per decoration; `function` held by " + route;
        result.findings = {retained};
        return culpritOf(result, check);
    };
    EXPECT_EQ(culprit("function `_log_traced_frames` (held from outside the Python heap) -> "
                      "__globals__['always_optimize_code_objects'].refs[i].__callback__"),
              "held by function `_log_traced_frames`");
    EXPECT_EQ(culprit("sys.modules['taichi.lang.impl'].pytaichi.kernels[i]; `list` held by x"),
              "held by sys.modules['taichi.lang.impl'].pytaichi.kernels");
    EXPECT_EQ(culprit("module `leakgate_target`._kernel_cache[<tuple>]"), "held by module `leakgate_target`._kernel_cache");
    EXPECT_EQ(culprit("sys.modules['torch._dynamo.convert_frame'].always_optimize_code_objects.refs[i]"),
              "held by sys.modules['torch._dynamo.convert_frame'].always_optimize_code_objects.refs");
}

} // namespace
} // namespace leakgate
