// The reproducer writer (lib/commands/repro.h) over reports and target files written here: which
// finding it picks, what the script calls, that the script is Python, and the usage errors.
// Running the scripts on real releases is tests/integration/test_repro.py's.
#include "lib/commands/repro.h"

#include <pybind11/embed.h>

#include <gtest/gtest.h>

#include <string>

namespace leakgate::commands {
namespace {

namespace py = pybind11;

constexpr const char* kCuteTarget = R"(
"""leakgate target: the CuTe DSL."""

import cutlass
import cutlass.cute as cute

TARGET_NAME = "cute"
TARGET_PACKAGE = "nvidia-cutlass-dsl"

kernel = cute.kernel
jit = cute.jit
kernel_options = {"preprocess": False}
jit_options = {"preprocess": False}

_SCALAR_NAMES = ("Int8", "Int32")

scalar_types = {name: getattr(cutlass, name) for name in _SCALAR_NAMES
                if "__c_pointers__" in vars(getattr(cutlass, name, object))}
)";

constexpr const char* kModelTarget = R"(
import inspect

TARGET_NAME = "frame_cycle_461"

class ModelDSL:
    @classmethod
    def kernel(cls, *dargs, **dkwargs):
        cur_frame = inspect.currentframe()
        return lambda fn: fn

kernel = ModelDSL.kernel
)";

constexpr const char* kTableTarget = R"(
import warp as wp

decorators = {"kernel": {"decorator": wp.kernel, "forms": ["bare"]}}
)";

SentinelVerdict sentinel(const std::string& label, const std::string& verdict) {
    return {label, "host", 1 << 20, verdict};
}

// A gate report of the cute target on a leaking release: the decorate workload's frame cycle in
// CuTeDSL.kernel (its jit sentinels freed), then the launch workload's findings.
Report cuteReport() {
    Report report;
    report.command = "gate";
    report.pythonVersion = "3.11.7";
    WorkloadResult decorate;
    decorate.workload = "decorate";
    decorate.subject = "cute";
    decorate.details = {{"target_package", {{"name", "nvidia-cutlass-dsl"}, {"version", "4.6.1"}}}};
    decorate.sentinels = {sentinel("kernel depth=1 frame=1", "freed-by-gc-only"),
                          sentinel("kernel(options) depth=1 frame=1", "freed-by-gc-only"),
                          sentinel("jit depth=1 frame=1", "freed-by-refcount"),
                          sentinel("jit(options) depth=1 frame=1", "freed-by-refcount")};
    Finding cycle;
    cycle.kind = "frame-cycle";
    cycle.summary = "local `current_frame` of `CuTeDSL.kernel` (cutlass.py:1599) holds its own frame";
    cycle.frames = {{"CuTeDSL.kernel",
                     "/venv/lib/python3.11/site-packages/nvidia_cutlass_dsl/cutlass_dsl/cutlass.py",
                     1599}};
    cycle.locals = {"current_frame"};
    cycle.bytes = 19954138;
    cycle.fix = "Capture the source location eagerly and keep no frame object.";
    cycle.fixSite = FrameInfo{"CuTeDSL.kernel", cycle.frames[0].file, 1596};
    decorate.findings = {cycle};
    report.results.push_back(decorate);

    WorkloadResult reference = decorate;
    reference.role = Role::kReference;
    reference.subject = "reference";
    report.results.push_back(reference); // the reference's findings are never reproduced

    WorkloadResult launch;
    launch.workload = "launch";
    launch.subject = "cute";
    Finding allocations;
    allocations.kind = "launch-allocations";
    allocations.summary = "BFloat16(1.5) T(v).__c_pointers__(): 29.84 allocator calls per call";
    Finding garbage;
    garbage.kind = "launch-cyclic-garbage";
    garbage.summary = "Int8(0) T(v).__c_pointers__(): 3.00 objects entering cyclic garbage per call "
                      "(reference: 0.00) in every one of 3 runs of 500 calls";
    launch.findings = {allocations, garbage};
    report.results.push_back(launch);
    return report;
}

ReproTarget cuteTarget() {
    return readReproTarget("cute", kCuteTarget, "/data/targets/cute.py", true);
}

