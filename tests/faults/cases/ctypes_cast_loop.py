# fault: a launch loop leaves a ctypes cycle per call, no frame in any (issue 41, frameless retention)
# run: scan -- {script}
# exit: 1
# text: cyclic-garbage
# text: LP_c_int
import ctypes

for _ in range(10000):
    value = ctypes.c_int(7)
    ctypes.cast(ctypes.pointer(value), ctypes.c_void_p)
