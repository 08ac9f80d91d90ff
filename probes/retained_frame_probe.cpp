#include "probes/probe.h"

#include "lib/base/pointer_set.h"
#include "lib/python/collector.h"
#include "lib/python/compat.h"
#include "lib/report/units.h"
#include "lib/scanner/explain.h"
#include "lib/scanner/labels.h"
#include "lib/scanner/object_graph.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace leakgate::probes {
namespace {

namespace py = pybind11;
using python::own;
using python::OwnedRef;

// Frames some thread is running: each thread's top frame and its f_back chain.
std::unordered_set<PyObject*> executingFrames() {
    std::unordered_set<PyObject*> frames;
    py::dict current = py::module_::import("sys").attr("_current_frames")();
    for (auto item : current) {
        OwnedRef frame = own(Py_NewRef(item.second.ptr()));
        while (frame && PyFrame_Check(frame.get())) {
            frames.insert(frame.get());
            frame = python::frameBack(reinterpret_cast<PyFrameObject*>(frame.get()));
        }
    }
    return frames;
}

// Names a retention root as a person knows it.
class RootNamer {
  public:
    RootNamer() {
        py::module_ sys = py::module_::import("sys");
        py::dict modules = sys.attr("modules");
        sysModules_ = modules.ptr();
        for (auto item : modules) {
            if (!PyModule_Check(item.second.ptr())) continue;
            std::string name = py::str(item.first);
            names_[item.second.ptr()] = fmt::format("module `{}`", name);
            names_[PyModule_GetDict(item.second.ptr())] = fmt::format("module `{}` globals", name);
        }
    }

    std::string operator()(PyObject* root) const {
        if (root == sysModules_) return "sys.modules";
        if (auto found = names_.find(root); found != names_.end()) return found->second;
        return fmt::format("{} (held from outside the Python heap)", scanner::describeObject(root));
    }

  private:
    PyObject* sysModules_ = nullptr;                   // Borrowed reference
    std::unordered_map<PyObject*, std::string> names_; // Borrowed keys: modules live on
};

} // namespace

HeapGraph heapGraph(const py::list& objects) {
    std::vector<PyObject*> heap; // Borrowed references
    heap.reserve(objects.size());
    for (py::handle object : objects)
        heap.push_back(object.ptr());
    HeapGraph out{scanner::ObjectGraph::build(heap), {}};
    out.external.resize(out.graph.size());
    for (scanner::NodeId node = 0; node < out.graph.size(); ++node) {
        // One reference is the `objects` list's own.
        out.external[node] =
            static_cast<std::int64_t>(Py_REFCNT(out.graph.object(node))) - out.graph.inDegree(node) - 1;
    }
    return out;
}

namespace {

// The frames among `objects` (borrowed) that no thread runs and no generator owns.
std::vector<PyObject*> framesOutsideCalls(const py::list& objects, size_t* liveFrames) {
    std::unordered_set<PyObject*> executing = executingFrames();
    std::unordered_set<PyObject*> suspended;
    std::vector<PyObject*> frames; // Borrowed references: `objects` keeps them alive
    for (py::handle object : objects) {
        PyObject* raw = object.ptr();
        if (PyFrame_Check(raw)) {
            frames.push_back(raw);
        } else if (PyGen_Check(raw) || PyCoro_CheckExact(raw) || PyAsyncGen_CheckExact(raw)) {
            for (const char* name : {"gi_frame", "cr_frame", "ag_frame"}) {
                PyObject* frame = PyObject_GetAttrString(raw, name);
                if (!frame) {
                    PyErr_Clear();
                    continue;
                }
                suspended.insert(frame);
                Py_DECREF(frame); // the generator keeps it alive
            }
        }
    }
    std::vector<PyObject*> retained;
    for (PyObject* frame : frames) {
        // leakgate's own workload frames count: a target that keeps one alive keeps the sentinels
        // on it alive. The finding names them as leakgate's, never as code of the target.
        if (executing.count(frame) || suspended.count(frame)) continue;
        retained.push_back(frame);
    }
    *liveFrames = frames.size();
    return retained;
}

// gc.get_objects() of generations 0 and 1, in one list.
py::list youngObjects() {
    py::list objects = python::collector::objects(0);
    py::list older = python::collector::objects(1);
    if (PyList_SetSlice(objects.ptr(), PY_SSIZE_T_MAX, PY_SSIZE_T_MAX, older.ptr()) < 0)
        throw py::error_already_set();
    return objects;
}

class RetainedFrameProbe final : public Probe {
  public:
    // `regionOlder` (the package's region, makeRegionRetainedFrameProbe): what the region holds of
    // generation 2 once a region began inside it, null until then.
    RetainedFrameProbe(bool onlyNew, std::shared_ptr<const ImportTime> imports, std::int64_t importBytes,
                       std::shared_ptr<const py::object> regionOlder = nullptr)
        : onlyNew_(onlyNew), imports_(std::move(imports)), importBytes_(importBytes),
          regionOlder_(std::move(regionOlder)) {}
    std::string_view name() const override { return "retained-frame"; }

