// The probe interface. A probe measures one thing around one workload run inside a worker:
// `before` runs just before the workload's code, `after` just after it returned. Probes run in
// the order the workload lists them, and the order is part of the measurement (MEASURES.md):
// the gc guard first, then the DEBUG_SAVEALL collection, then the real one.
#pragma once

#include "lib/report.h"

#include <memory>
#include <string_view>
#include <vector>

namespace leakgate::probes {

class Probe {
  public:
    virtual ~Probe() = default;
    // The check this probe decides ("frame-cycle"), or its own name when it decides none.
    virtual std::string_view name() const = 0;
    virtual void before() {}
    // Appends the probe's checks and findings to `result`, or sets `result.error` when the
    // measurement is invalid. Runs with the GIL held.
    virtual void after(WorkloadResult& result) = 0;
};

using ProbeList = std::vector<std::unique_ptr<Probe>>;

// Fails the workload when the code under test re-enabled the cyclic GC: a collection it let run
// would free the very cycles we measure, so "clean" would be a lie.
std::unique_ptr<Probe> makeGcGuardProbe();
// One DEBUG_SAVEALL collection; explains every frame cycle in gc.garbage (check `frame-cycle`).
std::unique_ptr<Probe> makeFrameCycleProbe();
// A real collection; explains every frame still alive that no thread runs and no generator owns
// (check `retained-frame`). `rootNames` may name extra roots ("the script's globals").
std::unique_ptr<Probe> makeRetainedFrameProbe();

}  // namespace leakgate::probes
