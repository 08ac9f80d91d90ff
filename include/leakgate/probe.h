// The probe interface (public, leakgate/api.h). A probe measures one thing around one workload
// run inside a worker. The measurement (probes/measurement.cpp) owns the collector and calls
// every probe at the three reads of docs/definitions.md ("Reads"), in this order, with gc
// disabled throughout:
//   1. afterReturn:     the workload returned, nothing collected yet;
//   2. inGarbage:       one collection with DEBUG_SAVEALL ran; gc.garbage holds what it found;
//   3. afterCollection: gc.garbage cleared, debug flags off, a real collection ran.
#pragma once

#include "leakgate/api.h"
#include "leakgate/report.h"

#include <pybind11/pybind11.h>

#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace leakgate::probes {

class Probe {
  public:
    virtual ~Probe() = default;
    // The check this probe decides ("frame-cycle"); the runner may prefix it with the workload.
    virtual std::string_view name() const = 0;
    // Whether the probe decides a check of its own name (the gc guard only invalidates).
    virtual bool decidesCheck() const { return true; }
    // Before the measured code runs (after the collection of what was garbage before it).
    virtual void before() {}
    // Each read appends the probe's checks and findings to `result`, or sets `result.error` when
    // the measurement is invalid. All run with the GIL held.
    virtual void afterReturn(WorkloadResult& result) { (void)result; }
    // `garbage`: the objects the DEBUG_SAVEALL collection saved (borrowed; gc.garbage keeps them
    // alive until the runner clears it after every probe has looked).
    virtual void inGarbage(std::span<PyObject* const> garbage, WorkloadResult& result) {
        (void)garbage;
        (void)result;
    }
    virtual void afterCollection(WorkloadResult& result) { (void)result; }
};

using ProbeList = std::vector<std::unique_ptr<Probe>>;

// The only way leakgate collects (a collection by anyone else invalidates the measurement):
// gc.collect(generation) with only leakgate's gc.callbacks hook installed while it runs. A probe
// that needs a collection of its own calls this, never gc.collect().
LEAKGATE_API void collect(int generation = 2);
// The list the collector saves into under DEBUG_SAVEALL, even if gc.garbage was rebound.
LEAKGATE_API pybind11::list collectorGarbage();

} // namespace leakgate::probes