    void before() override {
        earlier_.clear();
        candidates_.clear();
        if (!onlyNew_) return;
        // Strong references: a frame kept here cannot be freed, so no new frame takes its address.
        py::list objects = readsYoung() ? youngObjects() : python::collector::objects();
        size_t live = 0;
        for (PyObject* frame : framesOutsideCalls(objects, &live))
            earlier_.emplace(frame, py::reinterpret_borrow<py::object>(frame));
    }

    // A region's read 2: the frames its body left are all young now (read 3 moves them to the
    // oldest generation, among every other object of the process), so they are taken here.
    void inGarbage(std::span<PyObject* const> garbage, WorkloadResult& result) override {
        (void)result;
        candidates_.clear();
        if (!readsYoung()) return;
        // What this collection saved is freed by the next one: those frames are the frame-cycle
        // check's, as they are when read 3 walks the whole heap.
        base::PointerSet saved;
        for (PyObject* object : garbage) {
            if (PyFrame_Check(object)) saved.insert(object);
        }
        py::list objects = youngObjects();
        size_t frames = 0;
        std::vector<PyObject*> retained = framesOutsideCalls(objects, &frames);
        youngFrames_ = frames >= saved.size() ? frames - saved.size() : 0;
        // Addresses only: a reference held here would keep a frame alive through read 3 that a
        // finalizer of the garbage releases, and make it a root of the heap the sentinels' holders
        // are traced in. Read 3 looks each up among the objects alive then, never through it.
        for (PyObject* frame : retained) {
            if (!saved.contains(frame) && !earlier_.count(frame)) candidates_.insert(frame);
        }
    }

    void afterCollection(WorkloadResult& result) override {
        if (regionOlder_) {
            afterRegionCollection(result);
            return;
        }
        py::list objects = python::collector::objects();
        size_t frames = 0;
        std::vector<PyObject*> retained = framesOutsideCalls(objects, &frames);
        const size_t earlier = earlier_.size();
        if (onlyNew_)
            std::erase_if(retained, [&](PyObject* frame) { return earlier_.count(frame) > 0; });
        judge(result, objects, std::move(retained), frames, earlier);
    }

  private:
    // Whether this is a region's probe that reads the young generations: until a region begins
    // inside its region, whose collections move this body's objects to the oldest generation.
    bool readsYoung() const {
        return python::kFramesTrackedWhenRetained && regionOlder_ && !*regionOlder_;
    }

