#include "probes/probe.h"

#include "lib/python/gc_debug_guard.h"
#include "lib/report_text.h"
#include "lib/scanner/components.h"
#include "lib/scanner/explain.h"
#include "lib/scanner/object_graph.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

namespace leakgate::probes {
namespace {

namespace py = pybind11;

class FrameCycleProbe final : public Probe {
  public:
    std::string_view name() const override { return "frame-cycle"; }

    void after(WorkloadResult& result) override {
        py::module_ gc = py::module_::import("gc");
        py::list garbage = gc.attr("garbage");
        scanner::FrameCycles cycles;
        size_t saved = 0;
        {
            // Must run with gc disabled: DEBUG_SAVEALL keeps what the collection finds in
            // gc.garbage instead of freeing it, so the cycles stay there to be explained.
            python::GcDebugGuard saveAll(python::GcDebugGuard::kSaveAll);
            gc.attr("collect")();
            std::vector<PyObject*> objects;  // Borrowed references: gc.garbage keeps them alive
            objects.reserve(garbage.size());
            for (py::handle object : garbage) objects.push_back(object.ptr());
            saved = objects.size();
            auto graph = scanner::ObjectGraph::build(objects);
            auto components = scanner::Components::find(graph);
            cycles = scanner::explainFrameCycles(graph, components);
            garbage.attr("clear")();
        }
        result.details["cyclic_garbage_objects"] = saved;
        auto& findings = cycles.findings;
        result.details["pinned_bytes"] = cycles.total.bytes;
        if (findings.empty()) {
            result.checks.push_back({"frame-cycle", Status::kPass,
                                     fmt::format("no frame in cyclic garbage ({} objects collected)", saved)});
        } else {
            result.checks.push_back({"frame-cycle", Status::kFail,
                                     fmt::format("{} frame cycle{} in cyclic garbage pin {} in all; {}",
                                                 findings.size(), findings.size() == 1 ? "" : "s",
                                                 humanBytes(cycles.total.bytes), findings.front().summary)});
        }
        for (auto& finding : findings) result.findings.push_back(std::move(finding));
    }
};

}  // namespace

std::unique_ptr<Probe> makeFrameCycleProbe() { return std::make_unique<FrameCycleProbe>(); }

}  // namespace leakgate::probes
