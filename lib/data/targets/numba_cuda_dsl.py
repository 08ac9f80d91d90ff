"""leakgate target: numba-cuda (`numba.cuda.jit`), the PyPI package `numba-cuda`.

`numba.cuda.jit` is both of the protocol's kernel decorators, bare and with options (`fastmath`,
which it reads), and a device-function decorator with `device=True`. Decorating compiles
nothing (a dispatcher compiles at its first launch), so it needs no GPU. numba has no scalar types
with `__c_pointers__`, so the packer's workloads skip.

The real launch: a kernel that stores an int32 plus a float32 into a one-element device array
made once, launched as `kernel[1, 1](out, a, b)` in a loop, with Python scalars and with fresh
numpy scalars. CUDA only: numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1) is not the compiled
launch path.
"""

import numpy as np
from numba import cuda

TARGET_NAME = "numba-cuda"
TARGET_PACKAGE = "numba-cuda"

decorators = {
    "kernel": {"decorator": cuda.jit, "forms": ["bare", "options"], "options": {"fastmath": False}},
    "device": {"decorator": cuda.jit, "forms": ["options"], "options": {"device": True}},
}

launch_devices = ("cuda",)


def launch_cases(device):
    @cuda.jit
    def leakgate_add(out, a, b):
        out[0] = a + b

    out = cuda.device_array(1, dtype=np.float32)

    def launch(a, b):
        leakgate_add[1, 1](out, a, b)
        cuda.synchronize()

    return {
        "kernel[1, 1](array, Int32, Float32) with Python scalars": {"launch": launch, "arguments": lambda: (7, 1.5)},
        "kernel[1, 1](array, Int32, Float32) with numpy scalars": {
            "launch": launch, "arguments": lambda: (np.int32(7), np.float32(1.5))},
    }