    // Read 3 of a region: the frames read 2 took that are still alive, and those the collection
    // could not free (gc.garbage: an object with a legacy tp_del keeps them); the heap is walked
    // only when there is one, to explain it. Once a region began inside this one: every frame of
    // the heap but those that were there before this region began.
    void afterRegionCollection(WorkloadResult& result) {
        if (!readsYoung()) {
            py::list objects = python::collector::objects();
            size_t frames = 0;
            std::vector<PyObject*> retained = framesOutsideCalls(objects, &frames);
            base::PointerSet older; // Borrowed: the region keeps them alive
            if (*regionOlder_) {
                for (py::handle object : *regionOlder_) {
                    if (PyFrame_Check(object.ptr())) older.insert(object.ptr());
                }
            }
            const size_t before = retained.size();
            std::erase_if(retained, [&](PyObject* frame) {
                return earlier_.count(frame) > 0 || older.contains(frame);
            });
            judge(result, objects, std::move(retained), frames, before - retained.size());
            return;
        }
        size_t frames = youngFrames_;
        for (py::handle object : collectorGarbage()) {
            if (PyFrame_Check(object.ptr()) && !earlier_.count(object.ptr())) {
                candidates_.insert(object.ptr());
                ++frames;
            }
        }
        py::list objects; // the whole heap, only to explain what is retained
        std::vector<PyObject*> retained;
        if (!candidates_.empty()) {
            objects = python::collector::objects();
            for (py::handle object : objects) {
                if (PyFrame_Check(object.ptr()) && candidates_.contains(object.ptr()))
                    retained.push_back(object.ptr());
            }
            // A frame read 2 found reachable that is gone now: a finalizer of the garbage let go of
            // it, and read 3 freed it.
            frames -= std::min(frames, candidates_.size() - retained.size());
        }
        candidates_.clear();
        judge(result, objects, std::move(retained), frames, earlier_.size());
    }

    // The check and the findings of read 3: `retained` (borrowed; `objects`, the whole heap, keeps
    // them alive; empty when none is retained) among `frames` live frames, `earlier` of which were
    // retained before the measurement and are left out.
    void judge(WorkloadResult& result, const py::list& objects, std::vector<PyObject*> retained,
               size_t frames, size_t earlier) {
        if (onlyNew_) result.details["earlier_retained_frames"] = earlier;
        earlier_.clear();
        result.details["live_frames"] = frames;
        // Frames an import made whose chain is only that import's: explained apart, and a note
        // unless they pin as much as the limit.
        std::vector<PyObject*> oneOff = takeImportFrames(retained);
        std::optional<HeapGraph> heap;
        if (!oneOff.empty()) {
            heap.emplace(heapGraph(objects));
            std::vector<Finding> once = explain(*heap, oneOff);
            std::int64_t bytes = 0;
            for (const Finding& finding : once)
                bytes += scanner::pinnedInAll(finding);
            if (bytes >= importBytes_) {
                retained.insert(retained.end(), oneOff.begin(), oneOff.end());
                oneOff.clear();
            } else {
                result.details["retained_frames_at_import"] = oneOff.size();
                result.notes.push_back(fmt::format(
                    "{} frame{} made while a module was imported, kept with only that import's frames "
                    "({}): retention of one time, not judged; the first: {}",
                    oneOff.size(), oneOff.size() == 1 ? "" : "s", report::humanBytes(bytes),
                    once.empty() ? std::string("?") : once.front().summary));
            }
        }
        if (retained.empty()) {
            const size_t apartFrames = earlier + oneOff.size();
            const size_t running = frames > apartFrames ? frames - apartFrames : 0;
            std::string apart;
            if (earlier)
                apart += fmt::format("; {} retained before the measurement began, left out", earlier);
            if (!oneOff.empty())
                apart += fmt::format("; {} kept by imports, once (see the note)", oneOff.size());
            result.checks.push_back(
                {"retained-frame", Status::kPass,
                 fmt::format("no frame outlived its call ({} live frame{}, each running or suspended{})",
                             running, running == 1 ? "" : "s", apart),
                 0});
            return;
        }

        if (!heap) heap.emplace(heapGraph(objects));
        std::vector<Finding> findings = explain(*heap, retained);
        std::int64_t pinned = 0;
        for (const auto& finding : findings)
            pinned += finding.bytes;
        result.checks.push_back(
            {"retained-frame", Status::kFail,
             fmt::format("{} frame{} outlived {} call{} after a full collection: {}", retained.size(),
                         retained.size() == 1 ? "" : "s", retained.size() == 1 ? "its" : "their",
                         retained.size() == 1 ? "" : "s",
                         findings.empty() ? "" : findings.front().summary),
             pinned});
        for (auto& finding : findings)
            result.findings.push_back(std::move(finding));
    }

