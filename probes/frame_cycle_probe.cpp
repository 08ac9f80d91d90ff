#include "probes/probe.h"

#include "leakgate/explain.h"
#include "lib/report/units.h"
#include "lib/scanner/components.h"
#include "lib/scanner/explain.h"
#include "probes/sentinel_probe.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <algorithm>
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

// Adds what the collections the program started found (foreignCollections()) to this read: their
// frame cycles as findings that say which collection found them, their other cycles merged by
// shape. Returns how many objects those collections freed.
size_t mergeForeign(scanner::FrameCycles& cycles) {
    size_t objects = 0;
    for (const ForeignCollection& foreign : foreignCollections()) {
        objects += static_cast<size_t>(foreign.objects);
        for (Finding finding : foreign.cycles.findings) {
            finding.summary +=
                fmt::format(" (found by {}, which the program started)", foreign.startedBy);
            cycles.findings.push_back(std::move(finding));
        }
        for (Finding finding : foreign.cycles.atImport) { // judged with the read's own (atImport)
            finding.summary +=
                fmt::format(" (found by {}, which the program started)", foreign.startedBy);
            cycles.atImport.push_back(std::move(finding));
        }
        cycles.total.objects += foreign.cycles.total.objects;
        cycles.total.bytes += foreign.cycles.total.bytes;
        cycles.instances += foreign.cycles.instances;
        for (const CycleShapeCount& shape : foreign.cycles.otherCycles) {
            auto same = std::find_if(cycles.otherCycles.begin(), cycles.otherCycles.end(),
                                     [&](const CycleShapeCount& known) {
                                         return known.types == shape.types && known.cycle == shape.cycle;
                                     });
            if (same == cycles.otherCycles.end()) {
                cycles.otherCycles.push_back(shape);
                cycles.otherExamples.resize(cycles.otherCycles.size(), nullptr); // freed: no example
                ++cycles.otherShapes;
                continue;
            }
            same->count += shape.count;
            same->atImport += shape.atImport;
            if (shape.bytes) same->bytes = same->bytes.value_or(0) + *shape.bytes;
        }
        cycles.otherObjects += foreign.cycles.otherObjects;
    }
    if (objects == 0) return 0;
    // Most instances first again, the examples kept beside their shapes.
    std::vector<size_t> order(cycles.otherCycles.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    cycles.otherExamples.resize(order.size(), nullptr);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return cycles.otherCycles[a].count > cycles.otherCycles[b].count;
    });
    std::vector<CycleShapeCount> shapes;
    std::vector<PyObject*> examples;
    for (size_t i : order) {
        shapes.push_back(cycles.otherCycles[i]);
        examples.push_back(cycles.otherExamples[i]);
    }
    cycles.otherCycles = std::move(shapes);
    cycles.otherExamples = std::move(examples);
    return objects;
}

class FrameCycleProbe final : public Probe {
  public:
    FrameCycleProbe(std::shared_ptr<OtherCycles> others, std::shared_ptr<const ImportTime> imports,
                    std::int64_t importBytes)
        : others_(std::move(others)), imports_(std::move(imports)), importBytes_(importBytes) {}
    std::string_view name() const override { return "frame-cycle"; }

