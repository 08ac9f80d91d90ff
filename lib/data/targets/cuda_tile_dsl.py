"""leakgate target: cuTile (`cuda.tile.kernel`, `cuda.tile.function`), the PyPI package `cuda-tile`.

`ct.kernel` is a class whose instances are the kernels; it is used bare and with options
(`opt_level`, which every release from 1.0.0 reads). `ct.function` marks a tile function, bare
and with options (`host=False`, its default). Importing cuTile and decorating need no GPU and no
compiler: a kernel is compiled (by `tileiras`, from the `cuda-tile[tileiras]` extra or a CUDA
toolkit 13.1 or later) on its first launch. cuTile has no scalar types with `__c_pointers__`, so
the packer's workloads skip.

The real launch: a kernel that stores an int32 plus a float32 into a one-element torch tensor made
once, launched with `ct.launch` on torch's current stream as a loop launches it, with Python
scalars (cuTile has no scalar objects of its own, and 1.7.0's `ct.launch` refuses numpy scalars:
"Invalid kernel argument #1: Objects of type 'numpy.int32' are not supported", seen on an H100).
CUDA only: cuTile has no CPU backend.
"""

import cuda.tile as ct

TARGET_NAME = "cuda-tile"
TARGET_PACKAGE = "cuda-tile"

decorators = {
    "kernel": {"decorator": ct.kernel, "forms": ["bare", "options"], "options": {"opt_level": 3}},
    "function": {"decorator": ct.function, "forms": ["bare", "options"], "options": {"host": False}},
}

launch_devices = ("cuda",)


@ct.kernel
def leakgate_add(out, a, b):
    ct.store(out, index=(0,), tile=ct.full((1,), a, dtype=ct.float32) + b)


def launch_cases(device):
    import torch

    out = torch.zeros(1, dtype=torch.float32, device="cuda")
    stream = torch.cuda.current_stream()

    def launch(a, b):
        ct.launch(stream, (1,), leakgate_add, (out, a, b))
        stream.synchronize()

    # Compile here (tileiras, on the first launch of each argument signature), before any measurement.
    launch(7, 1.5)
    return {
        "ct.launch(add, Int32, Float32) with Python scalars": {"launch": launch, "arguments": lambda: (7, 1.5)},
    }