    // Moves out of `retained` the frames an import made whose chains hold only that import's
    // frames (scanner::onlyImportFrames), and the frames on those chains (the importer's module
    // frame, which exits later and is tracked then): they are kept by them.
    std::vector<PyObject*> takeImportFrames(std::vector<PyObject*>& retained) const {
        std::vector<PyObject*> taken;
        if (!imports_ || !imports_->read || imports_->objects.empty()) return taken;
        std::erase_if(retained, [&](PyObject* frame) {
            if (!imports_->objects.contains(frame) || !scanner::onlyImportFrames(frame)) return false;
            taken.push_back(frame);
            return true;
        });
        std::unordered_set<PyObject*> chained;
        for (PyObject* frame : taken) {
            OwnedRef back = python::frameBack(reinterpret_cast<PyFrameObject*>(frame));
            while (back && PyFrame_Check(back.get()) && chained.insert(back.get()).second)
                back = python::frameBack(reinterpret_cast<PyFrameObject*>(back.get()));
        }
        std::erase_if(retained, [&](PyObject* frame) {
            if (!chained.contains(frame)) return false;
            taken.push_back(frame);
            return true;
        });
        return taken;
    }

    static std::vector<Finding> explain(const HeapGraph& heap, const std::vector<PyObject*>& frames) {
        std::vector<scanner::NodeId> nodes;
        for (PyObject* frame : frames)
            nodes.push_back(*heap.graph.find(frame));
        RootNamer namer;
        return scanner::explainRetainedFrames({heap.graph, nodes, heap.external, std::cref(namer)});
    }

    bool onlyNew_;
    std::shared_ptr<const ImportTime> imports_;
    std::int64_t importBytes_;
    std::shared_ptr<const py::object> regionOlder_;
    std::unordered_map<PyObject*, py::object> earlier_; // the frames retained before `before`
    base::PointerSet candidates_; // a region's: the frames read 2 found retained, by address
    size_t youngFrames_ = 0;      // a region's: the live frames read 2 found
};

} // namespace

std::string routeShape(const std::string& route) {
    std::string shape;
    for (size_t i = 0; i < route.size(); ++i) {
        if (route[i] == '[' && i + 1 < route.size() &&
            std::isdigit(static_cast<unsigned char>(route[i + 1]))) {
            size_t end = i + 1;
            while (end < route.size() && std::isdigit(static_cast<unsigned char>(route[end])))
                ++end;
            if (end < route.size() && route[end] == ']') {
                shape += "[i]";
                i = end;
                continue;
            }
        }
        shape += route[i];
    }
    // A long walk up a stack reads as one step: "tb_frame -> f_back (x27) -> ...".
    static constexpr std::string_view kUp = " -> f_back";
    std::string folded;
    for (size_t i = 0; i < shape.size();) {
        size_t run = 0;
        while (shape.compare(i + run * kUp.size(), kUp.size(), kUp) == 0 &&
               (i + (run + 1) * kUp.size() == shape.size() || shape[i + (run + 1) * kUp.size()] == ' ' ||
                shape[i + (run + 1) * kUp.size()] == '.' || shape[i + (run + 1) * kUp.size()] == '['))
            ++run;
        if (run > 2) {
            folded += fmt::format("{} (x{})", kUp, run);
            i += run * kUp.size();
        } else {
            folded += shape[i++];
        }
    }
    return folded;
}

std::vector<std::string> holdersOf(std::span<PyObject* const> objects) {
    py::list tracked = python::collector::objects();
    auto [graph, external] = heapGraph(tracked);
    const scanner::ObjectGraph::Reverse reverse = graph.reverse();
    RootNamer namer;
    std::vector<std::string> holders;
    for (PyObject* object : objects) {
        auto node = graph.find(object);
        holders.push_back(node ? scanner::retentionRoute(graph,
                                                         scanner::pathFromRoot(reverse, external, *node),
                                                         std::cref(namer))
                               : "an unknown holder");
    }
    return holders;
}

std::unique_ptr<Probe> makeRetainedFrameProbe(bool onlyNew, std::shared_ptr<const ImportTime> imports,
                                              std::int64_t importBytes) {
    return std::make_unique<RetainedFrameProbe>(onlyNew, std::move(imports), importBytes);
}

std::unique_ptr<Probe> makeRegionRetainedFrameProbe(std::shared_ptr<const py::object> older) {
    return std::make_unique<RetainedFrameProbe>(/*onlyNew=*/true, nullptr, 0, std::move(older));
}

} // namespace leakgate::probes
