// A C++ probe plug-in for `leakgate gate --probe`: how many memory blocks does each decoration
// leave allocated for good?
//
// The workload decorates kWarmup fresh functions with the target's `kernel` (or `jit`) decorator,
// so that what a DSL builds once (its caches, its lazy imports) is built, collects with
// leakgate's collect() (the one collection a probe may make), reads sys.getallocatedblocks(),
// then decorates kDecorations more, dropping what it got back each time. After the full
// collection of the third read the probe reads the blocks again: what is still allocated then
// was kept by something that lives on (a kernel cache, a registry), not by garbage, and it grows
// with every decoration. The check fails at one block per decoration or more. The amount is in
// thousandths of a block per decoration, so a baseline run of the gate (or the reference in the
// same run) judges it.
//
//     cmake -S examples/probes/cxx -B build-probe -DCMAKE_PREFIX_PATH=PREFIX
//     cmake --build build-probe
//     leakgate gate --target my_dsl_target.py --probe build-probe/libretained_blocks_probe.so
#include <leakgate/plugin.h>
#include <leakgate/report.h>

#include <pybind11/eval.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace {

namespace py = pybind11;

constexpr std::int64_t kWarmup = 20;
constexpr std::int64_t kDecorations = 200;
// Each decoration is written in Python, as a user writes one: a decorator may look at the frame
// that applies it, and called from C++ there would be none.
constexpr const char* kDecorateFresh = R"(
def decorate_fresh(decorator, index):
    def probe_kernel():
        pass
    probe_kernel.__name__ = probe_kernel.__qualname__ = f"probe_kernel_{index}"
    decorator(probe_kernel)  # what it returns is dropped at once, as is the function
)";

std::int64_t allocatedBlocks() {
    return py::module_::import("sys").attr("getallocatedblocks")().cast<std::int64_t>();
}

// What the workload and the probe share: the blocks allocated once the warm-up was collected.
struct Baseline {
    std::int64_t blocks = 0;
};

class RetainedBlocksProbe final : public leakgate::probes::Probe {
  public:
    explicit RetainedBlocksProbe(std::shared_ptr<const Baseline> baseline)
        : baseline_(std::move(baseline)) {}

    std::string_view name() const override { return "retained-blocks-per-decoration"; }

    void afterCollection(leakgate::WorkloadResult& result) override {
        const std::int64_t retained = allocatedBlocks() - baseline_->blocks;
        const std::int64_t perThousand = retained * 1000 / kDecorations;
        const bool grows = retained >= kDecorations;
        char perDecoration[32];
        std::snprintf(perDecoration, sizeof(perDecoration), "%.2f", perThousand / 1000.0);
        std::string reason = std::to_string(retained) + " blocks still allocated after " +
                             std::to_string(kDecorations) + " decorations and a full collection (" +
                             perDecoration + " per decoration, after " + std::to_string(kWarmup) +
                             " to warm up)";
        if (grows) reason += ": the DSL keeps memory for every decorated function";
        result.checks.push_back({std::string(name()),
                                 grows ? leakgate::Status::kFail : leakgate::Status::kPass, reason,
                                 perThousand});
        result.details["retained_blocks"] = retained;
    }

  private:
    std::shared_ptr<const Baseline> baseline_;
};

void decorate(py::handle target, Baseline& baseline) {
    py::dict scope;
    scope["__builtins__"] = py::module_::import("builtins");
    py::exec(kDecorateFresh, scope);
    py::object decorateFresh = scope["decorate_fresh"];
    py::object decorator = py::hasattr(target, "kernel") ? target.attr("kernel") : target.attr("jit");
    for (std::int64_t index = 0; index < kWarmup; ++index)
        decorateFresh(decorator, -1 - index);
    leakgate::probes::collect(); // never gc.collect(): the gate would call the run invalid
    baseline.blocks = allocatedBlocks();
    for (std::int64_t index = 0; index < kDecorations; ++index)
        decorateFresh(decorator, index);
}

void registerProbes(leakgate::plugin::Registration* registration) {
    auto baseline = std::make_shared<Baseline>();
    registration->probes.push_back(std::make_unique<RetainedBlocksProbe>(baseline));
    registration->workload = [baseline](py::handle target) { decorate(target, *baseline); };
}

} // namespace

LEAKGATE_PLUGIN("retained blocks per decoration", registerProbes);
