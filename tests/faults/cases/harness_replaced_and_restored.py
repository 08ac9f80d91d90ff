# fault: a target's decorator replaces the harness function that holds the decorating frames' sentinels while the workload runs, and puts it back before the reads (issue 42, item 2: changes made and undone within the workload)
# python: >=3.12
# run: gate --target {script} --checks decorate
# exit: 3
# text: leakgate's harness was changed under it: `_leakgate_harness._hold` was replaced by the code under test (at
# text: while the workload ran
# text: ERROR decorate-sentinels
import sys


def kernel(fn):
    harness = sys.modules.get("_leakgate_harness")
    if harness is not None:
        kept = harness._hold
        harness._hold = lambda *args, **kwargs: None
        harness._hold = kept
    frame = sys._getframe()  # the leak the sentinels would have shown
    return fn


jit = kernel
