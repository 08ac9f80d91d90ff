// The gc guard: a measurement is valid only if no collection ran in the worker but the ones
// leakgate started, and the collector's settings stayed as leakgate set them (docs/definitions.md,
// "Valid measurements"). CPython's own per-generation counters (gc.get_stats()) are the evidence,
// so a collection is noticed however it was started: gc.collect() from the code under test or its
// test runner, gc re-enabled through a fresh `import gc` or the C API, or from a __del__ during
// leakgate's own collection. A gc.callbacks hook and the wrapped gc.enable only name who did it.
#include "probes/probe.h"

#include "lib/python/collector.h"
#include "lib/python/compat.h"
#include "lib/python/gc_debug_guard.h"
#include "lib/python/text.h"
#include "lib/scanner/explain.h"
#include "lib/scanner/labels.h"
#include "probes/sentinel_probe.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

namespace leakgate::probes {
namespace {

namespace py = pybind11;

// One watch per worker, from watchGc() to the worker's end. Strong references, for the life of
// the worker (they are released with the interpreter's own modules).
struct Watch {
    PyObject* originalEnable = nullptr;
    PyObject* callback = nullptr; // our gc.callbacks hook
    PyObject* garbage = nullptr;  // the list the collector fills, whatever gc.garbage is rebound to
    std::string enabledAt;        // where the code under test called gc.enable() first
    std::string collectedAt;      // what started the first collection leakgate did not start
    bool own = false;             // leakgate's collect() is running
    long long ownCollections = 0;
    long long collectionsAtStart = 0; // CPython's count when the watch started
    PyObject* threshold = nullptr;    // gc.get_threshold() when the watch started
    long long frozenAtStart = 0;
    // A collection the program started while a measurement runs: its garbage is saved, explained
    // and then freed as the collector would have freed it (foreignCollections()).
    bool explainForeign = false; // explainForeignCollections(): scan's scripts
    bool measuring = false;
    bool inForeign = false;
    int foreignDebug = 0;          // the debug flags the program had set, put back at "stop"
    Py_ssize_t foreignFirst = 0;   // where that collection's garbage begins in the garbage list
    long long foreignCaptured = 0; // collections the program started whose garbage was explained
    std::vector<ForeignCollection> foreign;
    std::vector<ForeignCollectionListener*> listeners; // the import marks (scan), regions
    const base::PointerSet* madeAtImport = nullptr;    // their answer for the collection in progress
};
Watch g_watch;

namespace collector = python::collector;

long long collectionsSoFar() {
    return collector::collections();
}

std::string callerDescription() {
    PyFrameObject* caller = PyEval_GetFrame(); // Borrowed reference
    if (!caller) return "native code";
    FrameInfo info = scanner::frameInfo(reinterpret_cast<PyObject*>(caller));
    return fmt::format("{}:{} in {}", info.file, info.line, info.function);
}

PyObject* guardedEnable(PyObject*, PyObject*) {
    if (g_watch.enabledAt.empty()) g_watch.enabledAt = callerDescription();
    return PyObject_CallNoArgs(g_watch.originalEnable);
}

// The collector's own step for garbage it does not save (CPython's delete_garbage): tp_clear on
// each object while a reference keeps it, so that the cycles break and the objects go when the
// list lets them go. Their finalizers already ran in the collection.
void clearAsTheCollectorDoes(PyObject* list, Py_ssize_t first) {
    const Py_ssize_t size = PyList_GET_SIZE(list);
    for (Py_ssize_t i = first; i < size; ++i) {
        PyObject* object = PyList_GET_ITEM(list, i); // Borrowed reference
        if (PyFrame_Check(object)) {
            // Explaining it read f_locals, which on 3.10 to 3.12 puts a dict of a function's locals
            // on its frame after the collection: that dict is in no list, and the frame's tp_clear
            // leaves it, so it would keep the frame (and what its locals hold) alive. Only a
            // function's (CO_OPTIMIZED) frame has such a dict of its own: a module's or a class
            // body's f_locals is the live namespace (a module's globals), never to be touched.
            python::OwnedRef code = python::frameCode(reinterpret_cast<PyFrameObject*>(object));
            const bool function =
                code && (reinterpret_cast<PyCodeObject*>(code.get())->co_flags & CO_OPTIMIZED) != 0;
            if (function) {
                python::OwnedRef locals = python::frameLocals(object);
                if (locals && PyDict_Check(locals.get())) PyDict_Clear(locals.get());
            }
            PyErr_Clear();
        }
        if (inquiry clear = Py_TYPE(object)->tp_clear) {
            Py_INCREF(object);
            (void)clear(object);
            PyErr_Clear();
            Py_DECREF(object);
        }
    }
    PyList_SetSlice(list, first, size, nullptr);
    PyErr_Clear();
}

// The sentinels alive as a collection of the program's starts: those it then saves in the garbage
// are found there by address (alive at the start, so no other object has it), the collector having
// cleared their weak references.
void noteLiveSentinels() {
    if (!sessionActive()) return;
    for (TrackedSentinel& sentinel : sentinelRegistry())
        sentinel.aliveAtCollectionStart = python::weakrefIsAlive(sentinel.weakref.get());
}

// Marks the sentinels that collection found (collectedBy); answers their payloads other than the
// host's (device, torch), by the object that holds each, for the explanation's bytes.
scanner::Payloads collectedSentinels(const std::vector<PyObject*>& saved) {
    scanner::Payloads payloads;
    if (!sessionActive()) return payloads;
    std::unordered_set<PyObject*> garbage;
    for (TrackedSentinel& sentinel : sentinelRegistry()) {
        if (!sentinel.aliveAtCollectionStart) continue;
        sentinel.aliveAtCollectionStart = false;
        if (garbage.empty()) garbage.insert(saved.begin(), saved.end());
        if (!garbage.count(sentinel.identity)) continue;
        if (sentinel.collectedBy.empty()) sentinel.collectedBy = g_watch.collectedAt;
        if (sentinel.kind == "host") continue;
        scanner::Payload& payload = payloads[sentinel.identity];
        payload.kind = sentinel.kind;
        payload.bytes += sentinel.bytes;
    }
    return payloads;
}

// A collection the program started ends: what it found is explained, then freed. `collected`:
// what the collector says it found (the "stop" callback's info). A hook of the program that ran
// before ours and emptied gc.garbage leaves nothing: then this collection is not counted as
// explained, and the measurement is invalid (invalidity()).
void explainForeignGarbage(Py_ssize_t collected) {
    g_watch.inForeign = false;
    struct Ended { // the listeners' answer stays valid until the garbage is explained (or not)
        ~Ended() {
            for (ForeignCollectionListener* listener : std::vector(g_watch.listeners))
                listener->collectionEnds();
            g_watch.madeAtImport = nullptr;
        }
    } ended;
    try {
        python::collector::setDebugFlags(g_watch.foreignDebug);
    } catch (py::error_already_set&) {
        PyErr_Clear();
    }
    PyObject* list = g_watch.garbage;
    const Py_ssize_t size = PyList_GET_SIZE(list);
    // The counts do not match the list exactly (weakrefs cleared count in "collected", objects a
    // finalizer resurrected are not saved), but a list emptied after the collection saved into it
    // shows.
    if (collected < 0 || size < g_watch.foreignFirst || (collected > 0 && size == g_watch.foreignFirst))
        return;
    if (size > g_watch.foreignFirst) {
        std::vector<PyObject*> saved; // Borrowed references: the list keeps them
        for (Py_ssize_t i = g_watch.foreignFirst; i < size; ++i)
            saved.push_back(PyList_GET_ITEM(list, i));
        ForeignCollection collection;
        collection.startedBy = g_watch.collectedAt;
        collection.objects = static_cast<std::int64_t>(saved.size());
        const scanner::Payloads payloads = collectedSentinels(saved);
        bool explained = true;
        try {
            UncountedAllocations uncounted; // the explanation is leakgate's work, not the body's
            const scanner::ObjectGraph graph = scanner::ObjectGraph::buildOver(saved);
            collection.cycles = scanner::explainFrameCycles(graph, scanner::Components::find(graph),
                                                            payloads.empty() ? nullptr : &payloads,
                                                            g_watch.madeAtImport);
        } catch (py::error_already_set&) {
            PyErr_Clear();
            explained = false;
        }
        collection.cycles.otherExamples.clear(); // they are freed below
        clearAsTheCollectorDoes(list, g_watch.foreignFirst);
        // Garbage freed unexplained is garbage lost: the collection stays one leakgate did not
        // account for, so the measurement is invalid (invalidity()).
        if (!explained) return;
        g_watch.foreign.push_back(std::move(collection));
    }
    ++g_watch.foreignCaptured;
}

// gc.callbacks(phase, info): names the first collection that leakgate did not start, and while a
// measurement runs has the collector save what such a collection finds, so that it is explained
// rather than lost (DEBUG_SAVEALL from "start" to "stop": the collector reads the flag when it
// deletes the garbage).
PyObject* onCollection(PyObject*, PyObject* args) {
    const char* phase = nullptr;
    PyObject* info = nullptr; // Borrowed reference
    if (!PyArg_ParseTuple(args, "sO", &phase, &info)) return nullptr;
    if (g_watch.own) Py_RETURN_NONE;
    const bool start = std::string_view(phase) == "start";
    long generation = -1; // the one collected ("start"); -1 where the info does not say
    if (start) {
        PyObject* asked = PyDict_Check(info) ? PyDict_GetItemString(info, "generation") : nullptr;
        generation = asked ? PyLong_AsLong(asked) : -1;
        PyErr_Clear();
        g_watch.collectedAt =
            fmt::format("a collection of generation {} from {}",
                        generation >= 0 ? std::to_string(generation) : "?", callerDescription());
    }
    if (!g_watch.explainForeign || !g_watch.measuring || !g_watch.garbage) Py_RETURN_NONE;
    try {
        if (start) {
            g_watch.foreignDebug = python::collector::debugFlags();
            g_watch.foreignFirst = PyList_GET_SIZE(g_watch.garbage);
            python::collector::setDebugFlags(g_watch.foreignDebug | python::GcDebugGuard::kSaveAll);
            g_watch.inForeign = true; // from here, "stop" ends it (collectionEnds included)
            noteLiveSentinels();
            // The listeners read the collector's lists before this collection reorders them (an
            // unknown generation: all of them).
            const int collected = generation < 0 || generation > 2 ? 2 : static_cast<int>(generation);
            for (ForeignCollectionListener* listener : std::vector(g_watch.listeners)) {
                const base::PointerSet* answer = listener->collectionStarts(collected);
                if (!g_watch.madeAtImport) g_watch.madeAtImport = answer;
            }
        } else if (g_watch.inForeign) {
            // With DEBUG_SAVEALL what the collection found goes to gc.garbage: "collected" and
            // "uncollectable" count it (roughly: see explainForeignGarbage).
            PyObject* count = PyDict_Check(info) ? PyDict_GetItemString(info, "collected") : nullptr;
            PyObject* more = PyDict_Check(info) ? PyDict_GetItemString(info, "uncollectable") : nullptr;
            Py_ssize_t collected = count ? PyLong_AsSsize_t(count) : -1;
            if (collected >= 0 && more) collected += PyLong_AsSsize_t(more);
            PyErr_Clear();
            explainForeignGarbage(collected);
        }
    } catch (py::error_already_set&) {
        PyErr_Clear();
    }
    Py_RETURN_NONE;
}

PyMethodDef g_enableDef = {"enable", guardedEnable, METH_NOARGS,
                           "gc.enable, watched by leakgate: enabling gc invalidates the measurement."};
PyMethodDef g_callbackDef = {"leakgate_gc_watch", onCollection, METH_VARARGS,
                             "leakgate's gc.callbacks hook: names collections it did not start."};

// What makes the measurement invalid now; empty when nothing does. `debugFlags`: also compare
// the debug flags (not while leakgate's own DEBUG_SAVEALL read is in progress).
std::string invalidity(bool debugFlags) {
    // Every answer here comes from the functions taken before the code under test ran. One of
    // them replaced in the gc module means the code under test meant to change what leakgate sees
    // (an empty gc.get_objects(), a gc.set_debug that does nothing): named below, after what
    // the collector itself shows (a re-enabled collector, a collection not explained).
    bool enabled = collector::enabled();
    collector::disable();
    if (enabled || !g_watch.enabledAt.empty()) {
        std::string where =
            g_watch.enabledAt.empty() ? "" : fmt::format(" (gc.enable() at {})", g_watch.enabledAt);
        return fmt::format(
            "the workload re-enabled the cyclic GC{}; collections it allowed may have freed "
            "what leakgate measures, so the measurement is invalid",
            where);
    }
    // Collections the program started whose garbage was saved and explained lose nothing.
    const long long foreign = collectionsSoFar() - g_watch.collectionsAtStart - g_watch.ownCollections -
                              g_watch.foreignCaptured;
    if (foreign > 0) {
        std::string who = g_watch.collectedAt.empty()
                              ? "who started it is unknown: gc.callbacks was changed"
                              : "the first: " + g_watch.collectedAt;
        return fmt::format("{} collection{} that leakgate did not start ran ({}); what {} freed is not "
                           "measured, so the measurement is invalid",
                           foreign, foreign == 1 ? "" : "s", who, foreign == 1 ? "it" : "they");
    }
    if (std::string replaced = collector::tampering(); !replaced.empty()) {
        return fmt::format(
            "the code under test replaced the collector's API ({}), so the measurement is "
            "invalid",
            replaced);
    }
    const long long frozen = collector::frozen();
    if (frozen != g_watch.frozenAtStart) {
        return fmt::format(
            "gc.freeze() moved {} objects out of the collector's reach, so the measurement "
            "is invalid",
            frozen - g_watch.frozenAtStart);
    }
    if (!collector::threshold().equal(py::handle(g_watch.threshold))) {
        return fmt::format("the code under test changed gc.set_threshold() to {}, so the measurement is "
                           "invalid",
                           python::textOf(collector::threshold()));
    }
    if (debugFlags && collector::debugFlags() != 0) {
        return fmt::format("the code under test set gc.set_debug({}), so the measurement is invalid",
                           collector::debugFlags());
    }
    return "";
}

void restartCollectionCount() {
    g_watch.collectedAt.clear();
    g_watch.foreignCaptured = 0;
    g_watch.foreign.clear();
    g_watch.ownCollections = 0;
    g_watch.collectionsAtStart = collectionsSoFar();
}

class GcGuardProbe final : public Probe {
  public:
    std::string_view name() const override { return "gc-guard"; }
    bool decidesCheck() const override { return false; }

