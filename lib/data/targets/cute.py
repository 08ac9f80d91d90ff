"""leakgate target: nvidia-cutlass-dsl, the CuTe DSL (`cutlass.cute`).

Verified without a GPU against nvidia-cutlass-dsl 4.4.2 and 4.6.1 (PyPI wheels) on CPython 3.10.13,
3.11.7, 3.12.1 and 3.13.0. Importing it and decorating need no GPU, driver or MLIR context. On 4.6.1
`cute.kernel` keeps its own frame in a cycle (local `current_frame` of `CuTeDSL.kernel`); `cute.jit`
(`CuTeDSL.jit`) does not. On 4.4.2 neither does. Scalar packing builds `ctypes.cast(ctypes.pointer(...))`
on every call in both versions.

Both decorators take `preprocess` (bool) in either version, and 4.6.1 also takes `is_experimental`.
Any other keyword is accepted and ignored at decoration time, so the options here are ones the DSL
reads. The scalar types are those of the 14 launch type names that `cutlass` defines with their own
`__c_pointers__`, so no type that falls back on `Numeric.__c_pointers__` (which raises) is included.
Nothing is packed at import time.

The real launch (`launch_cases`): one kernel with an `Int32` and a `Float32` parameter, compiled with
`cute.compile` through a `cute.jit` host function, called as a user's loop calls it: with fresh
`cutlass.Int32`/`cutlass.Float32` objects, and with plain Python scalars. Compiling needs no GPU;
launching needs CUDA, so the cases run on CUDA only.
"""

import cutlass
import cutlass.cute as cute

TARGET_NAME = "cute"
TARGET_PACKAGE = "nvidia-cutlass-dsl"

kernel = cute.kernel
jit = cute.jit
kernel_options = {"preprocess": False}
jit_options = {"preprocess": False}

_SCALAR_NAMES = ("Int8", "Int16", "Int32", "Int64", "Uint8", "Uint16", "Uint32", "Uint64",
                 "Boolean", "Float16", "BFloat16", "TFloat32", "Float32", "Float64")

scalar_types = {name: getattr(cutlass, name) for name in _SCALAR_NAMES
                if "__c_pointers__" in vars(getattr(cutlass, name, object))}

launch_devices = ("cuda",)


def launch_cases(device):
    @cute.kernel
    def leakgate_add_kernel(a: cutlass.Int32, b: cutlass.Float32):
        pass

    @cute.jit
    def leakgate_add(a: cutlass.Int32, b: cutlass.Float32):
        leakgate_add_kernel(a, b).launch(grid=(1, 1, 1), block=(1, 1, 1))

    compiled = cute.compile(leakgate_add, cutlass.Int32(1), cutlass.Float32(1.0))
    return {
        "compiled(Int32, Float32) with cutlass scalars": {
            "launch": compiled, "arguments": lambda: (cutlass.Int32(7), cutlass.Float32(1.5))},
        "compiled(Int32, Float32) with Python scalars": {
            "launch": compiled, "arguments": lambda: (7, 1.5)},
    }
