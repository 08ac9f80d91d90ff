#include "lib/workloads/scalar_cases.h"
#include "lib/python/text.h"

#include "probes/measurement.h"
#include "probes/probe.h"

#include "lib/python/gc_debug_guard.h"
#include "lib/scanner/explain.h"
#include "lib/workloads/harness_loader.h"
#include "lib/workloads/launch_protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace leakgate::workloads {

namespace py = pybind11;
using nlohmann::json;

std::string valueRepr(py::handle value) {
    if (PyFloat_Check(value.ptr()) && std::isnan(PyFloat_AS_DOUBLE(value.ptr()))) {
        return fmt::format("nan:{:#018x}", std::bit_cast<std::uint64_t>(PyFloat_AS_DOUBLE(value.ptr())));
    }
    return python::textOf(py::repr(value));
}

void skipAll(WorkloadResult& result, const std::vector<std::string>& checks, const std::string& reason) {
    for (const auto& check : checks)
        result.checks.push_back({check, Status::kSkip, reason, std::nullopt});
}

std::optional<py::dict> targetTypesOrSkip(WorkloadResult& result, py::module_& harness,
                                          const WorkerSpec& spec,
                                          const std::vector<std::string>& checks) {
    py::dict types;
    try {
        types = harness.attr("prepare_target_launch")(targetSpec(spec));
    } catch (py::error_already_set& error) {
        result.error = targetImportError(error);
        return std::nullopt;
    }
    if (types.empty()) {
        skipAll(result, checks, kNoScalarTypesReason);
        return std::nullopt;
    }
    return types;
}

std::optional<py::dict> referenceTypesOrError(WorkloadResult& result, py::module_& harness) {
    py::dict types;
    try {
        types = harness.attr("prepare_reference")();
    } catch (py::error_already_set& error) {
        result.error =
            WorkloadError{fmt::format("the reference runtime could not be imported: {}", error.what()),
                          std::nullopt, ""};
        return std::nullopt;
    }
    if (std::optional<std::string> wrong = sealReference()) {
        result.error = WorkloadError{*wrong, std::nullopt, ""};
        return std::nullopt;
    }
    return types;
}

bool measureReferenceFirst(WorkloadResult& result, const std::function<void()>& body,
                           const std::string& checkPrefix) {
    probes::ProbeList probes;
    probes.push_back(probes::makeGcGuardProbe());
    probes::measure(result, probes, body, checkPrefix);
    return !result.error;
}

std::vector<py::object> probeValues(const ScalarType& type) {
    auto fromBits = [](std::uint64_t bits) { return py::float_(std::bit_cast<double>(bits)); };
    std::vector<py::object> values;
    switch (type.kind) {
    case ScalarKind::kBoolean:
        for (py::object value :
             {py::object(py::bool_(true)), py::object(py::bool_(false)), py::object(py::int_(0)),
              py::object(py::int_(1)), py::object(py::int_(2))})
            values.push_back(value);
        return values;
    case ScalarKind::kSigned:
    case ScalarKind::kUnsigned: {
        int bits = type.bytes * 8;
        bool isSigned = type.kind == ScalarKind::kSigned;
        std::string max =
            isSigned ? fmt::format("(1 << {}) - 1", bits - 1) : fmt::format("(1 << {}) - 1", bits);
        std::string min = isSigned ? fmt::format("-(1 << {})", bits - 1) : "0";
        py::module_ builtins = py::module_::import("builtins");
        for (const std::string& expression : {std::string("0"), std::string("1"), std::string("-1"), min,
                                              max, max + " + 1", min + " - 1", std::string("2**40 + 5"),
                                              std::string("-(2**63)"), std::string("2**64 + 3")}) {
            values.push_back(
                builtins.attr("eval")(expression, py::dict())); // no frame to borrow globals from
        }
        return values;
    }
    default:
        break;
    }
    const double typeMax = type.kind == ScalarKind::kFloat16    ? 65504.0
                           : type.kind == ScalarKind::kBFloat16 ? 3.3895313892515355e38
                           : type.kind == ScalarKind::kFloat64  ? std::numeric_limits<double>::max()
                                                                : std::numeric_limits<float>::max();
    const double typeMinNormal = type.kind == ScalarKind::kFloat16   ? 6.103515625e-05
                                 : type.kind == ScalarKind::kFloat64 ? std::numeric_limits<double>::min()
                                                                     : std::numeric_limits<float>::min();
    const double typeMinSubnormal = type.kind == ScalarKind::kFloat16   ? 5.960464477539063e-08
                                    : type.kind == ScalarKind::kFloat64 ? 5e-324
                                                                        : 1.401298464324817e-45;
    for (double value :
         {0.0, -0.0, 1.0, -1.5, 0.1, std::numeric_limits<double>::infinity(),
          -std::numeric_limits<double>::infinity(), typeMax, -typeMax, typeMinNormal, typeMinSubnormal,
          1e300, 1e-310, 1.0 + std::ldexp(1.0, -11), 1.0 + 3 * std::ldexp(1.0, -11),
          1.0 + std::ldexp(1.0, -8), 1.0 + 3 * std::ldexp(1.0, -8)}) {
        values.push_back(py::float_(value));
    }
    values.push_back(fromBits(0x7FF8000000000000ull)); // the quiet NaN
    values.push_back(fromBits(0x7FF8000000000123ull)); // payload in low bits
    values.push_back(fromBits(0xFFF4000000000000ull)); // negative, payload in high bits
    return values;
}

