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
            result.checks.push_back(
                {"frame-cycle", Status::kFail,
                 fmt::format("{} frame cycle{} in cyclic garbage pin {} in all; {}", findings.size(),
                             findings.size() == 1 ? "" : "s", humanBytes(cycles.total.bytes),
                             findings.front().summary),
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
