// The import marks (probes/probe.h, ImportTime): which objects the program made while a module was
// being imported. An import runs once per process, so the cycles it leaves (torch's
// `install_config_module.<locals>.visit`, 877 of them on `import torch`) cannot grow with the
// work; counted as the work's, they fail every scan of a program that imports the library.
//
// How: under gc.disable(), with no collection since the measurement began (it collects first),
// the collector's youngest generation holds every object tracked since, in the order they were
// tracked. A marker (an empty list, held here) is tracked when a load starts and another when the
// import statement that started it returns; what lies between a pair, read once when the program's
// code has returned, was made during that import. Reordering can only move an object later (an
// object tracked lazily, a dict that starts holding containers, is tracked when it does): later
// is outside the pair, counted as the work's. What would reorder otherwise is refused, and then no
// object is told apart: a collection since the first marker (the program's own), a marker missing
// from the youngest generation (gc.freeze()) or out of order, a load no import statement started
// (a C extension's own import: its end is not known), a free-threaded build (one generation, in
// heap order: lib/python/compat.h).
#include "probes/probe.h"

#include "lib/python/collector.h"
#include "lib/python/compat.h"
#include "probes/import_watch.h"

#include <pybind11/pybind11.h>

#include <unordered_map>

namespace leakgate::probes {
namespace {

namespace py = pybind11;
using python::own;
using python::OwnedRef;

class ImportMarksProbe final : public Probe, ImportListener {
  public:
    explicit ImportMarksProbe(std::shared_ptr<ImportTime> time) : time_(std::move(time)) {}
    ~ImportMarksProbe() override { unwatchImports(this); }
    std::string_view name() const override { return "import-marks"; }
    bool decidesCheck() const override { return false; }

    void before() override {
        *time_ = ImportTime{};
        markers_.clear();
        open_ = false;
        collections_ = python::collector::collections();
        watchImports(this);
    }

    void importStarts(bool bounded) override {
        if (!bounded) return; // its end is not known: what it makes counts as the work's
        if (OwnedRef marker = own(PyList_New(0))) {
            markers_.push_back(std::move(marker));
            open_ = true;
        } else {
            PyErr_Clear();
        }
    }

    void importEnds() override {
        if (!open_) return;
        if (OwnedRef marker = own(PyList_New(0))) {
            markers_.push_back(std::move(marker));
        } else {
            PyErr_Clear();
            markers_.pop_back(); // an interval without its end is no interval
        }
        open_ = false;
        ++time_->imports;
    }

    void afterReturn(WorkloadResult&) override {
        unwatchImports(this);
        if (open_) { // the program's code ended inside an import (a thread's): no end to pair
            markers_.pop_back();
            open_ = false;
        }
        read();
        markers_.clear();
    }

  private:
    void read() {
        time_->read = true;
        if (markers_.empty()) return;
        if constexpr (python::kFreeThreaded) {
            // One generation, listed in the allocator's heap order (lib/python/compat.h).
            time_->unknown = "a free-threaded build keeps no generation in tracking order";
            return;
        }
        if (python::collector::collections() != collections_) {
            time_->unknown = "the program ran a collection, which reorders the collector's lists";
            return;
        }
        std::unordered_map<PyObject*, size_t> order; // marker -> its place among the markers
        for (size_t i = 0; i < markers_.size(); ++i)
            order.emplace(markers_[i].get(), i);
        py::list young = python::collector::objects(0);
        size_t next = 0; // the marker expected next
        for (py::handle object : young) {
            auto found = order.find(object.ptr());
            if (found != order.end()) {
                if (found->second != next) break;
                ++next;
                continue;
            }
            if (next % 2 == 1) time_->objects.insert(object.ptr()); // between a start and its end
        }
        if (next != markers_.size()) {
            time_->objects.clear();
            time_->unknown =
                "the import marks were not found in order in the collector's youngest generation";
        }
    }

    std::shared_ptr<ImportTime> time_;
    std::vector<OwnedRef> markers_; // start, end, start, end, ...
    bool open_ = false;
    long long collections_ = 0;
};

} // namespace

std::unique_ptr<Probe> makeImportMarksProbe(std::shared_ptr<ImportTime> time) {
    return std::make_unique<ImportMarksProbe>(std::move(time));
}

} // namespace leakgate::probes