std::vector<std::uint8_t> expectedBytes(const ScalarType& type, py::handle value) {
    if (isFloating(type)) return encodeFloat(type, value.cast<double>());
    if (type.kind == ScalarKind::kBoolean)
        return encodeInteger(type, PyObject_IsTrue(value.ptr()) ? 1 : 0);
    std::uint64_t modulo = PyLong_AsUnsignedLongLongMask(value.ptr());
    if (PyErr_Occurred()) throw py::error_already_set();
    return encodeInteger(type, modulo);
}

LoopSettings loopSettings(const WorkerSpec& spec) {
    return {spec.launchCalls, spec.launchRuns, spec.launchWarmup};
}

std::int64_t collectYoungGarbage() {
    py::list garbage = probes::collectorGarbage();
    size_t saved;
    {
        // Everything the calls made is in the youngest generation (gc is off, nothing was
        // promoted), so collecting generation 0 finds their cycles without walking the whole
        // heap: a large DSL's heap makes a full collection cost tens of milliseconds.
        python::GcDebugGuard saveAll(python::GcDebugGuard::kSaveAll);
        probes::collect(0);
        saved = garbage.size();
        garbage.attr("clear")();
    }
    // What the collection saved is still a cycle, and now in generation 1 (a collection moves
    // what it keeps to the next generation): collecting that one frees it.
    probes::collect(1);
    return static_cast<std::int64_t>(saved);
}

CountedRun afterLoop(const probes::AllocationCounts& loop, std::int64_t calls) {
    probes::AllocationCounter::start();
    std::int64_t garbage = collectYoungGarbage();
    probes::AllocationCounts collection = probes::AllocationCounter::stop();
    return {perCall(loop, garbage, calls),
            static_cast<double>(loop.netBlocks() + collection.netBlocks()) / static_cast<double>(calls)};
}

CountedRun minus(const CountedRun& a, const CountedRun& b) {
    return {{a.run.allocations - b.run.allocations, a.run.netBlocks - b.run.netBlocks,
             a.run.cyclicGarbage - b.run.cyclicGarbage},
            a.retained - b.retained};
}

CountedRun countedRun(py::handle body, std::int64_t calls) {
    auto counted = probes::AllocationCounter::countCalls(body.ptr(), calls);
    if (!counted) throw py::error_already_set();
    return afterLoop(*counted, calls);
}

std::vector<CycleShapeCount> cycleShapesLeftBy(py::handle call, std::int64_t calls) {
    py::list garbage = probes::collectorGarbage();
    std::vector<scanner::CycleShape> shapes;
    {
        python::GcDebugGuard saveAll(python::GcDebugGuard::kSaveAll);
        probes::collect(0);
        garbage.attr("clear")();
        for (std::int64_t i = 0; i < calls; ++i)
            call();
        probes::collect(0);
        std::vector<PyObject*> objects;
        for (py::handle object : garbage)
            objects.push_back(object.ptr());
        auto graph = scanner::ObjectGraph::build(objects);
        auto components = scanner::Components::find(graph);
        shapes = scanner::describeCycles(graph, components);
        garbage.attr("clear")();
    }
    probes::collect(1); // what was saved is in generation 1 now (see collectYoungGarbage)
    std::vector<CycleShapeCount> counted;
    for (const auto& shape : shapes) {
        std::string cycle;
        for (const auto& step : shape.cycle)
            cycle += fmt::format(" --{}--> {}", step.label, step.to);
        counted.push_back({static_cast<std::int64_t>(shape.count), shape.types, cycle});
    }
    return counted;
}

KeptAlive keptAliveBy(py::handle harness, py::handle body, std::int64_t calls) {
    py::cpp_function collect([] { probes::collect(); });
    KeptAlive kept;
    py::list entries = harness.attr("kept_types")(body, calls, collect);
    // Borrowed pointers: the objects stay alive without the list (they outlived a full
    // collection), and holdersOf only compares them with the heap's.
    std::vector<PyObject*> examples;
    std::vector<std::string> exampleTypes;
    auto explain = [&](py::handle entry, const std::string& type) {
        if (examples.size() < 2 && !entry[py::int_(2)].is_none() &&
            std::find(exampleTypes.begin(), exampleTypes.end(), type) == exampleTypes.end()) {
            examples.push_back(entry[py::int_(2)].ptr());
            exampleTypes.push_back(type);
        }
    };
    for (py::handle entry : entries) {
        const std::string type = python::textOf(entry[py::int_(0)]);
        kept.types.push_back({type, entry[py::int_(1)].cast<double>()});
        if (type == "function") explain(entry, type);
    }
    for (py::handle entry : entries)
        explain(entry, python::textOf(entry[py::int_(0)]));
    entries = py::list();
    const std::vector<std::string> routes = probes::holdersOf(examples);
    for (size_t i = 0; i < routes.size(); ++i)
        kept.holders.push_back({exampleTypes[i], probes::routeShape(routes[i])});
    return kept;
}