// The script compiles as Python (what the interpreter running it first does).
void expectPython(const std::string& script) {
    py::gil_scoped_acquire gil;
    try {
        py::module_::import("builtins").attr("compile")(script, "repro.py", "exec");
    } catch (py::error_already_set& error) {
        ADD_FAILURE() << error.what() << "\n" << script;
    }
}

TEST(ReproTarget, ReadsTheImportsAndDecoratorsOfATargetFile) {
    const ReproTarget target = cuteTarget();
    EXPECT_EQ(target.imports,
              (std::vector<std::string>{"import cutlass", "import cutlass.cute as cute"}));
    EXPECT_EQ(target.kernel, "cute.kernel");
    EXPECT_EQ(target.jit, "cute.jit");
    EXPECT_EQ(target.kernelOptions, "{\"preprocess\": False}");
    EXPECT_EQ(target.scalarModule, "cutlass");
    EXPECT_EQ(target.package, "nvidia-cutlass-dsl");
    EXPECT_TRUE(target.loadPath.empty());
}

TEST(ReproTarget, LoadsAModelThatDefinesItsDslByPath) {
    const ReproTarget target =
        readReproTarget("frame_cycle_461", kModelTarget, "/fx/frame_cycle_461.py", false);
    EXPECT_EQ(target.loadPath, "/fx/frame_cycle_461.py");
    EXPECT_TRUE(target.kernel.empty()); // ModelDSL is no import: the script cannot name it
}

TEST(ReproTarget, RefusesABuiltinTargetWithADecoratorTable) {
    try {
        readReproTarget("warp", kTableTarget, "/data/targets/warp_dsl.py", true);
        FAIL() << "no UsageError";
    } catch (const UsageError& error) {
        EXPECT_NE(std::string(error.what()).find("`decorators`"), std::string::npos) << error.what();
    }
}

TEST(ReproWriter, WritesTheCulpritsDecoratorInTheFormsThatLeaked) {
    const ReproScript script = writeReproducer(cuteReport(), std::nullopt, cuteTarget(), {});
    EXPECT_EQ(script.shape, ReproShape::kDecoratorFrameCycle);
    EXPECT_EQ(script.findingIndex, 0);
    EXPECT_EQ(script.check, "decorate-frame-cycle");
    EXPECT_NE(script.text.find("    @cute.kernel\n"), std::string::npos) << script.text;
    EXPECT_NE(script.text.find("    @cute.kernel(preprocess=False)\n"), std::string::npos)
        << script.text;
    EXPECT_EQ(script.text.find("@cute.jit"), std::string::npos) << "the jit sentinels were freed";
    // The collector is off before the package is imported, and nothing of leakgate is imported.
    EXPECT_LT(script.text.find("\ngc.disable()"), script.text.find("\nimport cutlass\n"));
    EXPECT_EQ(script.text.find("import leakgate"), std::string::npos);
    EXPECT_EQ(script.text.find("_leakgate"), std::string::npos);
    // The payload is sized from the finding's bytes, rounded up to whole MiB.
    EXPECT_NE(script.text.find("PAYLOAD_BYTES = 20971520"), std::string::npos);
    EXPECT_NE(
        script.text.find("Culprit: CuTeDSL.kernel (nvidia_cutlass_dsl/cutlass_dsl/cutlass.py:1599)"),
        std::string::npos)
        << script.text;
    EXPECT_NE(script.text.find("nvidia-cutlass-dsl 4.6.1"), std::string::npos);
    expectPython(script.text);
}

TEST(ReproWriter, WritesTheReleaseWindowAndThePayloadItIsGiven) {
    ReproSettings settings;
    settings.releaseWindow = "fails from 4.6.0 (4.5.3 passes); fixed in 4.6.3";
    settings.payloadBytes = 4096;
    const ReproScript script = writeReproducer(cuteReport(), 0, cuteTarget(), settings);
    EXPECT_NE(script.text.find("Release window: fails from 4.6.0 (4.5.3 passes); fixed in 4.6.3."),
              std::string::npos)
        << script.text;
    EXPECT_NE(script.text.find("PAYLOAD_BYTES = 4096"), std::string::npos);
}

