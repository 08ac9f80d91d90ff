// The launch path's workloads: `launch` (allocator calls, net blocks and cyclic garbage per
// packing call, the reference measured first, before the target is imported), `values` (the bytes behind
// every packed pointer, and whether a stream of distinct values is kept), and `soak` (the
// incident's training loop, RSS over steps; the gate compares target and reference slopes).
#include "lib/workloads/workload.h"

#include "leakgate/allocations.h"
#include "leakgate/errors.h"
#include "lib/python/compat.h"
#include "lib/python/gc_debug_guard.h"
#include "lib/python/text.h"
#include "lib/report/checks.h"
#include "lib/report/units.h"
#include "lib/scanner/explain.h"
#include "lib/workloads/encodings.h"
#include "lib/workloads/harness_loader.h"
#include "lib/workloads/launch_protocol.h"
#include "lib/workloads/scalar_cases.h"
#include "probes/probe.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>

namespace leakgate::workloads {
namespace {

namespace py = pybind11;
using nlohmann::json;

Run measureRun(py::handle call, std::int64_t calls) {
    auto counted = probes::AllocationCounter::countCalls(call.ptr(), calls);
    if (!counted) throw py::error_already_set();
    return perCall(*counted, collectYoungGarbage(), calls);
}

// A warm-up of `warmup` calls, then `runs` runs of `calls` calls each.
std::vector<Run> measureRuns(py::handle call, std::int64_t warmup, int runs, std::int64_t calls) {
    measureRun(call, warmup);
    std::vector<Run> measured;
    for (int run = 0; run < runs; ++run)
        measured.push_back(measureRun(call, calls));
    return measured;
}

constexpr const char* kForms[] = {"T(v).__c_pointers__()", "t.__c_pointers__()"};

// Every case of `types` (scalar types by name): each type leakgate knows that `types` has, each of
// its representative values, both forms; `visit(type, value, form, call)`.
void forEachCase(py::module_& harness, const py::dict& types,
                 const std::function<void(const ScalarType&, py::handle, int, py::object)>& visit) {
    for (const ScalarType& type : scalarTypes()) {
        if (!types.contains(type.name)) continue;
        py::object scalarType = types[py::str(type.name)];
        for (py::handle value : harness.attr("representative_values")(type.name)) {
            py::tuple calls = harness.attr("launch_calls")(scalarType, value);
            for (int form = 0; form < 2; ++form)
                visit(type, value, form, calls[py::int_(form)]);
        }
    }
}

// A case's name: "Int32(7) T(v).__c_pointers__()".
std::string caseName(const ScalarType& type, py::handle value, int form) {
    return fmt::format("{}({}) {}", type.name, valueRepr(value), kForms[form]);
}

constexpr Metric kMetrics[] = {kAllocationsMetric, kNetBlocksMetric, kCyclicGarbageMetric};

// The shortest confirming segment of values-bounded: its bound, kEpsilonPerCall blocks per value,
// is then 256 blocks, past the churn of a bounded cache's resizes.
constexpr std::int64_t kMinConfirmingValues = 25'600;

} // namespace

WorkloadResult runLaunch(const WorkerSpec& spec) {
    WorkloadResult result = newResult(spec, "launch");
    py::module_ harness = loadHarness();
    // The reference first, measured in full before any of the target's code runs: what the target
    // does once loaded (a patched ctypes, a slowed packer) cannot reach the figures it is judged
    // against. Interleaving target and reference runs bought nothing for these counts.
    std::optional<py::dict> reference = referenceTypesOrError(result, harness);
    if (!reference) return result;
    py::dict referenceTypes = *reference;
    probes::AllocationCounter::install();
    const auto [calls, runs, warmup] = loopSettings(spec);
    std::map<std::string, std::vector<Run>> referenceRuns;
    const bool measured = measureReferenceFirst(
        result,
        [&] {
            forEachCase(harness, referenceTypes,
                        [&](const ScalarType& type, py::handle value, int form, py::object call) {
                            referenceRuns[caseName(type, value, form)] =
                                measureRuns(call, warmup, runs, calls);
                        });
        },
        "launch-");
    if (!measured) return result;
    std::optional<py::dict> target =
        targetTypesOrSkip(result, harness, spec, report::checksOf("launch"));
    if (!target) return result;
    py::dict targetTypes = *target;

    probes::ProbeList probes;
    probes.push_back(probes::makeGcGuardProbe());
    json cases = json::array();
    MetricTally tally;
    int caseCount = 0;
    const std::vector<Run> noRuns; // a case the reference has no type for: judged against none
    measure(
        result, probes,
        [&] {
            forEachCase(
                harness, targetTypes,
                [&](const ScalarType& type, py::handle value, int form, py::object targetCall) {
                    const std::string where = caseName(type, value, form);
                    auto reference = referenceRuns.find(where);
                    const std::vector<Run>& referenceRunsOfCase =
                        reference == referenceRuns.end() ? noRuns : reference->second;
                    const std::vector<Run> targetRuns = measureRuns(targetCall, warmup, runs, calls);
                    json entry = {{"type", type.name},
                                  {"value", valueRepr(value)},
                                  {"form", kForms[form]},
                                  {"target", runsJson(targetRuns)},
                                  {"reference", reference == referenceRuns.end()
                                                    ? json(nullptr)
                                                    : runsJson(referenceRunsOfCase)},
                                  {"flagged", json::array()}};
                    ++caseCount;
                    for (const Metric& metric : kMetrics) {
                        auto describe = [&](double low, double referenceHigh) {
                            return fmt::format(
                                "{}: {:.2f} {} per call (reference: {:.2f}) in every one of {} runs "
                                "of {} calls",
                                where, low, metric.what, referenceHigh, runs, calls);
                        };
                        if (tally.add(metric, targetRuns, referenceRunsOfCase, describe, targetCall))
                            entry["flagged"].push_back(metric.check);
                    }
                    cases.push_back(std::move(entry));
                });
        },
        "launch-");
    result.details["cases"] = std::move(cases);
    if (!result.ok() && caseCount == 0) return result;

    for (const Metric& metric : kMetrics) {
        std::string name = std::string("launch-") + metric.check;
        const auto amount = tally.amount(metric);
        const MetricTally::Worst* worst = tally.worst(metric);
        if (!worst) {
            result.checks.push_back(
                {name, Status::kPass,
                 fmt::format("no more {} per call than the reference in any of {} cases", metric.what,
                             caseCount),
                 amount});
            continue;
        }
        const MetricTally::Worst& top = *worst;
        result.checks.push_back({name, Status::kFail,
                                 fmt::format("{} of {} cases exceed the reference; worst {}",
                                             tally.flaggedCases(metric), caseCount, top.reason),
                                 amount});
        Finding finding;
        finding.kind = std::string("launch-") + metric.check;
        finding.summary = top.reason;
        if (std::string(metric.check) == "allocations") {
            // Where the allocations come from: tracemalloc on the worst case.
            py::list sites = harness.attr("top_allocation_sites")(top.call, 1000);
            for (py::handle site : sites) {
                finding.allocationSites.push_back({python::textOf(site[py::int_(0)]),
                                                   site[py::int_(1)].cast<int>(),
                                                   site[py::int_(2)].cast<double>()});
            }
            finding.fix =
                "Pack each immutable scalar once: cache the packed result keyed by type and exact bit "
                "pattern (bounded), and hand out results the caller cannot corrupt.";
        } else if (std::string(metric.check) == "cyclic-garbage") {
            finding.cycleShapes = cycleShapesLeftBy(top.call, 100);
            finding.fix =
                "Leave no reference cycle per launch: ctypes.cast(pointer(x), c_void_p) stores the "
                "pointer in its own _objects dict (CPython bpo-12836), so with gc disabled every call "
                "leaks; pack once and reuse, or point a c_void_p at the value's address without cast";
        } else {
            finding.fix = "Whatever each call keeps must be bounded: free it by reference counting or "
                          "cap the cache.";
        }
        result.findings.push_back(std::move(finding));
    }
    return result;
}

WorkloadResult runValues(const WorkerSpec& spec) {
    WorkloadResult result = newResult(spec, "values");
    py::module_ harness = loadHarness();
    // The encodings are checked against leakgate's own (expectedBytes): no reference is imported.
    auto types = targetTypesOrSkip(result, harness, spec, {"values-encoding", "values-bounded"});
    if (!types) return result;
    py::dict targetTypes = *types;
    probes::AllocationCounter::install();
    const std::int64_t distinct = spec.distinctValues;
    probes::ProbeList probes;
    probes.push_back(probes::makeGcGuardProbe());
    json mismatches = json::array(), rejected = json::array(), bounded = json::array();
    int compared = 0;
    std::vector<std::string> unbounded;
    measure(
        result, probes,
        [&] {
            for (const ScalarType& type : scalarTypes()) {
                if (!targetTypes.contains(type.name)) continue;
                py::object scalarType = targetTypes[py::str(type.name)];
                for (const py::object& value : probeValues(type)) {
                    std::vector<std::uint8_t> expected = expectedBytes(type, value);
                    std::vector<std::uint8_t> got;
                    try {
                        py::bytes packed = harness.attr("pack_bytes")(scalarType, value, type.bytes);
                        std::string raw = packed;
                        got.assign(raw.begin(), raw.end());
                    } catch (py::error_already_set& error) {
                        // A DSL may refuse a value (an out-of-range integer): reported, not a mismatch.
                        rejected.push_back(
                            {{"type", type.name}, {"value", valueRepr(value)}, {"error", error.what()}});
                        continue;
                    }
                    ++compared;
                    if (got != expected) {
                        mismatches.push_back({{"type", type.name},
                                              {"value", valueRepr(value)},
                                              {"expected", hexBytes(expected)},
                                              {"got", hexBytes(got)}});
                    }
                }
            }
            // Boundedness: two halves of a stream of distinct values. A bounded cache may fill up
            // during the first; what the second half adds after a full collection is growth. Growth
            // is judged by the every-run rule, as the per-call checks are: a second half that keeps
            // more than the bound is confirmed by a third segment of the stream, and the check fails
            // only when that one keeps more too (a cache larger than half the stream fills up in
            // the second half; a stray allocation of another thread falls in one segment alone).
            // The third is a fifth of a half: a rate per value needs no more, and what a leaking
            // target keeps (it is only measured when the second half kept too much) stays small.
            // But never under kMinConfirmingValues: a bounded structure's churn is a number of
            // blocks whatever the stream's length (the real nvidia-cutlass-dsl 4.6.1 packer keeps
            // 12 to 107 in a segment of any length), and a short stream's fifth of a half put its
            // bound (20 blocks for --distinct-values 20000) inside that churn.
            for (const char* name : {"Int32", "Float32"}) {
                if (!targetTypes.contains(name)) continue;
                py::object scalarType = targetTypes[py::str(name)];
                const bool floating = std::string(name) == "Float32";
                const std::int64_t half = distinct / 2;
                const std::int64_t confirming = std::max(half / 5, kMinConfirmingValues);
                auto keptBy = [&](std::int64_t start, std::int64_t count) {
                    probes::collect();
                    probes::AllocationCounter::start();
                    try {
                        harness.attr("pack_distinct")(scalarType, start, count, floating);
                    } catch (...) {
                        probes::AllocationCounter::stop();
                        throw;
                    }
                    probes::collect();
                    return probes::AllocationCounter::stop().netBlocks();
                };
                auto perValue = [](std::int64_t kept, std::int64_t values) {
                    return static_cast<double>(kept) / static_cast<double>(values);
                };
                std::int64_t first = keptBy(0, half);
                std::int64_t second = keptBy(half, half);
                std::optional<std::int64_t> third;
                if (perValue(second, half) > kEpsilonPerCall) third = keptBy(2 * half, confirming);
                json entry = {{"type", name},
                              {"distinct_values", 2 * half + (third ? confirming : 0)},
                              {"kept_blocks_first_half", first},
                              {"kept_blocks_second_half", second},
                              {"kept_blocks_per_value_second_half", perValue(second, half)},
                              {"kept_blocks_confirming", nullptr},
                              {"kept_blocks_per_value_confirming", nullptr}};
                if (third) {
                    entry["kept_blocks_confirming"] = *third;
                    entry["kept_blocks_per_value_confirming"] = perValue(*third, confirming);
                }
                bounded.push_back(std::move(entry));
                if (third && perValue(*third, confirming) > kEpsilonPerCall) {
                    unbounded.push_back(
                        fmt::format("{} blocks kept for {} distinct {} values, {} more for the next {} "
                                    "({:.2f} per value) and {} for the {} after ({:.2f} per value, each "
                                    "after a full collection)",
                                    first, half, name, second, half, perValue(second, half), *third,
                                    confirming, perValue(*third, confirming)));
                }
            }
        },
        "values-");
    result.details["mismatches"] = mismatches;
    result.details["rejected"] = rejected;
    result.details["bounded"] = bounded;
    if (!result.ok() && compared == 0) return result;
    if (mismatches.empty()) {
        result.checks.push_back({"values-encoding", Status::kPass,
                                 fmt::format("{} packed values byte-exact ({} refused by the target)",
                                             compared, rejected.size()),
                                 0});
    } else {
        result.checks.push_back(
            {"values-encoding", Status::kFail,
             fmt::format("{} of {} packed values have wrong bytes: {}", mismatches.size(), compared,
                         firstMismatches(mismatches, "got", " packs")),
             static_cast<std::int64_t>(mismatches.size())});
    }
    if (bounded.empty()) {
        result.checks.push_back(
            {"values-bounded", Status::kSkip, "the target has neither Int32 nor Float32", std::nullopt});
    } else if (unbounded.empty()) {
        // A second half above the bound that the confirming segment did not repeat: said, not hidden.
        std::vector<std::string> settled;
        for (const auto& entry : bounded) {
            if (entry["kept_blocks_confirming"].is_null()) continue;
            settled.push_back(fmt::format(
                "{}: {} blocks kept in the second half, {} in the {} values after it",
                entry["type"].get<std::string>(), entry["kept_blocks_second_half"].get<std::int64_t>(),
                entry["kept_blocks_confirming"].get<std::int64_t>(),
                entry["distinct_values"].get<std::int64_t>() - distinct / 2 * 2));
        }
        result.checks.push_back(
            {"values-bounded", Status::kPass,
             fmt::format("packing {} distinct values left memory on a plateau{}", distinct,
                         settled.empty() ? "" : fmt::format(" ({})", fmt::join(settled, "; "))),
             0});
    } else {
        // The figure: what the second half kept, of the types whose growth was confirmed.
        std::int64_t kept = 0;
        for (const auto& entry : bounded) {
            if (entry["kept_blocks_confirming"].is_null()) continue;
            kept = std::max(kept, entry["kept_blocks_second_half"].get<std::int64_t>());
        }
        result.checks.push_back({"values-bounded", Status::kFail,
                                 fmt::format("unbounded: {}", fmt::join(unbounded, "; ")), kept});
    }
    return result;
}

WorkloadResult runSoak(const WorkerSpec& spec) {
    WorkloadResult result = newResult(spec, "soak");
    py::module_ harness = loadHarness();
    // The reference's slope comes from its own worker (role reference): none is imported here.
    auto prepared = targetTypesOrSkip(result, harness, spec, {"soak-growth"});
    if (!prepared) return result;
    py::dict types = *prepared;
    const std::int64_t steps = spec.soakSteps;
    const double seconds = spec.soakSeconds;
    const std::int64_t sampleEvery = spec.soakSampleEvery;
    probes::ProbeList probes;
    probes.push_back(probes::makeGcGuardProbe());
    py::list series;
    bool capped = false;
    // Nothing after the loop is measured (the slope is read during it): no collection after it,
    // which for a leaking target would walk every object it left (millions).
    measure(
        result, probes,
        [&] {
            py::tuple outcome =
                harness.attr("soak")(types, steps, seconds, sampleEvery, spec.soakMaxGrowthBytes);
            series = outcome[0];
            capped = outcome[1].cast<bool>();
        },
        "soak-", probes::Reads::kAfterReturn);
    std::vector<std::pair<double, double>> points;
    for (py::handle sample : series) {
        points.emplace_back(sample[py::int_(0)].cast<double>(), sample[py::int_(1)].cast<double>());
    }
    json samples = json::array();
    for (const auto& [step, rss] : points)
        samples.push_back({static_cast<std::int64_t>(step), static_cast<std::int64_t>(rss)});
    // Least squares over the samples after the first tenth (warm-up: caches filling).
    size_t from = points.size() / 10;
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = from; i < points.size(); ++i) {
        auto [x, y] = points[i];
        n += 1;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    double slope = (n >= 2 && n * sxx - sx * sx > 0) ? (n * sxy - sx * sy) / (n * sxx - sx * sx) : 0.0;
    double perThousand = slope * 1000.0;
    double growth = points.empty() ? 0.0 : points.back().second - points[from].second;
    std::int64_t totalSteps = points.empty() ? 0 : static_cast<std::int64_t>(points.back().first);
    result.details["soak"] = {{"steps", totalSteps},
                              {"samples", samples},
                              {"slope_bytes_per_1000_steps", perThousand},
                              {"growth_bytes", growth},
                              {"stopped_at_max_growth", capped}};
    if (!result.ok()) return result;
    // The gate decides the status from both slopes (lib/commands/gate.cpp); alone, this is the figure.
    result.checks.push_back(
        {"soak-growth", Status::kPass,
         fmt::format("RSS grows {} per 1000 steps over {} steps ({} in all{})",
                     report::humanBytes(static_cast<std::int64_t>(perThousand)), totalSteps,
                     report::humanBytes(static_cast<std::int64_t>(growth)),
                     capped ? fmt::format("; stopped at the {} cap before the budget",
                                          report::humanBytes(spec.soakMaxGrowthBytes))
                            : ""),
         static_cast<std::int64_t>(perThousand)});
    return result;
}

} // namespace leakgate::workloads
