"""numba-cuda 0.30.4, CUDA simulator: a kernel that raises leaves its caller's frames in a cycle.

Under NUMBA_ENABLE_CUDASIM=1 each simulated thread is a `BlockThread`
(numba/cuda/simulator/kernel.py). When the kernel raises, `BlockThread.run` stores the error and
its traceback in `self.exception`; `BlockManager.run` re-raises it with that traceback and keeps
the thread in its locals (`t`, `threads`). As the error propagates, its traceback gains
`BlockManager.run`'s frame and every frame up to the caller's `except`: error -> traceback ->
frame of `BlockManager.run` -> `t` -> `BlockThread.exception` -> traceback, a reference cycle
through the caller's frame. The caller's locals live until the cyclic GC runs; under
gc.disable() they are never freed.

Plain Python, no leakgate: python numba_cuda_0_30_4_simulator_thread_exception.py
Exit 1 while it reproduces (the launching function's payload survives it, and a collection finds
its frame in cyclic garbage with a `BlockThread`), 0 when clean, 2 on an error. No GPU needed.
"""
import gc
import os
import sys
import weakref

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
gc.disable()

import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402


@cuda.jit
def shift(x):
    i = cuda.grid(1)
    x[i] = x[i + 1]  # the last thread reads past the end: IndexError


class Payload:
    """What the launching function holds: 64 MiB a user would not expect to outlive it."""

    def __init__(self):
        self.data = bytearray(64 << 20)


def step():
    payload = Payload()
    x = np.ones(4)
    try:
        shift[1, 4](x)
    except IndexError as error:
        print(f"kernel failed: {error}")
    return weakref.ref(payload)


payload = step()
alive = payload() is not None  # before any collection: only a cycle can keep it

gc.set_debug(gc.DEBUG_SAVEALL)  # a collection keeps what it finds in gc.garbage
gc.collect()
gc.set_debug(0)
frames = [o for o in gc.garbage if type(o).__name__ == "frame"]
step_frames = sum(1 for f in frames if f.f_code.co_name == "step")
threads = sum(1 for o in gc.garbage if type(o).__name__ == "BlockThread")
del frames
gc.garbage.clear()

print(f"after step() returned: its 64 MiB payload is {'alive' if alive else 'freed'}; one collection "
      f"found {step_frames} frame(s) of step() and {threads} BlockThread(s) in cyclic garbage")
sys.exit(1 if alive and step_frames and threads else 0)
