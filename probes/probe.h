// The built-in probes, and the gc watch they rely on. The interface they implement is public
// (leakgate/probe.h); these are internal.
#pragma once

#include "leakgate/explain.h"
#include "leakgate/probe.h"
#include "lib/base/pointer_set.h"
#include "lib/scanner/object_graph.h"

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

namespace leakgate::probes {

// What leakgate allocates while the measured code runs (explaining a collection the program
// started) is not that code's: the allocation counter stops for the scope, if it was counting.
class UncountedAllocations {
  public:
    UncountedAllocations();
    ~UncountedAllocations();
    UncountedAllocations(const UncountedAllocations&) = delete;
    UncountedAllocations& operator=(const UncountedAllocations&) = delete;

  private:
    bool wasCounting_;
};

// Disables the cyclic GC and starts the watch (probes/gc_guard_probe.cpp): gc.enable() by the
// code under test, every collection leakgate does not start itself, and the collector's
// thresholds, frozen objects and debug flags. The worker calls it before it loads anything of
// the target's, so an import that collects or re-enables gc is caught too.
void watchGc();
// A collection the program started (gc.collect() in it or a library) while a measurement ran:
// leakgate had the collector save what it found, explained it, then freed it as the collector
// would have. The frame-cycle and cyclic-garbage checks report these beside their own read.
struct ForeignCollection {
    std::string startedBy; // "a collection of generation 2 from file:line in function"
    std::int64_t objects = 0;
    scanner::FrameCycles cycles; // its otherExamples are empty: those objects are gone
};
// Those of the current measurement, oldest first (cleared when the next measurement begins).
const std::vector<ForeignCollection>& foreignCollections();
// A region that another begins inside sets its own aside (take), and puts them back before its
// reads (before those the measurement gathered since).
std::vector<ForeignCollection> takeForeignCollections();
void putBackForeignCollections(std::vector<ForeignCollection> earlier);
// Off by default: such a collection makes the measurement `error` (the gate's workloads, whose
// targets are judged as they run under gc.disable()). `scan` and the package's regions turn it on.
// A sentinel such a collection finds is freed by it: the watch tells the sentinel probe, which
// judges it freed-by-gc-only (TrackedSentinel::collectedBy). Returns the setting it replaces.
bool explainForeignCollections(bool on);
// Something of leakgate's own that the code under test must not change (the harness's functions,
// `_leakgate`'s): asked before the reads of every measurement; a message (what was changed) makes
// the measurement `error`. One at a time: a new one replaces the last (each workload loads its
// harness afresh); an empty function removes it.
void setIntegrityCheck(std::function<std::optional<std::string>()> check);
// Makes the workload an `error` at any read where the watch saw something that invalidates the
// measurement: a collection it let run would free the very cycles we measure, so "clean" would
// be a lie.
std::unique_ptr<Probe> makeGcGuardProbe();
// The cycles without a frame that the frame-cycle probe saw in the garbage, for the cyclic-garbage
// probe that reads the same garbage after it: the largest shapes (CycleShapeCount), one member of
// each example (borrowed, alive only during that read), how many shapes and objects in all.
struct OtherCycles {
    bool read = false; // filled at this read
    std::vector<CycleShapeCount> shapes;
    std::vector<PyObject*> examples;
    std::int64_t shapeCount = 0;
    std::int64_t objects = 0;
};
// The objects the program made while a module was being imported (probes/import_marks.cpp): an
// import runs once, so what it leaves is retention of one time, judged apart by the frame-cycle,
// cyclic-garbage and retained-frame probes given it. Filled at the first read (afterReturn).
struct ImportTime {
    bool read = false;
    // Borrowed and compared by address only: an object of the garbage or a retained frame was
    // alive at the first read, so its address is its identity until the last.
    base::PointerSet objects;
    std::int64_t imports = 0; // import statements that loaded modules
    std::string unknown;      // why no object could be told apart ("" when they were)
};
// Told of each collection the program starts while its garbage is explained
// (explainForeignCollections): collectionStarts(generation) comes before the collector moves
// anything and answers the objects an import made among those that collection can free (or
// null), valid until collectionEnds(), which comes once that garbage was explained. Several may
// listen (the import marks, a region): the first answer that is not null is the one used. What
// that collection frees (its finalizers, then leakgate's freeing of what it saved) is freed between
// the two (the device-memory probe reads its witnesses there).
class ForeignCollectionListener {
  public:
    virtual ~ForeignCollectionListener() = default;
    virtual const base::PointerSet* collectionStarts(int generation) = 0;
    virtual void collectionEnds() = 0;
};
void listenToForeignCollections(ForeignCollectionListener* listener);
void stopListeningToForeignCollections(ForeignCollectionListener* listener);
// Places the marks (no check of its own): must come before the probes that read `time`. It also
// tells the gc watch which objects of a collection the program starts an import made, so that
// what such a collection finds is judged as the final read's garbage is (listens as above).
std::unique_ptr<Probe> makeImportMarksProbe(std::shared_ptr<ImportTime> time);
// Explains every frame cycle in the saved garbage (check `frame-cycle`); `others`, when given,
// gets the cycles no frame closes. With `imports`, a frame cycle made while a module was imported
// that pins only that import's frames (scanner::onlyImportFrames) and less than `importBytes`
// (payloads included) is a note, not a finding.
std::unique_ptr<Probe> makeFrameCycleProbe(std::shared_ptr<OtherCycles> others = nullptr,
                                           std::shared_ptr<const ImportTime> imports = nullptr,
                                           std::int64_t importBytes = 0);
// When cycles without a frame are a finding (docs/definitions.md, "Cyclic garbage"): one shape
// with at least `instances` cycles, or whose cycles pin at least `bytes` (payloads included).
struct CycleLimits {
    std::int64_t instances = 100;
    std::int64_t bytes = 1 << 20;
    bool traceSites = false; // the program runs under tracemalloc (scan --trace-sites)
};
// Judges those cycles (check `cyclic-garbage`): must come after the frame-cycle probe that fills
// `others`, in the same probe list.
std::unique_ptr<Probe> makeCyclicGarbageProbe(CycleLimits limits, std::shared_ptr<OtherCycles> others);
// What the program's work left in containers a library holds (check `held-growth`): one holder
// that gained at least `entries` entries, or whose gained entries keep at least `bytes`
// (probes/held_growth_probe.cpp says what a holder is and what counts as the program's work).
struct HeldLimits {
    std::int64_t entries = 1000;
    std::int64_t bytes = std::int64_t{64} << 20;
};
std::unique_ptr<Probe> makeHeldGrowthProbe(HeldLimits limits);
// Explains every frame still alive that no thread runs and no generator owns
// (check `retained-frame`). `onlyNew`: leave out the frames that were already retained before the
// measured code ran (the Python package measures inside a long-lived process, a test runner
// that keeps the tracebacks of earlier failures).
// With `imports`, a frame made while a module was imported whose chain holds only that import's
// frames, pinning less than `importBytes`, is a note, not a finding.
std::unique_ptr<Probe> makeRetainedFrameProbe(bool onlyNew = false,
                                              std::shared_ptr<const ImportTime> imports = nullptr,
                                              std::int64_t importBytes = 0);
// The retained-frame check of the Python package's region. Its reads examine the young
// generations, as the region's collections do: the frames the body left are taken at read 2,
// while they are still young, and the heap is walked only to explain one that read 3 finds still
// alive. Once the region sets `older` (generation 2 when a region began inside it) it walks the
// whole heap at read 3, leaving out the frames in `older`, which were there before.
std::unique_ptr<Probe> makeRegionRetainedFrameProbe(std::shared_ptr<const pybind11::object> older);
// Gives every sentinel the workload made a verdict (check `sentinels`). `planned`: the fewest the
// workload's own code places before the target's runs; fewer placed is `error` (the harness was
// changed under it), never `skip`.
std::unique_ptr<Probe> makeSentinelProbe(std::int64_t planned = 0);
// What holds each of `objects` (borrowed, alive, tracked by the collector) after a collection:
// the route from its nearest root, as `retained-frame` gives it for frames
// ("module `keeps`._SCOPES[3]['payload']"), or "an unknown holder" (probes/retained_frame_probe.cpp).
// Call with the GIL held.
std::vector<std::string> holdersOf(std::span<PyObject* const> objects);
// The graph of `objects` (gc.get_objects(), which keeps them alive while the graph is used), and
// each node's references from outside it: a positive count makes the node a root.
struct HeapGraph {
    scanner::ObjectGraph graph;
    std::vector<std::int64_t> external;
};
HeapGraph heapGraph(const pybind11::list& objects);
// A route with its positions left out, so that the objects kept by one list read as one holder:
// "_SCOPES[3]['payload']" -> "_SCOPES[i]['payload']".
std::string routeShape(const std::string& route);

// The device bytes the workload's device sentinels hold after it returned and after a collection
// (check `device-memory`; `skip` with the reason when CUDA cannot be used). `lazy`: CUDA is not
// started unless the workload placed a device sentinel (which starts it), so cuMemGetInfo has no
// reading from before the workload: `scan`, whose scripts rarely place one.
std::unique_ptr<Probe> makeDeviceMemoryProbe(bool lazy = false);

} // namespace leakgate::probes
