# fault: the target's decorator swaps, at its first call, the code of the kernels-module function that holds the decorating frame's sentinel, so that later decorations place it without holding it (issue 42, item 2)
# run: gate --target {script} --checks decorate
# exit: 3
# text: the code, defaults or closure of `leakgate_kernels.define_kernel`
# text: ERROR decorate-sentinels
import sys

import _leakgate


def _define_kernel(dsl, label, nbytes):
    _leakgate.sentinel(label, nbytes)  # placed, and dropped at once: "freed by reference counting"

    @dsl.kernel
    def leakgate_kernel():
        pass


def kernel(fn):
    kernels = sys.modules.get("leakgate_kernels")
    if kernels is not None and kernels.define_kernel.__code__ is not _define_kernel.__code__:
        kernels.define_kernel.__code__ = _define_kernel.__code__
    frame = sys._getframe()  # the leak the sentinels would have shown
    return fn


jit = kernel
