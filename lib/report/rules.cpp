#include "lib/report/rules.h"

namespace leakgate::report {
namespace {

constexpr Rule kRules[] = {
    {"frame-cycle", Evidence::kObjectGraph, "FrameCycle",
     "A frame sits in a reference cycle that only the cyclic collector frees.",
     "A frame sits in a reference cycle: it and every frame it pins through f_back stay alive until the "
     "cyclic garbage collector runs, which never happens under gc.disable().",
     "Keep no frame object in a local, a closure cell or an attribute reachable from the frame itself: "
     "capture the source location (file, line, function) eagerly instead, read the fields of "
     "sys._getframe(1) in one expression, or `del` the variable in a `finally`. Do not keep an "
     "exception "
     "or traceback past its handler: keep traceback.TracebackException or formatted text.",
     "frame-cycle"},
    {"retained-frame", Evidence::kObjectGraph, "RetainedFrame",
     "A frame outlived its call: a live object keeps it after a full collection.",
     "A frame outlived its call after a full collection: a live object (a module attribute, a registry, "
     "a function attribute) keeps it and everything it references.",
     "Do not store frame objects on long-lived objects: capture the source location (file, line, "
     "function) eagerly and store that instead.",
     "retained-frame"},
    {"cyclic-garbage", Evidence::kLaunchLoop, "CyclicGarbage",
     "The program leaves one shape of reference cycle many times, or cycles that pin much memory.",
     "The program leaves reference cycles without a frame in them (ctypes pointers and their sources, "
     "objects that refer to themselves) many times over, or cycles that hold much memory: under "
     "gc.disable() none of it is ever freed, and memory grows with every call that makes one.",
     "Make the back reference weak (weakref), break the cycle when the objects are done with, or build "
     "the object without one (ctypes: no cast() or pointer() per call).",
     "cyclic-garbage"},
    {"held-growth", Evidence::kObjectGraph, "HeldGrowth",
     "A container a library holds grew with the program's work: a cache that never evicts, a registry.",
     "A container that a library keeps for the life of the process (a module-level dict or list, a "
     "functools.lru_cache, a class's registry) gained many entries while the program's own code ran, "
     "not while modules were imported: nothing there is garbage, so no collection frees it, and it "
     "grows "
     "for as long as the program does the same work.",
     "Bound the container (a fixed-size LRU), hold its entries weakly (weakref.WeakValueDictionary, "
     "WeakSet), key a cache by something that does not own the objects, or remove an entry when its "
     "object is done with.",
     "held-growth"},
    {"launch-allocations", Evidence::kLaunchLoop, "LaunchAllocations",
     "A launch allocates more per scalar argument than the reference runtime.",
     "Each launch allocates more per scalar argument than the reference runtime: the packing of a "
     "scalar creates objects that a bounded cache or a direct conversion would not.",
     "Pack each immutable scalar once: cache the packed result keyed by type and exact bit pattern "
     "(bounded), and hand out results the caller cannot corrupt.",
     "launch-allocations"},
    {"launch-net-blocks", Evidence::kLaunchLoop, "LaunchNetBlocks",
     "A launch keeps memory blocks that the reference runtime frees.",
     "Each launch keeps memory blocks that the reference runtime frees: memory grows with every launch.",
     "Whatever each call keeps must be bounded: free it by reference counting or cap the cache.",
     "launch-net-blocks"},
    {"launch-cyclic-garbage", Evidence::kLaunchLoop, "LaunchCyclicGarbage",
     "A launch leaves reference cycles, a leak under gc.disable().",
     "Each launch leaves reference cycles: with gc disabled each one is a leak.",
     "Do not leave reference cycles per launch (ctypes.cast and pointer() keep their sources in "
     "_objects); build the argument without a cycle, or break it before returning.",
     "launch-cyclic-garbage"},
    {"decorations-cyclic-garbage", Evidence::kLaunchLoop, "DecorationsCyclicGarbage",
     "A dropped decorated function leaves reference cycles.",
     "Each decorated function, once dropped, leaves reference cycles: under gc.disable() it and "
     "what it holds are never freed.",
     "Leave no cycle between the decorator's wrapper, its closure and the function (attributes, "
     "cells, frames); or break it when the function goes.",
     "decorations-cyclic-garbage"},
    {"decorations-retained", Evidence::kLaunchLoop, "DecorationsRetained",
     "A dropped decorated function keeps objects alive after a full collection.",
     "Each decorated function keeps objects alive after it is dropped and after a full collection: a "
     "cache or registry grows with every decorated function.",
     "Key per-function caches weakly (weakref.WeakKeyDictionary, or weakref.finalize to drop the "
     "entry) or bound them.",
     "decorations-retained"},
    {"launch-real-net-blocks", Evidence::kLaunchLoop, "LaunchRealNetBlocks",
     "A launch of a DSL-compiled kernel keeps memory blocks that the reference launch frees.",
     "Each launch of a kernel the DSL compiled keeps memory blocks that the reference launch frees: "
     "under gc.disable() memory grows with every launch.",
     "Leave nothing per launch: build the argument pointers without a reference cycle and reuse what "
     "depends only on the kernel and the argument types.",
     "launch-real-net-blocks"},
    {"launch-real-cyclic-garbage", Evidence::kLaunchLoop, "LaunchRealCyclicGarbage",
     "A launch of a DSL-compiled kernel leaves reference cycles.",
     "Each launch of a kernel the DSL compiled leaves reference cycles: with gc disabled each one is a "
     "leak.",
     "Build the launch's argument pointers without ctypes.cast (CPython bpo-12836), which ties the "
     "pointer and its source into a cycle.",
     "launch-real-cyclic-garbage"},
    {"launch-real-retained", Evidence::kLaunchLoop, "LaunchRealRetained",
     "A launch of a DSL-compiled kernel keeps objects a full collection does not free.",
     "Each launch of a kernel the DSL compiled keeps objects that even a full collection does not free: "
     "a cache or registry grows with every launch.",
     "Key caches by what stays the same from launch to launch (the kernel, the argument types), not by "
     "a per-call object or its id, and bound them.",
     "launch-real-retained"},
    {"lint:own-frame-local", Evidence::kSource, "OwnFrameLocal",
     "A local holds the function's own frame when the function returns.",
     "A local still names the function's own frame (inspect.currentframe(), sys._getframe(), a "
     "caught exception or its traceback) when the function returns: the frame reaches itself through "
     "its locals, a reference cycle that keeps it, every caller's frame and their locals alive until "
     "the cyclic collector runs.",
     "Take what you need in one expression (`sys._getframe(1)` for the caller, the file, line and "
     "function captured eagerly); if a local must name the frame, `del` it in a `finally:` that every "
     "path runs.",
     "lint:own-frame-local", "warning"},
    {"lint:frame-stored", Evidence::kSource, "FrameStored",
     "A frame, traceback or caught exception is stored beyond the call.",
     "A frame, traceback or caught exception is stored on an attribute, into a container, into a "
     "global or in a closure that can outlive the call: the store keeps the frame's f_back chain, "
     "every caller's frame and all their locals alive as long as it lives.",
     "Store what you need instead of the frame: the source location captured eagerly, a "
     "traceback.FrameSummary, or for an exception traceback.TracebackException or its text.",
     "lint:frame-stored", "warning"},
    {"lint:closure-cycle", Evidence::kSource, "ClosureCycle",
     "A nested function is in a reference cycle through its closure.",
     "A nested function refers to itself through its enclosing function's closure cell (a recursive "
     "closure), or is stored into an object that it captures (a callback on `self` that reads "
     "`self`): the function, its cells and the object form a reference cycle that keeps them and "
     "every variable the function captures alive until the cyclic collector runs.",
     "Pass the recursive function to itself as a parameter, use a loop or a module-level function, "
     "or unbind its name (`walk = None`) in a `finally:`; for a callback, capture "
     "`weakref.ref(self)` instead of `self`, or pass the object when the callback is called.",
     "lint:closure-cycle", "warning"},
    {"lint:frame-stored-static", Evidence::kSource, "FrameStoredStatic",
     "C/C++: a frame is stored in a static or global variable.",
     "A frame (PyEval_GetFrame(), PyThreadState_GetFrame(), PyFrame_GetBack(), or a call of "
     "inspect.currentframe / sys._getframe through the C API, pybind11 or nanobind) is stored in a "
     "static or global variable: borrowed, the pointer dangles; with a reference, it pins the frame "
     "and every caller's frame for the life of the process.",
     "Keep the source location (PyFrame_GetLineNumber, the code object's file and name) instead of the "
     "frame, or release the reference before the function returns.",
     "lint:frame-stored-static", "warning"},
    {"lint:frame-stored-member", Evidence::kSource, "FrameStoredMember",
     "C/C++: a frame is stored in a class or struct member.",
     "A frame is stored in a class or struct member: borrowed, the pointer dangles once the frame "
     "returns; with a reference, it keeps the frame and every caller's frame alive as long as the "
     "object lives.",
     "Keep the source location instead of the frame, or release the reference when the member is "
     "replaced and when the object is destroyed.",
     "lint:frame-stored-member", "warning"},
    {"lint:frame-ref-leaked", Evidence::kSource, "FrameRefLeaked",
     "C/C++: a new reference to a frame is not released on some path.",
     "A new reference to a frame is held in a local that some path out of the function neither "
     "releases nor hands on: the frame, its locals and every caller's frame are never freed.",
     "Release it on every path before the function returns (Py_DECREF, Py_XDECREF, Py_CLEAR), "
     "typically at a single `done:` label that every path reaches.",
     "lint:frame-ref-leaked", "warning"},
};

} // namespace

std::span<const Rule> findingRules() {
    return kRules;
}

const Rule* findRule(std::string_view kind) {
    for (const Rule& rule : kRules) {
        if (kind == rule.kind) return &rule;
    }
    return nullptr;
}

Evidence evidenceOf(std::string_view kind) {
    if (const Rule* rule = findRule(kind)) return rule->evidence;
    // The launch loops name every figure they judge launch-<figure>; lint names its rules lint:<rule>.
    if (kind.starts_with("launch-")) return Evidence::kLaunchLoop;
    if (kind.starts_with("lint:")) return Evidence::kSource;
    return Evidence::kPlugin;
}

} // namespace leakgate::report
