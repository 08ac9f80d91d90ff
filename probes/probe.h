// The built-in probes, and the gc watch they rely on. The interface they implement is public
// (leakgate/probe.h); these are internal.
#pragma once

#include "leakgate/probe.h"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace leakgate::probes {

// Disables the cyclic GC and starts the watch (probes/gc_guard_probe.cpp): gc.enable() by the
// code under test, every collection leakgate does not start itself, and the collector's
// thresholds, frozen objects and debug flags. The worker calls it before it loads anything of
// the target's, so an import that collects or re-enables gc is caught too.
void watchGc();
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
// What holds each of `objects` (borrowed, alive, tracked by the collector) after a collection:
// the route from its nearest root, as `retained-frame` gives it for frames
// ("module `keeps`._SCOPES[3]['payload']"), or "an unknown holder" (probes/retained_frame_probe.cpp).
// Call with the GIL held.
std::vector<std::string> holdersOf(std::span<PyObject* const> objects);
// A route with its positions left out, so that the objects kept by one list read as one holder:
// "_SCOPES[3]['payload']" -> "_SCOPES[i]['payload']".
std::string routeShape(const std::string& route);

// The device bytes the workload's device sentinels hold after it returned and after a collection
// (check `device-memory`; `skip` with the reason when CUDA cannot be used). `lazy`: CUDA is not
// started unless the workload placed a device sentinel (which starts it), so cuMemGetInfo has no
// reading from before the workload: `scan`, whose scripts rarely place one.
std::unique_ptr<Probe> makeDeviceMemoryProbe(bool lazy = false);

} // namespace leakgate::probes
