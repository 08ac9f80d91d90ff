// The import marks (probes/probe.h, ImportTime): which objects the program made while a module was
// being imported. An import runs once per process, so the cycles it leaves (torch's
// `install_config_module.<locals>.visit`, 877 of them on `import torch`) cannot grow with the
// work; counted as the work's, they fail every scan of a program that imports the library.
//
// How: under gc.disable() the collector's youngest generation holds every object tracked since
// the last collection, in the order they were tracked. A marker (an empty list, held here) is
// tracked when a load starts and another when the import statement that started it returns; what
// lies between a pair was made during that import. Reordering can only move an object later (an
// object tracked lazily, a dict that starts holding containers, is tracked when it does): later
// is outside the pair, counted as the work's.
//
// The program's own collections (gc.collect() in the script or a library): on 3.10 to 3.13 a
// collection keeps what it does not free in tracking order, but for objects it moves to a list's
// end, and appends lists end to end (lib/python/compat.h, kCollectionsKeepTrackingOrder), so a
// pair's markers still enclose only what the import made, in whatever generation they now are.
// Each such collection is told, at its start, which objects of the generations it collects an
// import made (the gc watch judges its garbage with them, ForeignCollectionListener); an import in
// progress then is cut in two there, so that no pair spans a collection; and what an import made
// and the collection kept is tracked again between a pair of its own, since the collection moved
// some of it out of its pair. The read when the program's code has returned walks every
// generation. What would break the order is refused, and then no object is told apart: a marker
// missing (gc.freeze()) or a pair not adjacent, a load no import statement started (a C
// extension's own import: its end is not known), a collection of the program's on 3.14 or a
// free-threaded build (lib/python/compat.h).
#include "probes/probe.h"

#include "lib/python/collector.h"
#include "lib/python/compat.h"
#include "probes/import_watch.h"

#include <pybind11/pybind11.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace leakgate::probes {
namespace {

namespace py = pybind11;
using python::own;
using python::OwnedRef;

class ImportMarksProbe final : public Probe, ImportListener, ForeignCollectionListener {
  public:
    explicit ImportMarksProbe(std::shared_ptr<ImportTime> time) : time_(std::move(time)) {}
    ~ImportMarksProbe() override { stopListening(); }
    std::string_view name() const override { return "import-marks"; }
    bool decidesCheck() const override { return false; }

    void before() override {
        *time_ = ImportTime{};
        markers_.clear();
        open_ = false;
        reopen_ = false;
        unordered_.clear();
        collections_ = python::collector::collections();
        watchImports(this);
        listenToForeignCollections(this);
    }

    void importStarts(bool bounded) override {
        if (!bounded) return; // its end is not known: what it makes counts as the work's
        open_ = pushMarker();
    }

    void importEnds() override {
        if (!open_) return;
        if (!pushMarker()) markers_.pop_back(); // an interval without its end is no interval
        open_ = false;
        ++time_->imports;
    }

    // A collection of the program's: the pairs in the generations it collects are read before it
    // moves anything; an import in progress is closed here and opened again once it ended.
    const base::PointerSet* collectionStarts(int generation) override {
        atCollection_.clear();
        collected_ = generation;
        if constexpr (!python::kCollectionsKeepTrackingOrder) {
            // Its increments move objects in the order they reach them: no later read holds.
            unordered_ =
                "the program ran a collection, which on this build reorders the collector's lists";
        }
        if (open_) {
            open_ = false;
            reopen_ = true;
            if (!pushMarker()) {
                markers_.pop_back();
                return nullptr;
            }
        }
        std::string problem;
        if (!readPairs(generation, /*all=*/false, atCollection_, problem)) return nullptr;
        return &atCollection_;
    }

    void collectionEnds() override {
        if (unordered_.empty()) keepSurvivorsApart();
        atCollection_.clear();
        if (reopen_) {
            reopen_ = false;
            open_ = pushMarker();
        }
    }

    void afterReturn(WorkloadResult&) override {
        stopListening();
        if (open_) { // the program's code ended inside an import (a thread's): no end to pair
            markers_.pop_back();
            open_ = false;
        }
        read();
        markers_.clear();
    }

