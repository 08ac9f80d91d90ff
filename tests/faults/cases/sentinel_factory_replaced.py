# fault: a target replaces, at import, `_leakgate.sentinel` with a factory of objects that die at once, so that every sentinel reads freed (issue 42, item 2)
# run: gate --target {script} --checks decorate
# exit: 3
# text: leakgate's harness was changed under it: `_leakgate.sentinel` was replaced
# text: ERROR decorate-sentinels
import sys

import _leakgate


class _Gone:
    pass


_leakgate.sentinel = lambda label, nbytes: _Gone()


def kernel(fn):
    frame = sys._getframe()  # the leak the sentinels would have shown
    return fn


jit = kernel