    void inGarbage(std::span<PyObject* const> garbage, WorkloadResult& result) override {
        const scanner::Payloads payloads = payloadsIn(garbage);
        const scanner::ObjectGraph graph = scanner::ObjectGraph::buildOver(garbage);
        const scanner::Components components = scanner::Components::find(graph);
        scanner::FrameCycles cycles =
            scanner::explainFrameCycles(graph, components, payloads.empty() ? nullptr : &payloads,
                                        imports_ && imports_->read ? &imports_->objects : nullptr);
        size_t saved = garbage.size();
        saved += mergeForeign(cycles);
        atImport(cycles, result);
        result.details["cyclic_garbage_objects"] = saved;
        auto& findings = cycles.findings;
        if (others_) {
            others_->read = true;
            others_->shapes = cycles.otherCycles;
            others_->examples = cycles.otherExamples;
            others_->shapeCount = cycles.otherShapes;
            others_->objects = cycles.otherObjects;
        }
        result.details["pinned_bytes"] = cycles.total.bytes;
        // The cycles no frame closes: not this check's to judge, but said, so that a cycle beside
        // the frame cycles (the one a fix breaks, say) is not missed.
        std::string others;
        if (cycles.otherShapes > 0) {
            json& details = result.details["other_cycles"];
            details["shapes"] = cycles.otherShapes;
            details["objects"] = cycles.otherObjects;
            details["largest"] = json::array();
            for (const CycleShapeCount& shape : cycles.otherCycles) {
                if (details["largest"].size() == 5) break;
                details["largest"].push_back(shape);
            }
            const CycleShapeCount& top = cycles.otherCycles.front();
            others = fmt::format(
                "{} cycle shape{} without a frame ({} objects; the largest: {} instance{} "
                "of [{}], {})",
                cycles.otherShapes, cycles.otherShapes == 1 ? "" : "s", cycles.otherObjects, top.count,
                top.count == 1 ? "" : "s", top.types, report::humanBytes(top.bytes.value_or(0)));
        }
        if (findings.empty()) {
            result.checks.push_back(
                {"frame-cycle", Status::kPass,
                 fmt::format("{} ({} objects collected{})",
                             result.details.contains("frame_cycles_at_import")
                                 ? "no frame cycle but those imports made, once (see the note)"
                                 : "no frame in cyclic garbage",
                             saved, others.empty() ? "" : "; " + others),
                 0});
        } else {
            // One line for the check: how many shapes (a culprit and its closing locals), how many
            // instances when there is more than one shape (one shape's summary counts its own),
            // what they hold in all, then the largest shape.
            std::string instances =
                findings.size() == 1 ? "" : fmt::format(" ({} instances)", cycles.instances);
            // sys.getsizeof sees the Python objects only: what they own beyond it (tensors' storages,
            // arrays' buffers, sentinels' payloads) is said beside it, by kind.
            std::vector<std::string> each;
            for (const auto& [kind, bytes] : cycles.total.payloadBytes) {
                result.details["pinned_payload_bytes"][kind] = bytes;
                each.push_back(fmt::format("{} of {} memory", report::humanBytes(bytes), kind));
            }
            const std::string payloads =
                each.empty() ? "" : fmt::format(", and {}", fmt::join(each, " and "));
            result.checks.push_back(
                {"frame-cycle", Status::kFail,
                 fmt::format("{} frame-cycle shape{}{} in cyclic garbage, {} in all{}; {}{}",
                             findings.size(), findings.size() == 1 ? "" : "s", instances,
                             report::humanBytes(cycles.total.bytes), payloads, findings.front().summary,
                             others.empty() ? "" : "; and " + others),
                 cycles.total.bytes});
        }
        for (auto& finding : findings)
            result.findings.push_back(std::move(finding));
    }

  private:
    // The frame cycles an import made that pin only its frames: a note, unless they pin as much as
    // the cyclic-garbage byte limit or device memory, which makes them findings like the rest.
    void atImport(scanner::FrameCycles& cycles, WorkloadResult& result) const {
        using scanner::pinnedInAll;
        std::int64_t bytes = 0;
        size_t noted = 0, moved = 0;
        std::string first;
        for (Finding& finding : cycles.atImport) {
            if (pinnedInAll(finding) >= importBytes_ || finding.payloadBytes.contains("device")) {
                finding.summary += "; made while a module was imported, but it pins over the limit";
                cycles.findings.push_back(std::move(finding));
                ++moved;
                continue;
            }
            result.details["frame_cycles_at_import"].push_back(
                {{"summary", finding.summary}, {"bytes", pinnedInAll(finding)}});
            if (noted++ == 0) first = finding.summary;
            bytes += pinnedInAll(finding);
        }
        if (noted > 0) {
            result.notes.push_back(fmt::format("{} frame-cycle shape{} made while a module was imported "
                                               "pin{} only that import's frames ({}): "
                                               "retention of one time, not judged; the first: {}",
                                               noted, noted == 1 ? "" : "s", noted == 1 ? "s" : "",
                                               report::humanBytes(bytes), first));
        }
        if (moved > 0) // most memory first again, as explainFrameCycles ordered them
            std::stable_sort(
                cycles.findings.begin(), cycles.findings.end(),
                [](const Finding& a, const Finding& b) { return pinnedInAll(a) > pinnedInAll(b); });
    }

    std::shared_ptr<OtherCycles> others_;
    std::shared_ptr<const ImportTime> imports_;
    std::int64_t importBytes_;
};

} // namespace

std::unique_ptr<Probe> makeFrameCycleProbe(std::shared_ptr<OtherCycles> others,
                                           std::shared_ptr<const ImportTime> imports,
                                           std::int64_t importBytes) {
    return std::make_unique<FrameCycleProbe>(std::move(others), std::move(imports), importBytes);
}

} // namespace leakgate::probes
