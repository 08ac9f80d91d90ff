// The cyclic-garbage probe (check `cyclic-garbage`): retention without a frame. A program that
// leaves one shape of reference cycle again and again (a ctypes pointer and its source per launch,
// an object that refers to itself per call) leaks under gc.disable() as surely as a frame cycle,
// and no frame is there to name it. The shapes come from the frame-cycle probe's reading of the
// same garbage (OtherCycles); where the program ran under tracemalloc (`scan --trace-sites`), the
// example cycle's allocation traceback says where such cycles are made.
#include "probes/probe.h"

#include "lib/python/compat.h"
#include "lib/python/text.h"
#include "lib/report/units.h"
#include "lib/scanner/labels.h"

#include <pybind11/eval.h>
#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <map>
#include <tuple>

namespace leakgate::probes {
namespace {

namespace py = pybind11;

std::string functionAt(const std::string& file, int line);

// The traceback tracemalloc kept for `object`, innermost frame first; empty when the program did
// not run under tracemalloc or the object was made before it started. Imports nothing: tracemalloc
// is asked only when the program (or `--trace-sites`) imported it.
std::vector<FrameInfo> madeAt(PyObject* object) {
    std::vector<FrameInfo> frames;
    py::dict modules = py::module_::import("sys").attr("modules");
    if (!modules.contains("tracemalloc")) return frames;
    try {
        py::object tracemalloc = modules["tracemalloc"];
        if (!tracemalloc.attr("is_tracing")().cast<bool>()) return frames;
        py::object traceback = tracemalloc.attr("get_object_traceback")(py::handle(object));
        if (traceback.is_none()) return frames;
        for (py::handle frame : traceback) { // oldest first
            FrameInfo info;
            info.file = python::textOf(frame.attr("filename"));
            info.line = frame.attr("lineno").cast<int>();
            info.function = functionAt(info.file, info.line);
            frames.insert(frames.begin(), info);
        }
    } catch (py::error_already_set&) {
        PyErr_Clear();
        frames.clear();
    }
    return frames;
}

// The function that holds `line` of `file`, qualified by its classes ("DataIter.get_callbacks"),
// or "<module>": tracemalloc keeps file and line only. Read with `ast`, once per file.
std::string functionAt(const std::string& file, int line) {
    static std::map<std::string, std::vector<std::tuple<int, int, std::string>>> known; // file -> spans
    auto found = known.find(file);
    if (found == known.end()) {
        std::vector<std::tuple<int, int, std::string>> spans;
        try {
            py::dict scope;
            scope["path"] = python::fsText(file);
            py::exec(R"(
import ast, tokenize
spans = []
try:
    with tokenize.open(path) as source:
        tree = ast.parse(source.read())
except (OSError, SyntaxError, ValueError):
    tree = None
def visit(node, prefix):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = prefix + child.name
            if not isinstance(child, ast.ClassDef):
                # From the body's first line: the def line (and a decorator) runs in the
                # enclosing scope, where the function object is made.
                spans.append((child.body[0].lineno, child.end_lineno or child.lineno, name))
            visit(child, name + ".")
        else:
            visit(child, prefix)
if tree is not None:
    visit(tree, "")
)",
                     scope);
            for (py::handle span : py::list(scope["spans"]))
                spans.emplace_back(span[py::int_(0)].cast<int>(), span[py::int_(1)].cast<int>(),
                                   span[py::int_(2)].cast<std::string>());
        } catch (py::error_already_set&) {
            PyErr_Clear();
        }
        found = known.emplace(file, std::move(spans)).first;
    }
    // The innermost span that holds the line: the last one listed (a nested function comes after
    // its parent) among those that hold it.
    std::string function = "<module>";
    for (const auto& [first, last, name] : found->second)
        if (first <= line && line <= last) function = name;
    return function;
}

// The fix that fits the shape: what the members' types and the cycle's edges say.
std::string fixFor(const CycleShapeCount& shape) {
    const bool ctypes = shape.cycle.find("--_objects-->") != std::string::npos ||
                        shape.types.find("CArgObject") != std::string::npos ||
                        shape.types.find("LP_") != std::string::npos;
    if (ctypes) {
        return "ctypes.cast() and ctypes.pointer() keep their source in the result's `_objects`, a "
               "cycle per "
               "call (CPython bpo-12836): build the pointer without cast "
               "(ctypes.c_void_p(ctypes.addressof(x)) "
               "with x kept alive by the caller), or pack immutable values once and reuse them.";
    }
    if (shape.cycle.find("--__closure__-->") != std::string::npos) {
        // A nested function in the cycle through its closure: the lint's closure-cycle shapes.
        const size_t at = shape.cycle.find("function `");
        const size_t from = at == std::string::npos ? at : at + std::string_view("function `").size();
        const size_t to = from == std::string::npos ? from : shape.cycle.find('`', from);
        const std::string function = to == std::string::npos
                                         ? "the nested function"
                                         : "`" + shape.cycle.substr(from, to - from) + "`";
        // Only functions, their cells and their closure tuples: a function that reaches itself.
        bool recursive = true;
        for (size_t start = 0; start <= shape.types.size();) {
            size_t end = shape.types.find(", ", start);
            if (end == std::string::npos) end = shape.types.size();
            const std::string_view type = std::string_view(shape.types).substr(start, end - start);
            if (type != "cell" && type != "function" && type != "tuple") recursive = false;
            start = end + 2;
        }
        if (recursive) {
            return fmt::format(
                "{} refers to itself through its closure cell (a recursive nested function): each call "
                "of the function that defines it leaves the function, its cells and what they hold. "
                "Pass it to itself as a parameter, use a loop, move it to module level, or set it to "
                "None in a `finally:` once the calls are done (`leakgate lint` names the line: "
                "closure-cycle).",
                function);
        }
        return fmt::format(
            "{} captures an object that holds it (a callback stored on its owner): capture "
            "`weakref.ref(obj)` and call it inside, pass the object when the callback is called, or "
            "clear the store when done (`leakgate lint` names the line: closure-cycle).",
            function);
    }
    if (shape.types.find("Traceback") != std::string::npos ||
        shape.types.find("traceback") != std::string::npos) {
        return "An exception and its traceback refer to each other through what they keep: do not store "
               "the "
               "exception; keep traceback.TracebackException or its text.";
    }
    return "Each call leaves objects that refer to each other: make the back reference a weakref "
           "(weakref.ref, "
           "weakref.proxy or a WeakValueDictionary), or break the cycle (`del` or set the attribute to "
           "None) "
           "when the objects are done with.";
}

class CyclicGarbageProbe final : public Probe {
  public:
    CyclicGarbageProbe(CycleLimits limits, std::shared_ptr<OtherCycles> others)
        : limits_(limits), others_(std::move(others)) {}
    std::string_view name() const override { return "cyclic-garbage"; }