    // A collection before the measurement began frees nothing it counts: the measurement's own
    // first collection (Measurement::begin) takes all that was garbage then. So collections are
    // counted from here, and a DSL that collects while it compiles outside the measured code
    // (torch's Dynamo runs gc.collect(1) after every compile) leaves the measurement valid. A
    // gc.enable() at any time since the watch started still invalidates it.
    void before() override {
        restartCollectionCount();
        g_watch.measuring = true;
    }
    void afterReturn(WorkloadResult& result) override {
        g_watch.measuring = false; // from here, only leakgate's own reads collect
        check(result, true);
    }
    void inGarbage(std::span<PyObject* const>, WorkloadResult& result) override { check(result, false); }
    void afterCollection(WorkloadResult& result) override { check(result, true); }

  private:
    static void check(WorkloadResult& result, bool debugFlags) {
        std::string problem = invalidity(debugFlags);
        if (!problem.empty()) result.error = WorkloadError{std::move(problem), std::nullopt, ""};
    }
};

} // namespace

void watchGc() {
    collector::capture();
    // The standard library's directories, which explaining a collection of the program's reads:
    // read now, so that sysconfig fills its cache of variables before the program runs, not as
    // growth of the program's (held-growth).
    (void)scanner::isStandardLibraryFile("");
    py::module_ gc = collector::module();
    collector::disable();
    g_watch.enabledAt.clear();
    g_watch.collectedAt.clear();
    if (g_watch.originalEnable == nullptr) {
        g_watch.originalEnable = gc.attr("enable").ptr();
        Py_INCREF(g_watch.originalEnable);
        auto watched = py::reinterpret_steal<py::object>(PyCFunction_New(&g_enableDef, nullptr));
        if (!watched) throw py::error_already_set();
        gc.attr("enable") = watched;
        collector::ownReplacement("enable", watched);
        g_watch.callback = PyCFunction_New(&g_callbackDef, nullptr);
        if (!g_watch.callback) throw py::error_already_set();
        collector::callbacks().append(py::handle(g_watch.callback));
        g_watch.garbage = collector::garbage().ptr();
        Py_INCREF(g_watch.garbage);
    }
    Py_XDECREF(g_watch.threshold);
    g_watch.threshold = collector::threshold().release().ptr();
    g_watch.frozenAtStart = collector::frozen();
    g_watch.ownCollections = 0;
    g_watch.collectionsAtStart = collectionsSoFar();
}

void collect(int generation) {
    // Only our own hook runs during our collections: a hook of the code under test could empty
    // gc.garbage before a read sees it.
    py::list callbacks = collector::callbacks();
    auto saved = py::reinterpret_steal<py::list>(PySequence_List(callbacks.ptr())); // a copy
    if (!saved) throw py::error_already_set();
    callbacks.attr("clear")();
    if (g_watch.callback) callbacks.append(py::handle(g_watch.callback));
    g_watch.own = true;
    struct Restore {
        py::list& callbacks;
        py::list& saved;
        ~Restore() {
            g_watch.own = false;
            python::SavedException pending; // may run while an exception propagates
            callbacks.attr("clear")();
            callbacks.attr("extend")(saved);
            PyErr_Clear();
        }
    } restore{callbacks, saved};
    collector::collect(generation);
    ++g_watch.ownCollections;
}

bool explainForeignCollections(bool on) {
    return std::exchange(g_watch.explainForeign, on);
}

void listenToForeignCollections(ForeignCollectionListener* listener) {
    if (std::find(g_watch.listeners.begin(), g_watch.listeners.end(), listener) ==
        g_watch.listeners.end())
        g_watch.listeners.push_back(listener);
}

void stopListeningToForeignCollections(ForeignCollectionListener* listener) {
    std::erase(g_watch.listeners, listener);
}

const std::vector<ForeignCollection>& foreignCollections() {
    return g_watch.foreign;
}

std::vector<ForeignCollection> takeForeignCollections() {
    return std::exchange(g_watch.foreign, {});
}

void putBackForeignCollections(std::vector<ForeignCollection> earlier) {
    g_watch.foreign.insert(g_watch.foreign.begin(), std::make_move_iterator(earlier.begin()),
                           std::make_move_iterator(earlier.end()));
}

py::list collectorGarbage() {
    if (!g_watch.garbage) return collector::garbage();
    return py::reinterpret_borrow<py::list>(g_watch.garbage);
}

std::unique_ptr<Probe> makeGcGuardProbe() {
    return std::make_unique<GcGuardProbe>();
}

} // namespace leakgate::probes
