# fault: the script re-enables the collector through the C API and fakes gc.isenabled (issue 42, item 1)
# run: scan -- {script}
# exit: 3
# text: re-enabled the cyclic GC
import ctypes
import gc
import sys

ctypes.pythonapi.PyGC_Enable()
gc.isenabled = lambda: False


def keep():
    frame = sys._getframe()
    return frame


for _ in range(1000):
    keep()
