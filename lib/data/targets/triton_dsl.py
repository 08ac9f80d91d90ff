"""leakgate target: Triton (`triton.jit`), the PyPI package `triton`.

`triton.jit` is both of the protocol's decorators, bare and with options (`debug`, which it reads).
It reads the decorated function's source, which the harness's kernels file provides. Triton has no
scalar types of its own, so the packer's workloads (launch, values, soak, device) skip.

The real launch (`launch_cases`): kernels compiled by Triton on first launch and called as a loop
calls them: one that takes an Int32 and a Float32 only, and one that stores their sum into a
torch tensor made once (as a training loop's output buffer is). CUDA only: Triton's interpreter
mode (TRITON_INTERPRET=1) is not the compiled launch path.
"""

import triton
import triton.language as tl

TARGET_NAME = "triton"
TARGET_PACKAGE = "triton"

kernel = triton.jit
jit = triton.jit
kernel_options = {"debug": False}
jit_options = {"debug": False}

launch_devices = ("cuda",)


@triton.jit
def leakgate_scalars(a, b):
    pass


@triton.jit
def leakgate_add(out_ptr, a, b):
    tl.store(out_ptr, a + b)


def launch_cases(device):
    import torch

    out = torch.empty(1, dtype=torch.float32, device="cuda")

    def scalars(a, b):
        leakgate_scalars[(1,)](a, b)

    def add(a, b):
        leakgate_add[(1,)](out, a, b)

    return {
        "leakgate_scalars[(1,)](Int32, Float32) with Python scalars": {
            "launch": scalars, "arguments": lambda: (7, 1.5)},
        "leakgate_add[(1,)](tensor, Int32, Float32) with Python scalars": {
            "launch": add, "arguments": lambda: (7, 1.5)},
    }