TEST(ReproWriter, WritesThePackingCallOfALaunchFinding) {
    // Finding 3 (1-based) is launch-cyclic-garbage; index 2 here.
    const ReproScript script = writeReproducer(cuteReport(), 2, cuteTarget(), {});
    EXPECT_EQ(script.shape, ReproShape::kLaunchCyclicGarbage);
    EXPECT_EQ(script.check, "launch-cyclic-garbage");
    EXPECT_NE(script.text.find("    cutlass.Int8(0).__c_pointers__()\n"), std::string::npos)
        << script.text;
    EXPECT_NE(script.text.find("if min(garbage) > THRESHOLD:"), std::string::npos);
    expectPython(script.text);
}

TEST(ReproWriter, PacksOneObjectForTheReusedArgumentForm) {
    Report report = cuteReport();
    report.results[2].findings[1].summary =
        "Int32(7) t.__c_pointers__(): 3.00 objects entering cyclic garbage";
    const ReproScript script = writeReproducer(report, 2, cuteTarget(), {});
    EXPECT_NE(script.text.find("ARGUMENT = cutlass.Int32(7)\n"), std::string::npos) << script.text;
    EXPECT_NE(script.text.find("    ARGUMENT.__c_pointers__()\n"), std::string::npos);
    expectPython(script.text);
}

TEST(ReproWriter, LoadsAModelTargetByPathAndDecoratesWithItsKernel) {
    Report report = cuteReport();
    report.results[0].subject = "frame_cycle_461";
    report.results[0].sentinels.clear();
    report.results[0].findings[0].frames[0].function = "ModelDSL.kernel";
    const ReproTarget model =
        readReproTarget("frame_cycle_461", kModelTarget, "/fx/frame_cycle_461.py", false);
    const ReproScript script = writeReproducer(report, 0, model, {});
    EXPECT_NE(
        script.text.find("spec_from_file_location(\"frame_cycle_461\", \"/fx/frame_cycle_461.py\")"),
        std::string::npos)
        << script.text;
    EXPECT_NE(script.text.find("    @dsl.kernel\n"), std::string::npos);
    EXPECT_NE(script.text.find("    @dsl.kernel(**getattr(dsl, \"kernel_options\", {}))\n"),
              std::string::npos);
    EXPECT_EQ(script.text.find("@dsl.jit"), std::string::npos) << "the culprit is the kernel decorator";
    expectPython(script.text);
}

TEST(ReproWriter, NamesTheShapesItWritesForAFindingOfAnother) {
    try {
        writeReproducer(cuteReport(), 1, cuteTarget(), {}); // launch-allocations
        FAIL() << "no UsageError";
    } catch (const UsageError& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("finding 2 is a launch-allocations finding"), std::string::npos)
            << message;
        EXPECT_NE(message.find("decorate-frame-cycle"), std::string::npos) << message;
        EXPECT_NE(message.find("launch-cyclic-garbage"), std::string::npos) << message;
    }
    EXPECT_THROW(writeReproducer(cuteReport(), 7, cuteTarget(), {}), UsageError);
}

TEST(ReproWriter, TakesTheFirstFindingOfASupportedShapeByDefault) {
    Report report = cuteReport();
    report.results[0].findings.clear(); // left: launch-allocations, then launch-cyclic-garbage
    const ReproScript script = writeReproducer(report, std::nullopt, cuteTarget(), {});
    EXPECT_EQ(script.findingIndex, 1);
    EXPECT_EQ(script.shape, ReproShape::kLaunchCyclicGarbage);
}

TEST(ReproResult, AContradictedExpectationIsExitOneAndAnErrorExitThree) {
    ReproResult result;
    result.runs = {{"/leaking/python", ReproVerdict::kReproduces, ReproVerdict::kReproduces, 1, ""},
                   {"/fixed/python", ReproVerdict::kClean, ReproVerdict::kClean, 0, ""}};
    EXPECT_EQ(result.exitCode(), ExitCode::kClean);
    result.runs.push_back({"/broken/python", std::nullopt, ReproVerdict::kError, 2, "ImportError"});
    EXPECT_EQ(result.exitCode(), ExitCode::kErrored);
    result.runs[1].verdict = ReproVerdict::kReproduces; // the fixed release still leaks
    EXPECT_TRUE(result.runs[1].contradicted());
    EXPECT_EQ(result.exitCode(), ExitCode::kFindings);
}

} // namespace
} // namespace leakgate::commands