    void inGarbage(std::span<PyObject* const>, WorkloadResult& result) override {
        if (!others_ || !others_->read) {
            result.checks.push_back(
                {"cyclic-garbage", Status::kError,
                 "the garbage's cycle shapes were not read (no frame-cycle probe ran before "
                 "this one)",
                 std::nullopt});
            return;
        }
        const std::string limits =
            fmt::format("limits: {} instances of one shape, or {} pinned by one shape",
                        limits_.instances, report::humanBytes(limits_.bytes));
        // An import runs once: its cycles count against the byte limit, never the instance limit.
        std::vector<size_t> over;
        std::int64_t atImport = 0;
        for (size_t i = 0; i < others_->shapes.size(); ++i) {
            const CycleShapeCount& shape = others_->shapes[i];
            atImport += shape.atImport;
            if (shape.count - shape.atImport >= limits_.instances ||
                shape.bytes.value_or(0) >= limits_.bytes)
                over.push_back(i);
        }
        const std::string imports =
            atImport == 0
                ? ""
                : fmt::format(" ({} cycle{} made while modules were imported, once, not counted "
                              "against the instance limit)",
                              atImport, atImport == 1 ? "" : "s");
        result.details["cyclic_garbage"] = {{"shapes", others_->shapeCount},
                                            {"objects", others_->objects},
                                            {"instance_limit", limits_.instances},
                                            {"byte_limit", limits_.bytes},
                                            {"at_import", atImport}};
        if (over.empty()) {
            result.checks.push_back(
                {"cyclic-garbage", Status::kPass,
                 others_->shapeCount == 0
                     ? "no cycle without a frame in the garbage"
                     : fmt::format("{} cycle shape{} without a frame ({} objects), none over the {}{}",
                                   others_->shapeCount, others_->shapeCount == 1 ? "" : "s",
                                   others_->objects, limits, imports),
                 0});
            return;
        }
        std::int64_t pinned = 0;
        std::vector<Finding> findings;
        for (size_t i : over) {
            const CycleShapeCount& shape = others_->shapes[i];
            pinned += shape.bytes.value_or(0);
            Finding finding;
            finding.kind = "cyclic-garbage";
            finding.cycleShapes.push_back(shape);
            finding.objects = shape.count;
            finding.bytes = shape.bytes.value_or(0);
            finding.fix = fixFor(shape);
            std::vector<FrameInfo> made = i < others_->examples.size() && others_->examples[i]
                                              ? madeAt(others_->examples[i])
                                              : std::vector<FrameInfo>{};
            std::string where;
            for (const FrameInfo& frame : made) {
                if (scanner::isStandardLibraryFile(frame.file))
                    continue; // ctypes.cast is no site to change
                finding.fixSite = frame;
                where = fmt::format(", made at {}:{}", frame.file, frame.line);
                break;
            }
            for (const FrameInfo& frame : made) {
                finding.frames.push_back(frame);
                if (finding.frames.size() == 8) break;
            }
            if (made.empty()) {
                where = limits_.traceSites ? ", made before tracemalloc started"
                                           : " (where they are made: run again with --trace-sites)";
            }
            finding.summary = fmt::format(
                "{} cycle{} of [{}], {} in all{}{}", shape.count, shape.count == 1 ? "" : "s",
                shape.types, report::humanBytes(shape.bytes.value_or(0)), where,
                shape.atImport == 0
                    ? ""
                    : fmt::format(" ({} made while modules were imported)", shape.atImport));
            findings.push_back(std::move(finding));
        }
        result.checks.push_back(
            {"cyclic-garbage", Status::kFail,
             fmt::format("{} cycle shape{} without a frame over the {}; the largest: {}", over.size(),
                         over.size() == 1 ? "" : "s", limits, findings.front().summary),
             pinned});
        for (Finding& finding : findings)
            result.findings.push_back(std::move(finding));
    }

  private:
    CycleLimits limits_;
    std::shared_ptr<OtherCycles> others_;
};

} // namespace

std::unique_ptr<Probe> makeCyclicGarbageProbe(CycleLimits limits, std::shared_ptr<OtherCycles> others) {
    return std::make_unique<CyclicGarbageProbe>(limits, std::move(others));
}

} // namespace leakgate::probes
