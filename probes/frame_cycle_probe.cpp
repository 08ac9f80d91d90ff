#include "probes/probe.h"

#include "lib/report/units.h"
#include "leakgate/explain.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

namespace leakgate::probes {
namespace {

namespace py = pybind11;

class FrameCycleProbe final : public Probe {
  public:
    std::string_view name() const override { return "frame-cycle"; }

    void inGarbage(std::span<PyObject* const> garbage, WorkloadResult& result) override {
        scanner::FrameCycles cycles = scanner::explainGarbage(garbage);
        size_t saved = garbage.size();
        result.details["cyclic_garbage_objects"] = saved;
        auto& findings = cycles.findings;
        result.details["pinned_bytes"] = cycles.total.bytes;
        if (findings.empty()) {
            result.checks.push_back(
                {"frame-cycle", Status::kPass,
                 fmt::format("no frame in cyclic garbage ({} objects collected)", saved), 0});
        } else {
            // One line for the check: how many shapes (a culprit and its closing locals), how many
            // instances when there is more than one shape (one shape's summary counts its own),
            // what they hold in all, then the largest shape.
            std::string instances =
                findings.size() == 1
                    ? ""
                    : fmt::format(" ({} instances)", cycles.instances);
            result.checks.push_back(
                {"frame-cycle", Status::kFail,
                 fmt::format("{} frame-cycle shape{}{} in cyclic garbage, {} in all; {}",
                             findings.size(), findings.size() == 1 ? "" : "s", instances,
                             humanBytes(cycles.total.bytes), findings.front().summary),
                 cycles.total.bytes});
        }
        for (auto& finding : findings)
            result.findings.push_back(std::move(finding));
    }
};

} // namespace

std::unique_ptr<Probe> makeFrameCycleProbe() {
    return std::make_unique<FrameCycleProbe>();
}

} // namespace leakgate::probes
