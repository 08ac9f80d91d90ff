# fault: a target swaps the code of a harness function while the workload runs and swaps it back before the reads (issue 42, item 2: changes made and undone within the workload)
# python: >=3.12
# run: gate --target {script} --checks decorate
# exit: 3
# text: the code, defaults or closure of `_leakgate_harness._hold` were replaced by the code under test (at
# text: while the workload ran
# text: ERROR decorate-sentinels
import sys


def _other(depth, label, nbytes, action, level=1):
    return action()


def kernel(fn):
    harness = sys.modules.get("_leakgate_harness")
    if harness is not None:
        kept = harness._hold.__code__
        harness._hold.__code__ = _other.__code__
        harness._hold.__code__ = kept
    frame = sys._getframe()  # the leak the sentinels would have shown
    return fn


jit = kernel
