"""leakgate target: Taichi (`ti.kernel`, `ti.func`, `ti.data_oriented`), the PyPI package `taichi`.

Taichi's decorators do not fit `kernel`/`jit` bare and with options, so the target declares them:
`ti.kernel` and `ti.func` bare (neither has an options form) and `ti.data_oriented`, a class
decorator. Decorating compiles nothing and needs no `ti.init`; a kernel compiles at its first
call, from its source (which the harness's kernels file provides).

The real launch: a kernel of an int32 and a float32 that stores their sum into a one-element field
made once, called in a loop with Python scalars and with fresh numpy scalars. Taichi runs on the
CPU too (its LLVM backend), so the cases run on CUDA where there is a GPU and on the CPU otherwise.
"""

import numpy as np
import taichi as ti

TARGET_NAME = "taichi"
TARGET_PACKAGE = "taichi"

decorators = {
    "kernel": {"decorator": ti.kernel, "forms": ["bare"]},
    "func": {"decorator": ti.func, "forms": ["bare"]},
    "data_oriented": {"decorator": ti.data_oriented, "forms": ["class"]},
}

launch_devices = ("cuda", "cpu")


def launch_cases(device):
    ti.init(arch=ti.cuda if device == "cuda" else ti.cpu, log_level=ti.ERROR)
    out = ti.field(dtype=ti.f32, shape=1)

    @ti.kernel
    def leakgate_add(a: ti.i32, b: ti.f32):
        out[0] = a + b

    def launch(a, b):
        leakgate_add(a, b)
        ti.sync()

    return {
        "kernel(Int32, Float32) with Python scalars": {"launch": launch, "arguments": lambda: (7, 1.5)},
        "kernel(Int32, Float32) with numpy scalars": {
            "launch": launch, "arguments": lambda: (np.int32(7), np.float32(1.5))},
    }
