# fault: a sitecustomize takes every dict watcher CPython has before leakgate's harness loads (issue 42: the seal could not see a change put back before the reads, as harness_code_swapped_and_restored makes); the same file is the gate's target
# name: sitecustomize.py
# env: PYTHONPATH={dir}
# python: >=3.12
# run: gate --target {script} --checks decorate
# exit: 3
# text: CPython gave it no dict watcher
# text: ERROR decorate-sentinels
import ctypes
import sys

if __name__ == "sitecustomize":  # at the interpreter's start, before leakgate's harness loads
    Callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.py_object, ctypes.py_object,
                                ctypes.py_object)
    _kept = Callback(lambda *_: 0)
    add_watcher = ctypes.pythonapi.PyDict_AddWatcher
    add_watcher.argtypes, add_watcher.restype = [Callback], ctypes.c_int
    try:
        while add_watcher(_kept) >= 0:
            pass
    except RuntimeError:  # "no more dict watcher IDs available": all taken
        pass


def _other(depth, label, nbytes, action, level=1):
    return action()


def kernel(fn):  # as harness_code_swapped_and_restored: a change undone before the reads
    harness = sys.modules.get("_leakgate_harness")
    if harness is not None:
        kept = harness._hold.__code__
        harness._hold.__code__ = _other.__code__
        harness._hold.__code__ = kept
    frame = sys._getframe()  # the leak the sentinels would have shown
    return fn


jit = kernel
