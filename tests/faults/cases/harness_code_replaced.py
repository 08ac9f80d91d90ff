# fault: a target swaps, at import, the code of the harness function that places the workload's sentinels, leaving the function object in place (issue 42, item 2)
# run: gate --target {script} --checks decorate
# exit: 3
# text: leakgate's harness was changed under it: the code, defaults or closure of `_leakgate_harness._hold`
# text: ERROR decorate-sentinels
import sys


def _hold(depth, label, nbytes, action, level=1):
    return action()


harness = sys.modules.get("_leakgate_harness")
if harness is not None:
    harness._hold.__code__ = _hold.__code__


def kernel(fn):
    frame = sys._getframe()  # the leak the sentinels would have shown
    return fn


jit = kernel