void addKept(Finding& finding, KeptAlive kept, const std::string& perWhat) {
    std::vector<std::string> types, holders;
    for (const KeptType& type : kept.types)
        types.push_back(fmt::format("{:.2f} `{}`", type.perCall, type.type));
    for (const KeptHolder& holder : kept.holders)
        holders.push_back(fmt::format("`{}` held by {}", holder.type, holder.route));
    if (!types.empty())
        finding.summary +=
            fmt::format("; objects left alive per {}: {}", perWhat, fmt::join(types, ", "));
    if (!holders.empty()) finding.summary += fmt::format("; {}", fmt::join(holders, "; "));
    finding.keptTypes = std::move(kept.types);
    finding.keptHolders = std::move(kept.holders);
}

Run perCall(const probes::AllocationCounts& counts, std::int64_t cyclicGarbage, std::int64_t calls) {
    auto divide = [&](double value) { return value / static_cast<double>(calls); };
    return {divide(static_cast<double>(counts.allocations)),
            divide(static_cast<double>(counts.netBlocks())), divide(static_cast<double>(cyclicGarbage))};
}

bool MetricTally::add(const std::string& check, const std::vector<double>& runs, double compared,
                      double margin, const std::function<std::string(double, double)>& describe,
                      py::object call) {
    const double low = runs.empty() ? 0 : *std::min_element(runs.begin(), runs.end());
    double& highest = highest_[check];
    highest = std::max(highest, low);
    if (runs.empty() || low <= compared + margin) return false; // the lowest run decides "every run"
    ++flagged_[check];
    Worst& current = worst_[check];
    if (low - compared > current.excess)
        current = {low, low - compared, describe(low, compared), std::move(call)};
    return true;
}

bool MetricTally::add(const Metric& metric, const std::vector<Run>& target,
                      const std::vector<Run>& reference,
                      const std::function<std::string(double, double)>& describe, py::object call) {
    std::vector<double> runs;
    for (const Run& run : target)
        runs.push_back(run.*metric.field);
    double referenceHigh = 0;
    for (const Run& run : reference)
        referenceHigh = std::max(referenceHigh, run.*metric.field);
    return add(metric.check, runs, referenceHigh, kEpsilonPerCall, describe, std::move(call));
}

std::int64_t MetricTally::amount(const std::string& check) const {
    auto found = highest_.find(check);
    return found == highest_.end() ? 0 : static_cast<std::int64_t>(std::llround(found->second * 1000));
}

const MetricTally::Worst* MetricTally::worst(const std::string& check) const {
    auto found = worst_.find(check);
    return found == worst_.end() ? nullptr : &found->second;
}

int MetricTally::flaggedCases(const std::string& check) const {
    auto found = flagged_.find(check);
    return found == flagged_.end() ? 0 : found->second;
}

std::string firstMismatches(const json& mismatches, const char* gotKey, const char* gotVerb) {
    std::vector<std::string> first;
    for (size_t i = 0; i < std::min<size_t>(3, mismatches.size()); ++i) {
        const json& m = mismatches[i];
        first.push_back(fmt::format("{}({}){} {}, want {}", m["type"].get<std::string>(),
                                    m["value"].get<std::string>(), gotVerb, m[gotKey].get<std::string>(),
                                    m["expected"].get<std::string>()));
    }
    return fmt::format("{}", fmt::join(first, "; "));
}

json runsJson(const std::vector<Run>& runs) {
    json out = {{"allocations_per_call", json::array()},
                {"net_blocks_per_call", json::array()},
                {"cyclic_garbage_per_call", json::array()}};
    for (const Run& run : runs) {
        out["allocations_per_call"].push_back(run.allocations);
        out["net_blocks_per_call"].push_back(run.netBlocks);
        out["cyclic_garbage_per_call"].push_back(run.cyclicGarbage);
    }
    return out;
}

json countedRunsJson(const std::vector<CountedRun>& runs) {
    std::vector<Run> plain;
    json retained = json::array();
    for (const CountedRun& run : runs) {
        plain.push_back(run.run);
        retained.push_back(run.retained);
    }
    json out = runsJson(plain);
    out["retained_per_call"] = std::move(retained);
    return out;
}

} // namespace leakgate::workloads
