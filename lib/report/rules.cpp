#include "lib/report/rules.h"

namespace leakgate {
namespace {

constexpr Rule kRules[] = {
    {"frame-cycle", Evidence::kObjectGraph, "FrameCycle",
     "A frame sits in a reference cycle: it and every frame it pins through f_back stay alive until the "
     "cyclic garbage collector runs, which never happens under gc.disable().",
     "Keep no frame object in a local, a closure cell or an attribute reachable from the frame itself: "
     "capture the source location (file, line, function) eagerly instead, read the fields of "
     "sys._getframe(1) in one expression, or `del` the variable in a `finally`. Do not keep an "
     "exception "
     "or traceback past its handler: keep traceback.TracebackException or formatted text."},
    {"retained-frame", Evidence::kObjectGraph, "RetainedFrame",
     "A frame outlived its call after a full collection: a live object (a module attribute, a registry, "
     "a function attribute) keeps it and everything it references.",
     "Do not store frame objects on long-lived objects: capture the source location (file, line, "
     "function) eagerly and store that instead."},
    {"launch-allocations", Evidence::kLaunchLoop, "LaunchAllocations",
     "Each launch allocates more per scalar argument than the reference runtime.",
     "Pack each immutable scalar once: cache the packed result keyed by type and exact bit pattern "
     "(bounded), and hand out results the caller cannot corrupt."},
    {"launch-net-blocks", Evidence::kLaunchLoop, "LaunchNetBlocks",
     "Each launch keeps memory blocks that the reference runtime frees: memory grows with every launch.",
     "Whatever each call keeps must be bounded: free it by reference counting or cap the cache."},
    {"launch-cyclic-garbage", Evidence::kLaunchLoop, "LaunchCyclicGarbage",
     "Each launch leaves reference cycles: with gc disabled each one is a leak.",
     "Do not leave reference cycles per launch (ctypes.cast and pointer() keep their sources in "
     "_objects); build the argument without a cycle, or break it before returning."},
    {"decorations-cyclic-garbage", Evidence::kLaunchLoop, "DecorationsCyclicGarbage",
     "Each decorated function, once dropped, leaves reference cycles: under gc.disable() it and "
     "what it holds are never freed.",
     "Leave no cycle between the decorator's wrapper, its closure and the function (attributes, "
     "cells, frames); or break it when the function goes."},
    {"decorations-retained", Evidence::kLaunchLoop, "DecorationsRetained",
     "Each decorated function keeps objects alive after it is dropped and after a full collection: a "
     "cache or registry grows with every decorated function.",
     "Key per-function caches weakly (weakref.WeakKeyDictionary, or weakref.finalize to drop the "
     "entry) or bound them."},
    {"launch-real-net-blocks", Evidence::kLaunchLoop, "LaunchRealNetBlocks",
     "Each launch of a kernel the DSL compiled keeps memory blocks that the reference launch frees: "
     "under gc.disable() memory grows with every launch.",
     "Leave nothing per launch: build the argument pointers without a reference cycle and reuse what "
     "depends only on the kernel and the argument types."},
    {"launch-real-cyclic-garbage", Evidence::kLaunchLoop, "LaunchRealCyclicGarbage",
     "Each launch of a kernel the DSL compiled leaves reference cycles: with gc disabled each one is a "
     "leak.",
     "Build the launch's argument pointers without ctypes.cast (CPython bpo-12836), which ties the "
     "pointer and its source into a cycle."},
    {"launch-real-retained", Evidence::kLaunchLoop, "LaunchRealRetained",
     "Each launch of a kernel the DSL compiled keeps objects that even a full collection does not free: "
     "a cache or registry grows with every launch.",
     "Key caches by what stays the same from launch to launch (the kernel, the argument types), not by "
     "a per-call object or its id, and bound them."},
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

} // namespace leakgate
