#include "probes/probe.h"

#include "leakgate/explain.h"
#include "lib/report/units.h"
#include "probes/sentinel_probe.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <map>
#include <string>
#include <unordered_set>
#include <vector>

namespace leakgate::probes {
namespace {

namespace py = pybind11;
using nlohmann::json;

// The non-host payloads (device, torch) of the sentinels that sit in `garbage`, by the object
// that holds each.
scanner::Payloads payloadsIn(std::span<PyObject* const> garbage) {
    scanner::Payloads payloads;
    if (!sessionActive()) return payloads;
    std::unordered_set<PyObject*> saved;
    for (const TrackedSentinel& sentinel : sentinelRegistry()) {
        if (sentinel.kind == "host") continue;
        if (saved.empty()) saved.insert(garbage.begin(), garbage.end());
        // The collector cleared the weakrefs of what it saved: identity is the test (of a sentinel
        // alive after the return, read by the sentinel probe, so no other object took its address).
        if (sentinel.aliveAfterReturn && saved.count(sentinel.identity)) {
            scanner::Payload& payload = payloads[sentinel.identity];
            payload.kind = sentinel.kind;
            payload.bytes += sentinel.bytes;
        }
    }
    return payloads;
}

// Their bytes, by kind.
std::map<std::string, std::int64_t> bytesByKind(const scanner::Payloads& payloads) {
    std::map<std::string, std::int64_t> bytes;
    for (const auto& [object, payload] : payloads)
        bytes[payload.kind] += payload.bytes;
    return bytes;
}

class FrameCycleProbe final : public Probe {
  public:
    std::string_view name() const override { return "frame-cycle"; }

    void inGarbage(std::span<PyObject* const> garbage, WorkloadResult& result) override {
        const scanner::Payloads payloads = payloadsIn(garbage);
        scanner::FrameCycles cycles = scanner::explainGarbage(garbage, payloads.empty() ? nullptr : &payloads);
        size_t saved = garbage.size();
        result.details["cyclic_garbage_objects"] = saved;
        auto& findings = cycles.findings;
        result.details["pinned_bytes"] = cycles.total.bytes;
        // The cycles no frame closes: not this check's to judge, but said, so that a cycle beside
        // the frame cycles (the one a fix breaks, say) is not missed.
        std::string others;
        if (cycles.otherShapes > 0) {
            json& details = result.details["other_cycles"];
            details["shapes"] = cycles.otherShapes;
            details["objects"] = cycles.otherObjects;
            details["largest"] = json::array();
            for (const CycleShapeCount& shape : cycles.otherCycles)
                details["largest"].push_back(shape);
            const CycleShapeCount& top = cycles.otherCycles.front();
            others = fmt::format("{} cycle shape{} without a frame ({} objects; the largest: {} instance{} "
                                 "of [{}], {})",
                                 cycles.otherShapes, cycles.otherShapes == 1 ? "" : "s", cycles.otherObjects,
                                 top.count, top.count == 1 ? "" : "s", top.types,
                                 humanBytes(top.bytes.value_or(0)));
        }
        if (findings.empty()) {
            result.checks.push_back(
                {"frame-cycle", Status::kPass,
                 fmt::format("no frame in cyclic garbage ({} objects collected{})", saved,
                             others.empty() ? "" : "; " + others),
                 0});
        } else {
            // One line for the check: how many shapes (a culprit and its closing locals), how many
            // instances when there is more than one shape (one shape's summary counts its own),
            // what they hold in all, then the largest shape.
            std::string instances =
                findings.size() == 1
                    ? ""
                    : fmt::format(" ({} instances)", cycles.instances);
            // sys.getsizeof sees host memory only: device (and torch) payloads of sentinels in this
            // garbage are said beside it, from the sentinels' own bytes.
            std::vector<std::string> each;
            for (const auto& [kind, bytes] : bytesByKind(payloads)) {
                result.details["pinned_payload_bytes"][kind] = bytes;
                each.push_back(fmt::format("{} of {} memory", humanBytes(bytes), kind));
            }
            const std::string payloads =
                each.empty() ? "" : fmt::format(", and {} held by sentinels in it", fmt::join(each, " and "));
            result.checks.push_back(
                {"frame-cycle", Status::kFail,
                 fmt::format("{} frame-cycle shape{}{} in cyclic garbage, {} in all{}; {}{}",
                             findings.size(), findings.size() == 1 ? "" : "s", instances,
                             humanBytes(cycles.total.bytes), payloads, findings.front().summary,
                             others.empty() ? "" : "; and " + others),
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
