"""A Python probe plug-in for `leakgate gate --probe`: does the DSL let go of the functions it
decorates?

A DSL that keeps one object per decorated function (a kernel cache with no eviction, a registry
keyed by the function) grows with every decoration, and no frame is involved, so the gate's
frame and sentinel checks cannot see it. This probe decorates DECORATIONS fresh functions with
the target's `kernel` (or `jit`) decorator, drops everything it got back, and after the full
collection of the third read counts the functions that are still alive. A DSL that frees them
passes; one that keeps any fails, with the count as the check's amount (so a baseline run of
the gate, or the reference in the same run, judges it).

    leakgate gate --target my_dsl_target.py --probe examples/probes/decorated_functions_freed.py

The hooks leakgate calls (each optional): workload(target) between before() and the three
reads, then after_return(), in_garbage(garbage) and after_collection(). A hook returns None, a
dict {check, status, reason, amount} or a list of them; CHECKS names the checks it decides.
"""
import weakref

CHECKS = ["decorated-functions-freed"]
DECORATIONS = 200

_functions = []  # weak references to the functions the workload decorated


def _fresh_function(index):
    def probe_kernel():
        pass

    probe_kernel.__name__ = probe_kernel.__qualname__ = f"probe_kernel_{index}"
    return probe_kernel


def workload(target):
    decorate = getattr(target, "kernel", None) or getattr(target, "jit")
    for index in range(DECORATIONS):
        function = _fresh_function(index)
        _functions.append(weakref.ref(function))
        decorate(function)  # what it returns is dropped at once, as is the function


def after_collection():
    alive = sum(1 for ref in _functions if ref() is not None)
    if alive == 0:
        return {"status": "pass", "amount": 0,
                "reason": f"all {DECORATIONS} decorated functions freed"}
    return {"status": "fail", "amount": alive,
            "reason": f"{alive} of {DECORATIONS} decorated functions still alive after a full "
                      "collection: the DSL keeps one per decoration (a cache or registry that "
                      "never lets go)"}
