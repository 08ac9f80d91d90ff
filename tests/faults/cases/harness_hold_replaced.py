# fault: a target replaces, at import, the harness function that places the workload's sentinels (issue 42, item 2)
# run: gate --target {script} --checks decorate
# exit: 3
# text: leakgate's harness was changed under it
# text: ERROR decorate-sentinels
import sys

harness = sys.modules.get("_leakgate_harness")
if harness is not None:
    harness._hold = lambda depth, label, nbytes, action, level=1: action()


def kernel(fn):
    frame = sys._getframe()  # the leak the sentinels would have shown
    return fn