  private:
    void stopListening() {
        unwatchImports(this);
        stopListeningToForeignCollections(this);
    }

    // What an import made and the collection kept: the collection moved some of it to the end of
    // its list (what it first thought unreachable), out of its pair. All of it is tracked again
    // between a new pair, in the order the collector lists it. Where it lies now: the generation
    // after the one collected (a full collection keeps its own). An address of `atCollection_`
    // there is the object it was at the start: what the collection or its explanation freed and
    // what took its address since are elsewhere (a new object is tracked in the youngest).
    void keepSurvivorsApart() {
        if (atCollection_.empty()) return;
        py::list objects = python::collector::objects(std::min(collected_ + 1, 2));
        std::vector<PyObject*> survivors; // Borrowed: `objects` holds them
        for (py::handle object : objects)
            if (atCollection_.contains(object.ptr())) survivors.push_back(object.ptr());
        if (survivors.empty() || !pushMarker()) return;
        for (PyObject* object : survivors) {
            if (!PyObject_GC_IsTracked(object)) continue;
            PyObject_GC_UnTrack(object);
            PyObject_GC_Track(object); // at the youngest generation's end
        }
        if (!pushMarker()) markers_.pop_back(); // unpaired: they count as the work's
    }

    bool pushMarker() {
        if (OwnedRef marker = own(PyList_New(0))) {
            markers_.push_back(std::move(marker));
            return true;
        }
        PyErr_Clear();
        return false;
    }

    void read() {
        time_->read = true;
        if (markers_.empty()) return;
        if constexpr (python::kFreeThreaded) {
            // One generation, listed in the allocator's heap order (lib/python/compat.h).
            time_->unknown = "a free-threaded build keeps no generation in tracking order";
            return;
        }
        if (!unordered_.empty()) {
            time_->unknown = unordered_;
            return;
        }
        // With no collection since the marks began, they are all in the youngest generation.
        const bool collected = python::collector::collections() != collections_;
        if (!readPairs(collected ? 2 : 0, /*all=*/true, time_->objects, time_->unknown))
            time_->objects.clear();
    }

    // The objects between each start marker and its end in generations 0 to `oldest` (each pair
    // lies whole in one of them), into `into`. False, with `problem` said, where a pair is not
    // adjacent or (`all`) a marker is missing.
    bool readPairs(int oldest, bool all, base::PointerSet& into, std::string& problem) {
        std::unordered_map<PyObject*, size_t> order; // marker -> its place among the markers
        for (size_t i = 0; i < markers_.size(); ++i)
            order.emplace(markers_[i].get(), i);
        size_t seen = 0;
        for (int generation = 0; generation <= oldest; ++generation) {
            py::list objects = python::collector::objects(generation);
            std::optional<size_t> inside; // the start marker whose end comes next
            for (py::handle object : objects) {
                auto found = order.find(object.ptr());
                if (found == order.end()) {
                    if (inside) into.insert(object.ptr());
                    continue;
                }
                ++seen;
                const size_t place = found->second;
                if (inside ? place != *inside + 1 : place % 2 != 0) {
                    problem = "the import marks were not found in order in the collector's lists";
                    return false;
                }
                inside = inside ? std::nullopt : std::optional<size_t>(place);
            }
            if (inside) {
                problem = "the import marks were not found in order in the collector's lists";
                return false;
            }
        }
        if (all && seen != markers_.size()) {
            problem = "the import marks were not all found in the collector's lists (gc.freeze()?)";
            return false;
        }
        return true;
    }

    std::shared_ptr<ImportTime> time_;
    std::vector<OwnedRef> markers_; // start, end, start, end, ...
    bool open_ = false;             // an import's start is the last marker
    bool reopen_ = false;           // it was closed for a collection of the program's
    std::string unordered_;         // why the lists' order can no longer be read ("" when it can)
    base::PointerSet atCollection_; // what an import made, for the collection in progress
    int collected_ = 0;             // the generation it collects
    long long collections_ = 0;
};

} // namespace

std::unique_ptr<Probe> makeImportMarksProbe(std::shared_ptr<ImportTime> time) {
    return std::make_unique<ImportMarksProbe>(std::move(time));
}

} // namespace leakgate::probes
