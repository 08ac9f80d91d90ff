"""leakgate target: CuPy (`cupy.fuse`; `cupyx.jit.rawkernel` and `cupy.RawKernel` in the real
launch), the PyPI package `cupy-cuda13x` (or `cupy-cuda12x`).

The target declares its decorators (`decorators`, the harness's protocol): `cupy.fuse`, bare and
with options (`kernel_name`, which it reads), and `cupyx.jit.rawkernel`, which has no bare form (it
is always called: `@rawkernel()`), so only its with-options form. Importing CuPy needs no GPU; the
real launch does (CUDA only).

The real launch: a `RawKernel` and a `cupyx.jit.rawkernel` that store an int32 plus a float32
into a device array made once, called with fresh NumPy scalars (CuPy's scalar arguments), and a
fused function called with the array and a Python float.
"""

import cupy
import cupyx.jit
import numpy

TARGET_NAME = "cupy"
TARGET_PACKAGE = ("cupy-cuda13x", "cupy-cuda12x", "cupy")

decorators = {
    "fuse": {"decorator": cupy.fuse, "forms": ["bare", "options"],
             "options": {"kernel_name": "leakgate_fused"}},
    "rawkernel": {"decorator": cupyx.jit.rawkernel, "forms": ["options"]},
}

launch_devices = ("cuda",)

_RAW_SOURCE = r'''
extern "C" __global__ void leakgate_add(float* out, int a, float b) { out[0] = a + b; }
'''


@cupyx.jit.rawkernel()
def leakgate_jit_add(out, a, b):
    out[0] = a + b


@cupy.fuse()
def leakgate_fused_add(x, a):
    return x + a


def launch_cases(device):
    raw = cupy.RawKernel(_RAW_SOURCE, "leakgate_add")
    out = cupy.zeros(1, dtype=cupy.float32)

    def raw_launch(a, b):
        raw((1,), (1,), (out, a, b))

    def jit_launch(a, b):
        leakgate_jit_add((1,), (1,), (out, a, b))

    def fused_launch(a):
        leakgate_fused_add(out, a)

    return {
        "RawKernel(out, int32, float32) with NumPy scalars": {
            "launch": raw_launch, "arguments": lambda: (numpy.int32(7), numpy.float32(1.5))},
        "cupyx.jit.rawkernel(out, int32, float32) with NumPy scalars": {
            "launch": jit_launch, "arguments": lambda: (numpy.int32(7), numpy.float32(1.5))},
        "cupy.fuse(x, a) with a Python float": {"launch": fused_launch, "arguments": lambda: (1.5,)},
    }
