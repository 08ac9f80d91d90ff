// The probe interface. A probe measures one thing around one workload run inside a worker. The
// measurement (probes/measurement.cpp) owns the collector and calls every probe at the
// three reads of docs/definitions.md ("Reads"), in this order, with gc disabled throughout:
//   1. afterReturn:     the workload returned, nothing collected yet;
//   2. inGarbage:       one collection with DEBUG_SAVEALL ran; gc.garbage holds what it found;
//   3. afterCollection: gc.garbage cleared, debug flags off, a real collection ran.
#pragma once

#include "lib/report/model.h"

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

// Disables the cyclic GC and starts the watch (probes/gc_guard_probe.cpp): gc.enable() by the
// code under test, every collection leakgate does not start itself, and the collector's
// thresholds, frozen objects and debug flags. The worker calls it before it loads anything of
// the target's, so an import that collects or re-enables gc is caught too.
void watchGc();
// The only way leakgate collects (a collection by anyone else invalidates the measurement):
// gc.collect(generation) with only leakgate's gc.callbacks hook installed while it runs.
void collect(int generation = 2);
// The list the collector saves into under DEBUG_SAVEALL, even if gc.garbage was rebound.
pybind11::list collectorGarbage();
// Makes the workload an `error` at any read where the watch saw something that invalidates the
// measurement: a collection it let run would free the very cycles we measure, so "clean" would
// be a lie.
std::unique_ptr<Probe> makeGcGuardProbe();
// Explains every frame cycle in the saved garbage (check `frame-cycle`).
std::unique_ptr<Probe> makeFrameCycleProbe();
// Explains every frame still alive that no thread runs and no generator owns
// (check `retained-frame`). `onlyNew`: leave out the frames that were already retained before the
// measured code ran (the Python package measures inside a long-lived process, a test runner
// that keeps the tracebacks of earlier failures).
std::unique_ptr<Probe> makeRetainedFrameProbe(bool onlyNew = false);
// Gives every sentinel the workload made a verdict (check `sentinels`).
std::unique_ptr<Probe> makeSentinelProbe();

// The device bytes the workload's device sentinels hold after it returned and after a collection
// (check `device-memory`; `skip` with the reason when CUDA cannot be used).
std::unique_ptr<Probe> makeDeviceMemoryProbe();

} // namespace leakgate::probes
